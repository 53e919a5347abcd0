#!/usr/bin/env node
// The soak: a mixed, bounded load on one reprox (embedded engine, memory
// tier, Redis tier) for N minutes, sampled every few seconds, with gates
// checked at the end. Node built-ins only. Started by run.sh, which gives it
// a copy of the binary and a work folder and cleans up after it.
//
//   node benchmarks/soak/soak.js --reprox BIN --work DIR --minutes N [--quick]
//        [--out DIR] [--name NAME] [--sample-s 10] [--pidfile FILE]
//        [--cache-bytes SIZE] [--kv-budget SIZE] [--loops hits,misses,...]
//
// Phases: start Redis and reprox on free loopback ports; warm-up (every
// loop runs briefly, then every client connection is closed); baseline (fds,
// threads); load for N minutes, Redis killed at the middle and restarted
// ~10 s later; idle (no client connection) until fds and threads settle;
// SIGTERM. Writes NAME.csv, NAME.svg and NAME.txt under --out, prints the
// gates as PASS/FAIL lines, and exits 1 when one fails (2 on a set-up
// failure or the hard deadline).
'use strict';
const http = require('node:http');
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const plot = require('./plot.js');

// ---------------------------------------------------------------- options

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const quick = process.argv.includes('--quick');
const MiB = 1048576;
function parseSize(s) {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB)?$/i.exec(String(s).trim());
  if (!m) throw new Error(`bad size: ${s} (e.g. 4MiB)`);
  const unit = (m[2] || 'B').toLowerCase();
  return Math.round(Number(m[1]) * { b: 1, kib: 1024, mib: MiB, gib: 1024 * MiB }[unit]);
}
const opts = {
  reprox: arg('--reprox'),
  work: arg('--work'),
  minutes: Number(arg('--minutes', quick ? 3 : 60)),
  out: arg('--out', path.join(__dirname, 'results')),
  name: arg('--name', ''),
  sampleS: Number(arg('--sample-s', 10)),
  pidfile: arg('--pidfile', ''),
  cacheBytes: parseSize(arg('--cache-bytes', '2MiB')),
  kvBudget: parseSize(arg('--kv-budget', '2MiB')),
  commit: arg('--commit', ''),
  command: arg('--command', ''),
  // A subset of the loops, to find which one a growth comes from.
  loops: arg('--loops', 'hits,misses,streams,aborts,chat,bursty,purge').split(',').filter(Boolean),
};
if (!opts.reprox || !opts.work || !(opts.minutes > 0)) {
  console.error('usage: soak.js --reprox BIN --work DIR --minutes N [--quick] [--out DIR] [--name NAME]');
  process.exit(2);
}

// The plan. Every loop has a fixed number of workers and a pause between
// its requests; each runs under its own API key (tenant).
const PLAN = {
  warmupS: quick ? 45 : 60,
  idleS: 10,               // no load and no client connection before the final count...
  settleS: 30,             // ...then up to this long for fds and threads to come back
  redisDownS: 10,
  purgeEveryS: quick ? 30 : 60,
  burstEveryS: quick ? 15 : 30,
  burstSize: 80,           // the bursty key sends this many requests at once
  requestTimeoutMs: 30000,
  tenant: { max_concurrent: 8, requests_per_second: 50, burst: 50 },
  loops: {
    hits: { workers: 3, pauseMs: 100, key: 'soak-hits' },
    misses: { workers: 2, pauseMs: 400, key: 'soak-misses' },
    streams: { workers: 2, pauseMs: 300, key: 'soak-streams' },
    aborts: { workers: 2, pauseMs: 600, key: 'soak-aborts' },
    chat: { workers: 2, pauseMs: 250, key: 'soak-chat' },
  },
  burstKey: 'soak-bursty',
  maxBatch: 4,
  purgeNamespace: 'soak-purge',
};
const MODEL = 'reprox-tiny-qwen3';
const adminToken = crypto.randomBytes(16).toString('hex');
const hardDeadlineMs = (PLAN.warmupS + opts.minutes * 60 + PLAN.idleS + PLAN.settleS + 180) * 1000;

const startedWall = Date.now();
const mono = () => Number(process.hrtime.bigint()) / 1e6;
const t0 = mono();
const elapsedS = () => (mono() - t0) / 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function log(msg) { console.log(`[${elapsedS().toFixed(1).padStart(7)} s] ${msg}`); }

// ---------------------------------------------------------------- children

const children = new Set();
function track(child) {
  children.add(child);
  if (opts.pidfile) fs.appendFileSync(opts.pidfile, `${child.pid}\n`);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    children.delete(child);
    child.exitCode_ = code;
    child.exitSignal_ = signal;
    resolve({ code, signal });
  }));
  return child;
}
function killAll() {
  for (const c of children) { try { c.kill('SIGKILL'); } catch (e) { /* gone */ } }
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { console.error(`soak: ${sig}, stopping`); killAll(); process.exit(130); });
}
const hardTimer = setTimeout(() => {
  console.error(`FAIL hard deadline: the soak ran past ${(hardDeadlineMs / 1000).toFixed(0)} s; every child killed`);
  killAll();
  process.exit(2);
}, hardDeadlineMs);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// PING over a raw socket; resolves true on +PONG.
function redisPing(port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    const done = (v) => { clearTimeout(timer); s.destroy(); resolve(v); };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => { buf += d; if (buf.includes('\r\n')) done(buf.startsWith('+PONG')); });
    s.on('error', () => done(false));
  });
}

const redis = { port: 0, dir: '', child: null, starts: 0 };
async function startRedis() {
  redis.starts++;
  const logFile = fs.openSync(path.join(opts.work, `redis-${redis.starts}.log`), 'a');
  redis.child = track(spawn('redis-server', ['--port', String(redis.port), '--bind', '127.0.0.1', '--save', '',
                                             '--appendonly', 'no', '--dir', redis.dir, '--protected-mode', 'no'],
                            { stdio: ['ignore', logFile, logFile] }));
  fs.closeSync(logFile);
  const until = Date.now() + 10000;
  while (Date.now() < until) {
    if (redis.child.exitCode_ !== undefined) throw new Error(`redis-server exited; see ${opts.work}/redis-${redis.starts}.log`);
    if (await redisPing(redis.port)) return;
    await sleep(50);
  }
  throw new Error('redis-server did not answer PING in 10 s');
}
async function killRedis() {
  const c = redis.child;
  c.kill('SIGKILL');
  await c.exited;
}

const proxy = { port: 0, pid: 0, child: null, base: '', logPath: '' };
function tomlConfig() {
  const t = PLAN.tenant;
  return [
    '[server]', 'threads = 2', '',
    '[proxy]', `admin_token = "${adminToken}"`, '',
    '[cache]', `bytes = ${opts.cacheBytes}`, '',
    // At most 4 sequences per engine pass: the pass buffers (logits are
    // 0.6 MiB per sequence with this vocabulary) reach their largest size
    // during the warm-up instead of stepping up whenever more misses than
    // ever before happen to coincide.
    '[engine]', 'threads = 1', `kv_budget = ${opts.kvBudget}`, `max_batch_size = ${PLAN.maxBatch}`, '',
    '[tenant]', `max_concurrent = ${t.max_concurrent}`, `requests_per_second = ${t.requests_per_second}`,
    `burst = ${t.burst}`, '',
  ].join('\n');
}
async function startReprox() {
  const cfg = path.join(opts.work, 'soak.toml');
  fs.writeFileSync(cfg, tomlConfig());
  proxy.logPath = path.join(opts.work, 'reprox.log');
  const logFile = fs.openSync(proxy.logPath, 'a');
  proxy.child = track(spawn(opts.reprox, ['serve', '--config', cfg, '--listen', '127.0.0.1:0',
                                          '--redis', `redis://127.0.0.1:${redis.port}`],
                            { cwd: opts.work, stdio: ['ignore', logFile, logFile] }));
  fs.closeSync(logFile);
  proxy.pid = proxy.child.pid;
  const until = Date.now() + 60000;
  while (Date.now() < until) {
    if (proxy.child.exitCode_ !== undefined) throw new Error(`reprox exited at start:\n${tail(proxy.logPath)}`);
    const m = /reprox listening on [^\s:]+:(\d+)/.exec(fs.readFileSync(proxy.logPath, 'utf8'));
    if (m) { proxy.port = Number(m[1]); break; }
    await sleep(50);
  }
  if (!proxy.port) throw new Error(`reprox did not listen in 60 s:\n${tail(proxy.logPath)}`);
  proxy.base = `http://127.0.0.1:${proxy.port}`;
  while (Date.now() < until) {
    const h = await healthz();
    if (h === 'ok') return;
    await sleep(100);
  }
  throw new Error(`reprox did not become healthy:\n${tail(proxy.logPath)}`);
}
function tail(file, n = 3000) {
  try { const t = fs.readFileSync(file, 'utf8'); return t.slice(-n); } catch (e) { return ''; }
}

// ---------------------------------------------------------------- HTTP

// A request with no keep-alive (its own connection, closed after): for
// /metrics, /healthz and the purges, so that they hold no socket open.
function oneShot(method, urlPath, { body, headers = {}, timeoutMs = 5000 } = {}) {
  return new Promise((resolve) => {
    const data = body === undefined ? null : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const h = Object.assign({ connection: 'close' }, headers);
    if (data) { h['content-type'] = 'application/json'; h['content-length'] = data.length; }
    const req = http.request({ host: '127.0.0.1', port: proxy.port, path: urlPath, method, headers: h, agent: false }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => { clearTimeout(timer); resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }); });
      res.on('error', (e) => { clearTimeout(timer); resolve({ status: 0, error: e.message }); });
    });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs);
    req.on('error', (e) => { clearTimeout(timer); resolve({ status: 0, error: e.message }); });
    req.end(data || undefined);
  });
}
async function healthz() {
  const r = await oneShot('GET', '/healthz', { timeoutMs: 2000 });
  if (r.status === 0) return `unreachable (${r.error})`;
  try { return JSON.parse(r.text).status || `HTTP ${r.status}`; } catch (e) { return `HTTP ${r.status}`; }
}
function parseMetrics(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const sp = line.lastIndexOf(' ');
    out[line.slice(0, sp)] = Number(line.slice(sp + 1));
  }
  return out;
}
async function metrics() {
  const r = await oneShot('GET', '/metrics');
  return r.status === 200 ? parseMetrics(r.text) : null;
}
function metricSum(m, name) {
  let s = 0;
  for (const [k, v] of Object.entries(m || {})) if (k === name || k.startsWith(`${name}{`)) s += v;
  return s;
}

// One chat request over a keep-alive agent. mode: 'json', 'stream' or
// 'abort' (a stream left after its first chunk). Resolves with
// {status, cache, tier, ok, error, usage, content, aborted}; never rejects.
function chat(agent, key, body, { mode = 'json', headers = {} } = {}) {
  return new Promise((resolve) => {
    const data = Buffer.from(JSON.stringify(body));
    const started = mono();
    const rec = { status: 0, cache: null, tier: null, error: null, usage: null, content: '', aborted: false, ms: 0 };
    let settled = false;
    const finish = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error && !rec.error) rec.error = error;
      rec.ms = mono() - started;
      resolve(rec);
    };
    const req = http.request({
      agent, host: '127.0.0.1', port: proxy.port, path: '/v1/chat/completions', method: 'POST',
      headers: Object.assign({ 'content-type': 'application/json', 'content-length': data.length,
                               authorization: `Bearer ${key}` }, headers),
    }, (res) => {
      rec.status = res.statusCode;
      rec.headers = res.headers;
      rec.cache = res.headers['x-reprox-cache'] || null;
      rec.tier = res.headers['x-reprox-tier'] || null;
      const streamed = mode !== 'json' && res.statusCode === 200;
      if (streamed && !/^text\/event-stream/.test(res.headers['content-type'] || '')) {
        rec.error = `stream answered as ${res.headers['content-type']}`;
      }
      const sse = streamed ? sseReader() : null;
      const parts = [];
      res.on('data', (d) => {
        if (settled) return;
        if (!sse) { parts.push(d); return; }
        const err = sse.push(d.toString('utf8'));
        if (err) { req.destroy(); finish(err); return; }
        if (mode === 'abort' && sse.events > 0) {
          rec.aborted = true;
          req.destroy();
          finish(null);
        }
      });
      res.on('end', () => {
        if (settled) return;
        if (sse) {
          const err = sse.end();
          rec.usage = sse.usage;
          rec.content = sse.content;
          if (err) return finish(err);
          if (mode === 'abort') return finish('stream ended before a chunk could be read');
          return finish(null);
        }
        rec.text = Buffer.concat(parts).toString('utf8');
        if (res.statusCode !== 200) return finish(null);  // judged by the caller
        try {
          const j = JSON.parse(rec.text);
          const c = j.choices && j.choices[0];
          if (j.object !== 'chat.completion' || !c || !c.message || typeof c.message.content !== 'string' || !c.finish_reason)
            return finish('malformed JSON answer');
          rec.content = c.message.content;
          rec.usage = j.usage || null;
          finish(null);
        } catch (e) { finish('answer is not JSON'); }
      });
      res.on('error', (e) => finish(`response: ${e.message}`));
      res.on('aborted', () => finish('response aborted by the server'));
    });
    const timer = setTimeout(() => { req.destroy(); finish(`client timeout ${PLAN.requestTimeoutMs} ms`); }, PLAN.requestTimeoutMs);
    req.on('error', (e) => finish(`request: ${e.message}`));
    req.end(data);
  });
}

// An incremental SSE checker: every event is one `data:` line holding a
// chat.completion.chunk, then `data: [DONE]`, then nothing.
function sseReader() {
  let buf = '';
  const r = { events: 0, done: false, content: '', usage: null };
  function event(block) {
    const lines = block.split('\n').filter((l) => l.length > 0);
    if (lines.length === 0) return null;
    if (r.done) return 'data after [DONE]';
    if (lines.length !== 1 || !lines[0].startsWith('data:')) return `malformed event: ${JSON.stringify(block.slice(0, 80))}`;
    const payload = lines[0].slice(5).trim();
    r.events++;
    if (payload === '[DONE]') { r.done = true; return null; }
    let e;
    try { e = JSON.parse(payload); } catch (err) { return 'event is not JSON'; }
    if (e.error) return `error event: ${e.error.message || JSON.stringify(e.error)}`;
    if (e.object !== 'chat.completion.chunk' || !Array.isArray(e.choices)) return 'event is not a chat.completion.chunk';
    if (e.usage) r.usage = e.usage;
    for (const c of e.choices) if (c.delta && typeof c.delta.content === 'string') r.content += c.delta.content;
    return null;
  }
  r.push = (text) => {
    buf += text.replace(/\r\n/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const err = event(buf.slice(0, i));
      buf = buf.slice(i + 2);
      if (err) return err;
    }
    return null;
  };
  r.end = () => {
    if (buf.trim().length > 0) { const err = event(buf); buf = ''; if (err) return err; }
    return r.done ? null : 'stream ended without [DONE]';
  };
  return r;
}

// ---------------------------------------------------------------- load

// A seeded generator, so two runs send the same kinds of prompts.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const WORDS = ('cache proxy token stream model answer request seed tenant shard budget queue engine batch prefix ' +
  'memory redis purge window latency replay kernel thread socket buffer header policy entry epoch counter ' +
  'sample slope gauge metric trace vector matrix layer rotary softmax logits sampler decoder prompt turn ' +
  'river mountain garden winter copper violet harbor lantern orchard meadow canyon pepper saffron tide').split(' ');
function words(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
  return out.join(' ');
}

const kinds = ['hits', 'misses', 'streams', 'aborts', 'chat', 'bursty', 'purge'];  // 'sampler' counts failed samples
const stats = {};
for (const k of [...kinds, 'sampler']) {
  stats[k] = { sent: 0, ok: 0, planned429: 0, errors: 0, cache: {}, tier: {}, ms: [], promptTokens: 0, cachedTokens: 0,
               laterTurns: 0, laterTurnsReused: 0 };
}
const errorLog = [];
let totalErrors = 0;
let totalPlanned429 = 0;
let totalDone = 0;
let phase = 'setup';
function noteError(kind, msg) {
  totalErrors++;
  stats[kind].errors++;
  if (errorLog.length < 40) errorLog.push(`${elapsedS().toFixed(1)} s [${phase}] ${kind}: ${msg}`);
}
// Counts one answer; returns true when it was a success.
function account(kind, rec, { expect429 = false } = {}) {
  const s = stats[kind];
  totalDone++;
  if (rec.cache) s.cache[rec.cache] = (s.cache[rec.cache] || 0) + 1;
  if (rec.tier) s.tier[rec.tier] = (s.tier[rec.tier] || 0) + 1;
  if (rec.status === 429 && expect429 && !rec.error) {
    let code = null;
    try { code = JSON.parse(rec.text).error.code; } catch (e) { /* checked below */ }
    if (code === 'rate_limit_exceeded' && rec.headers['retry-after']) {
      s.planned429++;
      totalPlanned429++;
      return false;
    }
    noteError(kind, `429 without rate_limit_exceeded and Retry-After: ${String(rec.text).slice(0, 160)}`);
    return false;
  }
  if (rec.error) { noteError(kind, `${rec.status ? `HTTP ${rec.status}: ` : ''}${rec.error}`); return false; }
  if (rec.status !== 200) { noteError(kind, `HTTP ${rec.status}: ${String(rec.text || '').slice(0, 160)}`); return false; }
  if (!rec.cache) { noteError(kind, 'no x-reprox-cache header'); return false; }
  s.ok++;
  if (!rec.aborted) s.ms.push(rec.ms);
  return true;
}

// The load's state: agents (one per loop, closed when a phase ends) and the
// time after which no request starts.
const load = { agents: [], until: 0, running: [] };
function agentFor(maxSockets) {
  const a = new http.Agent({ keepAlive: true, maxSockets });
  load.agents.push(a);
  return a;
}
function closeAgents() {
  for (const a of load.agents) a.destroy();
  load.agents = [];
}
const active = () => mono() < load.until;
const MAX_PER_WORKER = 1e6;  // a bound on top of the time bound

const HIT_PROMPTS = Array.from({ length: 24 }, (_, i) => `soak fixed question ${i}: ${words(rng(1000 + i), 12)}`);
const STREAM_PROMPTS = Array.from({ length: 8 }, (_, i) => `soak fixed stream ${i}: ${words(rng(2000 + i), 10)}`);
const BURST_PROMPTS = Array.from({ length: 4 }, (_, i) => `soak burst ${i}: ${words(rng(3000 + i), 6)}`);
let unique = 0;
// Unique prompts of one length: the same shapes from the warm-up on, so
// that buffers sized by the longest prompt so far stop growing early.
const uniqueText = (r, label) => `soak ${label} ${process.pid}-${++unique}: ${words(r, 12)}`;

async function hitWorker(id, agent) {
  const cfg = PLAN.loops.hits;
  const r = rng(10 + id);
  for (let n = 0; active() && n < MAX_PER_WORKER; n++) {
    const i = Math.floor(r() * HIT_PROMPTS.length);
    // Half of the fixed prompts live in the namespace the purges empty.
    const headers = i % 2 ? { 'x-reprox-namespace': PLAN.purgeNamespace } : {};
    stats.hits.sent++;
    account('hits', await chat(agent, cfg.key, { model: MODEL, messages: [{ role: 'user', content: HIT_PROMPTS[i] }],
                                                 max_tokens: 16, seed: 7 }, { headers }));
    await sleep(cfg.pauseMs);
  }
}
async function missWorker(id, agent) {
  const cfg = PLAN.loops.misses;
  const r = rng(20 + id);
  for (let n = 0; active() && n < MAX_PER_WORKER; n++) {
    const body = { messages: [{ role: 'user', content: uniqueText(r, 'miss') }], max_tokens: 12,
                   seed: Math.floor(r() * 1e9) };
    // Half with 20 top logprobs per token: entries of ~40 KB, so that the
    // memory tier reaches its budget and evicts between two purges.
    if (n % 2 === 0) { body.logprobs = true; body.top_logprobs = 20; }
    stats.misses.sent++;
    account('misses', await chat(agent, cfg.key, body));
    await sleep(cfg.pauseMs);
  }
}
async function streamWorker(id, agent) {
  const cfg = PLAN.loops.streams;
  const r = rng(30 + id);
  for (let n = 0; active() && n < MAX_PER_WORKER; n++) {
    const fixed = r() < 0.5;
    const text = fixed ? STREAM_PROMPTS[Math.floor(r() * STREAM_PROMPTS.length)] : uniqueText(r, 'stream');
    const body = { messages: [{ role: 'user', content: text }], max_tokens: 16, stream: true };
    if (n % 2 === 0) body.stream_options = { include_usage: true };
    stats.streams.sent++;
    const rec = await chat(agent, cfg.key, body, { mode: 'stream' });
    if (account('streams', rec) && body.stream_options && !rec.usage) noteError('streams', 'include_usage stream without usage');
    await sleep(cfg.pauseMs);
  }
}
async function abortWorker(id, agent) {
  const cfg = PLAN.loops.aborts;
  const r = rng(40 + id);
  for (let n = 0; active() && n < MAX_PER_WORKER; n++) {
    // Mostly generations that are still running when the client leaves;
    // a quarter on fixed prompts (a stored answer replayed, then left).
    const fixed = n % 4 === 3;
    const text = fixed ? STREAM_PROMPTS[n % STREAM_PROMPTS.length] : uniqueText(r, 'abort');
    stats.aborts.sent++;
    account('aborts', await chat(agent, cfg.key, { messages: [{ role: 'user', content: text }],
                                                   max_tokens: fixed ? 16 : 64, stream: true }, { mode: 'abort' }));
    await sleep(cfg.pauseMs);
  }
}
async function chatWorker(id, agent) {
  const cfg = PLAN.loops.chat;
  const r = rng(50 + id);
  // One long system prompt per worker: every conversation of the worker
  // shares it, and later turns share the earlier turns.
  const system = `You are soak assistant ${id}. ${words(rng(60 + id), 120)}`;
  for (let n = 0; active() && n < MAX_PER_WORKER; n++) {
    const turns = 5;
    const messages = [{ role: 'system', content: system }];
    for (let turn = 0; turn < turns && active(); turn++) {
      messages.push({ role: 'user', content: uniqueText(r, `turn ${turn}`) });
      stats.chat.sent++;
      const rec = await chat(agent, cfg.key, { messages, max_tokens: 12, seed: id * 1000 + turn });
      const ok = account('chat', rec);
      if (!ok) break;
      if (rec.usage) {
        const cached = (rec.usage.prompt_tokens_details || {}).cached_tokens || 0;
        stats.chat.promptTokens += rec.usage.prompt_tokens || 0;
        stats.chat.cachedTokens += cached;
        if (turn > 0) { stats.chat.laterTurns++; if (cached > 0) stats.chat.laterTurnsReused++; }
      }
      messages.push({ role: 'assistant', content: rec.content });
      await sleep(cfg.pauseMs);
    }
  }
}

const purgeLog = [];
async function purgeLoop() {
  let n = 0;
  let next = mono() + PLAN.purgeEveryS * 1000;
  while (active()) {
    await sleep(Math.min(1000, Math.max(0, next - mono())));
    if (!active() || mono() < next) continue;
    next += PLAN.purgeEveryS * 1000;
    n++;
    // Namespace purges; every tenth one of the whole model.
    const body = n % 10 === 0 ? { model: MODEL } : { namespace: PLAN.purgeNamespace };
    stats.purge.sent++;
    const r = await oneShot('POST', '/reprox/v1/purge', { body, headers: { authorization: `Bearer ${adminToken}` } });
    totalDone++;
    let j = null;
    try { j = JSON.parse(r.text); } catch (e) { /* below */ }
    if (r.status !== 200 || !j || typeof j.purged !== 'number') {
      noteError('purge', `HTTP ${r.status}: ${r.error || String(r.text).slice(0, 160)}`);
    } else {
      stats.purge.ok++;
      purgeLog.push({ t: elapsedS(), scope: body.model ? 'model' : 'namespace', purged: j.purged, shared_tier: j.shared_tier });
    }
  }
}
let bursts = 0;
async function burstLoop(agent) {
  let next = mono() + 5000;
  while (active()) {
    await sleep(Math.min(1000, Math.max(0, next - mono())));
    if (!active() || mono() < next) continue;
    next += PLAN.burstEveryS * 1000;
    bursts++;
    await Promise.all(Array.from({ length: PLAN.burstSize }, async (_, i) => {
      stats.bursty.sent++;
      const rec = await chat(agent, PLAN.burstKey, { messages: [{ role: 'user', content: BURST_PROMPTS[i % BURST_PROMPTS.length] }],
                                                    max_tokens: 8 });
      account('bursty', rec, { expect429: true });
    }));
  }
}

function startLoops({ withPurges, withBursts }) {
  const tasks = [];
  const workers = { hits: hitWorker, misses: missWorker, streams: streamWorker, aborts: abortWorker, chat: chatWorker };
  for (const [kind, fn] of Object.entries(workers)) {
    if (!opts.loops.includes(kind)) continue;
    const cfg = PLAN.loops[kind];
    const agent = agentFor(cfg.workers);
    for (let i = 0; i < cfg.workers; i++) tasks.push(fn(i, agent));
  }
  if (withPurges && opts.loops.includes('purge')) tasks.push(purgeLoop());
  // The bursty key opens fresh connections for each burst: between bursts
  // it holds none.
  if (withBursts && opts.loops.includes('bursty')) tasks.push(burstLoop(new http.Agent({ keepAlive: false, maxSockets: PLAN.burstSize })));
  return Promise.all(tasks);
}

// ---------------------------------------------------------------- samples

function procStatus(pid) {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const num = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text) || [])[1]);
  return { rssKiB: num('VmRSS'), threads: num('Threads') };
}
function fdCount(pid) { return fs.readdirSync(`/proc/${pid}/fd`).length; }
// The open descriptors by kind (socket, pipe, anon_inode:[eventfd], a
// file's path), for the report when the counts differ.
function fdKinds(pid) {
  const out = {};
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let l;
    try { l = fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch (e) { continue; }
    const k = l.replace(/:\[\d+\]$/, '');
    out[k] = (out[k] || 0) + 1;
  }
  return out;
}

const rows = [];
let redisState = 'up';
let lastMetrics = null;
// Samples and the baseline and final counts run one at a time, so that a
// /metrics connection of one never shows in the descriptors of another.
let serial = Promise.resolve();
function exclusive(fn) {
  const run = serial.then(fn);
  serial = run.catch(() => {});
  return run;
}
function sample(note = '') {
  return exclusive(async () => {
    const p = procStatus(proxy.pid);
    const fds = fdCount(proxy.pid);
    const m = await metrics();
    if (m) lastMetrics = m;
    const row = {
      t_s: Number(elapsedS().toFixed(2)), phase, note, rss_kib: p.rssKiB, fds, threads: p.threads,
      cache_memory_bytes: m ? m['reprox_cache_bytes{tier="memory"}'] : null,
      cache_memory_entries: m ? m['reprox_cache_entries{tier="memory"}'] : null,
      cache_budget_bytes: opts.cacheBytes,
      kv_bytes: m ? m.reprox_kv_bytes : null, kv_budget_bytes: opts.kvBudget,
      requests: totalDone, errors: totalErrors, planned_429: totalPlanned429, redis: redisState, healthz: await healthz(),
    };
    rows.push(row);
    return row;
  });
}
// fds and threads with no request of ours open: a second after the last
// sample's connections closed.
function quietCounts() {
  return exclusive(async () => {
    await sleep(1000);
    return { fds: fdCount(proxy.pid), threads: procStatus(proxy.pid).threads, kinds: fdKinds(proxy.pid) };
  });
}
function sampler() {
  let stopped = false;
  let next = mono();
  const done = (async () => {
    while (!stopped) {
      if (mono() >= next) {
        next += opts.sampleS * 1000;
        try { await sample(); } catch (e) { if (!stopped) noteError('sampler', `sampling failed: ${e.message}`); }
      }
      await sleep(Math.max(10, Math.min(500, next - mono())));
    }
  })();
  return { stop: async () => { stopped = true; await done; } };
}

// ---------------------------------------------------------------- main

async function main() {
  fs.mkdirSync(opts.work, { recursive: true });
  redis.dir = path.join(opts.work, 'redis');
  fs.mkdirSync(redis.dir, { recursive: true });
  redis.port = await freePort();
  await startRedis();
  await startReprox();
  log(`redis on 127.0.0.1:${redis.port}, reprox ${proxy.pid} on ${proxy.base}; memory tier ${opts.cacheBytes} B, ` +
      `KV budget ${opts.kvBudget} B; ${opts.minutes} min of load`);
  const samples = sampler();

  // Warm-up: every loop, purges and bursts included, for a while, then
  // every connection closed.
  phase = 'warmup';
  load.until = mono() + PLAN.warmupS * 1000;
  await startLoops({ withPurges: true, withBursts: true });
  closeAgents();
  await sleep(3000);
  const baseline = await quietCounts();
  await sample('baseline');
  log(`baseline after warm-up: ${baseline.fds} fds, ${baseline.threads} threads, ${totalDone} requests, ${totalErrors} errors`);

  // Load, with the Redis restart at the middle.
  phase = 'load';
  const loadStart = elapsedS();
  load.until = mono() + opts.minutes * 60 * 1000;
  await sample('load start');
  const loops = startLoops({ withPurges: true, withBursts: true });
  const restart = (async () => {
    await sleep(opts.minutes * 30 * 1000);
    redisState = 'down';
    await killRedis();
    const downAt = elapsedS();
    await sample('redis killed');
    log('redis-server killed (SIGKILL)');
    await sleep(2000);
    const during = await healthz();
    await sleep(Math.max(0, PLAN.redisDownS * 1000 - 2000));
    await startRedis();
    redisState = 'up';
    const upAt = elapsedS();
    await sample('redis restarted');
    let healthyAfter = null;
    for (let i = 0; i < 300; i++) {
      if ((await healthz()) === 'ok') { healthyAfter = elapsedS() - upAt; break; }
      await sleep(100);
    }
    log(`redis-server restarted on ${redis.port} (empty); healthz while down: ${during}; ok again after ` +
        `${healthyAfter === null ? 'more than 30 s' : `${healthyAfter.toFixed(1)} s`}`);
    return { downAt, upAt, during, healthyAfter };
  })();
  const progress = setInterval(() => log(`${totalDone} requests, ${totalErrors} errors, ${totalPlanned429} planned 429s`), 60000);
  await loops;
  clearInterval(progress);
  const restartInfo = await restart;
  const loadEnd = elapsedS();
  phase = 'idle';
  closeAgents();
  await sample('load end');
  log(`load done: ${totalDone} requests, ${totalErrors} errors, ${totalPlanned429} planned 429s`);

  // Idle, then wait for fds and threads to come back to the baseline.
  await sleep(PLAN.idleS * 1000);
  let final = null;
  const settleUntil = mono() + PLAN.settleS * 1000;
  for (;;) {
    final = await quietCounts();
    if ((final.fds === baseline.fds && final.threads === baseline.threads) || mono() > settleUntil) break;
  }
  final.afterS = elapsedS() - loadEnd;
  await sample('final');
  await samples.stop();
  const endMetrics = lastMetrics;

  // Shutdown.
  const stopStarted = mono();
  proxy.child.kill('SIGTERM');
  const exit = await Promise.race([proxy.child.exited, sleep(40000).then(() => null)]);
  const shutdown = exit ? { ...exit, ms: mono() - stopStarted } : { code: null, signal: 'none within 40 s' };
  if (!exit) proxy.child.kill('SIGKILL');
  await killRedis().catch(() => {});

  report({ baseline, final, restartInfo, loadStart, loadEnd, endMetrics, shutdown });
}

function pct(arr, p) {
  if (arr.length === 0) return null;
  const s = [...arr].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}
const diffKinds = (a, b) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => (a[k] || 0) !== (b[k] || 0)).map((k) => `${k} ${a[k] || 0} -> ${b[k] || 0}`).join(', ');
};

function report({ baseline, final, restartInfo, loadStart, loadEnd, endMetrics, shutdown }) {
  const m = endMetrics || {};
  const slope = plot.rssSlope(rows);
  const overCache = rows.filter((r) => r.cache_memory_bytes === null || r.cache_memory_bytes > opts.cacheBytes);
  const overKv = rows.filter((r) => r.kv_bytes === null || r.kv_bytes > opts.kvBudget);
  const maxOf = (k) => Math.max(...rows.map((r) => r[k] || 0));
  const gates = [];
  const gate = (name, pass, figure) => gates.push({ name, pass, line: `${pass ? 'PASS' : 'FAIL'} ${name}: ${figure}` });
  // A fit over less than 15 minutes cannot tell 1 MiB per 10 minutes from
  // the allocator's noise: shorter runs (--quick) get a coarser limit.
  const rssLimit = opts.minutes >= 30 ? 1 : 10;
  gate('rss-slope', Number.isFinite(slope.slopeMiBPer10Min) && slope.slopeMiBPer10Min < rssLimit,
       `${Number.isFinite(slope.slopeMiBPer10Min) ? slope.slopeMiBPer10Min.toFixed(3) : 'n/a'} MiB per 10 min over the last ` +
       `half of the load (${slope.n} samples, least squares; limit ${rssLimit}` +
       `${rssLimit === 1 ? '' : ', the limit of runs under 30 minutes; 1 from 30 minutes on'})`);
  gate('fds', final.fds === baseline.fds,
       `${final.fds} after the load and ${final.afterS.toFixed(0)} s idle, baseline ${baseline.fds} (must be equal)` +
       (final.fds === baseline.fds ? '' : `; by kind: ${diffKinds(baseline.kinds, final.kinds)}`));
  gate('threads', final.threads === baseline.threads,
       `${final.threads} after the load, baseline ${baseline.threads} (must be equal)`);
  gate('memory-tier-budget', overCache.length === 0,
       `max ${maxOf('cache_memory_bytes')} B over ${rows.length} samples, budget ${opts.cacheBytes} B` +
       (overCache.length ? `; ${overCache.length} samples over or unread` : ''));
  gate('kv-budget', overKv.length === 0,
       `max ${maxOf('kv_bytes')} B over ${rows.length} samples, budget ${opts.kvBudget} B` +
       (overKv.length ? `; ${overKv.length} samples over or unread` : ''));
  gate('client-errors', totalErrors === 0,
       `${totalErrors} errors in ${totalDone} requests (the ${totalPlanned429} planned 429s of the bursty key excluded)`);
  if (opts.loops.includes('bursty')) gate('bursty-tenant-limited', totalPlanned429 > 0 && stats.bursty.ok > 0,
       `${totalPlanned429} planned 429s and ${stats.bursty.ok} answers in ${bursts} bursts of ${PLAN.burstSize}`);
  gate('clean-shutdown', shutdown.code === 0,
       `exit code ${shutdown.code}${shutdown.signal ? `, signal ${shutdown.signal}` : ''}` +
       (shutdown.ms !== undefined ? ` ${shutdown.ms.toFixed(0)} ms after SIGTERM` : ''));

  const cpu = (/^model name\s*:\s*(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8')) || [])[1] || 'unknown';
  const date = new Date(startedWall).toISOString().slice(0, 10);
  const host = os.hostname().split('.')[0];
  const name = opts.name || `${date}-${host}-${opts.minutes}min`;
  const lines = [];
  const L = (s = '') => lines.push(s);
  L(`reprox soak, ${opts.minutes} min of load${quick ? ' (--quick)' : ''}`);
  L();
  L(`date:     ${new Date(startedWall).toISOString()}`);
  L(`host:     ${host}, ${cpu}, ${os.cpus().length} cpus, load average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  L(`commit:   ${opts.commit || 'unknown'}`);
  L(`command:  ${opts.command || 'bash benchmarks/soak/run.sh'}`);
  L(`duration: warm-up ${PLAN.warmupS} s, load ${(loadEnd - loadStart).toFixed(0)} s (${opts.minutes} min), ` +
    `idle ${final.afterS.toFixed(0)} s; samples every ${opts.sampleS} s (${rows.length} rows)`);
  L(`reprox:   serve --redis redis://127.0.0.1:PORT, engine threads 1, I/O threads 2, [cache] bytes = ${opts.cacheBytes}, ` +
    `[engine] kv_budget = ${opts.kvBudget}, [tenant] max_concurrent = ${PLAN.tenant.max_concurrent}, ` +
    `requests_per_second = ${PLAN.tenant.requests_per_second}, burst = ${PLAN.tenant.burst}, admin token set`);
  L();
  L('requests by kind (warm-up included):');
  L('  kind      workers  sent    ok      429*   errors  p50 ms  p99 ms  cache statuses / tiers');
  for (const k of kinds) {
    const s = stats[k];
    const workers = PLAN.loops[k] ? PLAN.loops[k].workers : k === 'bursty' ? PLAN.burstSize : 1;
    const p50 = pct(s.ms, 0.5); const p99 = pct(s.ms, 0.99);
    const cache = Object.entries(s.cache).map(([c, n]) => `${c} ${n}`).join(', ');
    const tier = Object.entries(s.tier).map(([c, n]) => `${c} ${n}`).join(', ');
    L(`  ${k.padEnd(9)} ${String(workers).padEnd(8)} ${String(s.sent).padEnd(7)} ${String(s.ok).padEnd(7)} ` +
      `${String(s.planned429).padEnd(6)} ${String(s.errors).padEnd(7)} ${(p50 === null ? '-' : p50.toFixed(1)).padEnd(7)} ` +
      `${(p99 === null ? '-' : p99.toFixed(1)).padEnd(7)} ${cache}${tier ? ` / ${tier}` : ''}`);
  }
  L('  (* planned: the bursty key over its [tenant] limit; aborts: streams left after the first chunk, counted ok)');
  L(`  multi-turn: ${stats.chat.laterTurnsReused} of ${stats.chat.laterTurns} later turns reused KV; ` +
    `${stats.chat.cachedTokens} of ${stats.chat.promptTokens} prompt tokens from reused KV`);
  L(`  purges: ${purgeLog.length} (${purgeLog.filter((p) => p.scope === 'namespace').length} namespace, ` +
    `${purgeLog.filter((p) => p.scope === 'model').length} model); shared_tier answers: ` +
    `${[...new Set(purgeLog.map((p) => p.shared_tier))].join(', ')}`);
  L();
  L(`redis restart: killed (SIGKILL) at ${restartInfo.downAt.toFixed(1)} s, restarted empty on the same port at ` +
    `${restartInfo.upAt.toFixed(1)} s; /healthz while down: ${restartInfo.during}; ok again ` +
    `${restartInfo.healthyAfter === null ? 'not within 30 s' : `${restartInfo.healthyAfter.toFixed(1)} s after the restart`}`);
  L(`metrics at the end: memory-tier evictions ${metricSum(m, 'reprox_cache_evictions_total')}, ` +
    `KV evictions ${metricSum(m, 'reprox_kv_evictions_total')}, KV reused tokens ${metricSum(m, 'reprox_kv_reused_tokens_total')} ` +
    `of ${metricSum(m, 'reprox_prompt_tokens_total')} prompt tokens, Redis store errors ${metricSum(m, 'reprox_cache_store_errors_total')}, ` +
    `tenant rejections ${metricSum(m, 'reprox_tenant_rejections_total')}, engine preemptions ${metricSum(m, 'reprox_engine_preemptions_total')}`);
  const rssRows = rows.filter((r) => r.phase === 'load');
  L(`RSS: ${(rows[0].rss_kib / 1024).toFixed(1)} MiB at start, ${(rssRows.length ? rssRows[0].rss_kib / 1024 : 0).toFixed(1)} MiB when ` +
    `the load began, max ${(maxOf('rss_kib') / 1024).toFixed(1)} MiB, ${(rows[rows.length - 1].rss_kib / 1024).toFixed(1)} MiB at the end`);
  L(`fds: baseline ${baseline.fds}, max ${maxOf('fds')}, final ${final.fds}; threads: baseline ${baseline.threads}, ` +
    `max ${maxOf('threads')}, final ${final.threads}`);
  L();
  L('gates:');
  for (const g of gates) L(`  ${g.line}`);
  if (errorLog.length) {
    L();
    L(`first errors (${totalErrors} in all):`);
    for (const e of errorLog) L(`  ${e}`);
  }
  const failed = gates.filter((g) => !g.pass);
  L();
  L(failed.length ? `RESULT: FAIL (${failed.map((g) => g.name).join(', ')})` : 'RESULT: PASS');

  fs.mkdirSync(opts.out, { recursive: true });
  const base = path.join(opts.out, name);
  fs.writeFileSync(`${base}.csv`, plot.toCsv(rows));
  fs.writeFileSync(`${base}.svg`, plot.renderSvg(plot.readCsv(plot.toCsv(rows)),
    { title: `reprox soak: ${opts.minutes} min, ${date}, ${host}, ${opts.commit || ''}`.replace(/, $/, '') }));
  fs.writeFileSync(`${base}.txt`, `${lines.join('\n')}\n`);
  console.log();
  console.log(lines.join('\n'));
  console.log();
  console.log(`wrote ${base}.csv, ${base}.svg, ${base}.txt`);
  if (failed.length && fs.existsSync(proxy.logPath)) console.log(`\nreprox log tail:\n${tail(proxy.logPath, 2000)}`);
  clearTimeout(hardTimer);
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((e) => {
  console.error(`soak: failed: ${e.stack || e}`);
  if (proxy.logPath) console.error(`reprox log tail:\n${tail(proxy.logPath, 2000)}`);
  if (errorLog.length) console.error(`first errors:\n  ${errorLog.join('\n  ')}`);
  killAll();
  process.exit(2);
});
