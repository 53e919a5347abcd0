#!/usr/bin/env node
// Replays a trace from trace.js against one running reprox and records every
// answer. Node built-ins only.
//
//   node benchmarks/workload/replay.js --trace FILE --url http://127.0.0.1:PORT
//        --out FILE.json [--name NAME] [--concurrency 8] [--max-seconds 170]
//        [--model ID] [--user DIRECTIVES] [--pid PID] [--upstream URL]
//
// Closed loop: `concurrency` clients, each sending the next request of the
// trace that is ready. A conversation turn is ready once the previous turn
// has its answer: the turn re-sends the whole conversation, with the
// assistant answers this reprox returned (so later turns are exact
// continuations and KV reuse can apply). Once --max-seconds have passed no
// new request starts; what is in flight finishes.
//
// --model names the model in each body (needed with --upstream); --user sets
// the body's `user` field (not part of the cache key; the scripted upstream
// reads its directives there). --pid: reprox's process, whose CPU time
// (/proc/PID/stat) is read before and after; --upstream: the scripted
// upstream, whose /__count is read before and after. /metrics is read
// before and after too.
//
// Per request it keeps: start and end (ms since the replay began), latency
// (until the whole answer; aborted streams have none), ttft (streams: until
// the first event), status, x-reprox-cache, x-reprox-tier, usage, and a hash
// of the answer text (to compare runs: same seed, same bytes).
//
// When stdout is a terminal it shows one updating progress line.
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { readTrace } = require('./trace.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const opts = {
  trace: arg('--trace'), url: arg('--url'), out: arg('--out'), name: arg('--name', 'run'),
  concurrency: Number(arg('--concurrency', process.env.CONCURRENCY || 8)),
  maxSeconds: Number(arg('--max-seconds', process.env.MAX_SECONDS || 170)),
  model: arg('--model', ''), user: arg('--user', ''), pid: arg('--pid', ''), upstream: arg('--upstream', ''),
};
if (!opts.trace || !opts.url || !opts.out) {
  console.error('usage: replay.js --trace FILE --url URL --out FILE [--name N] [--concurrency N] [--max-seconds S]');
  process.exit(2);
}

const target = new URL(opts.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency + 2 });
const now = () => Number(process.hrtime.bigint()) / 1e6;

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    }).on('error', reject);
  });
}

// The counters and sums of a Prometheus text page, by "name{labels}".
function parseMetrics(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const sp = line.lastIndexOf(' ');
    const name = line.slice(0, sp);
    if (name.includes('_bucket')) continue;
    out[name] = Number(line.slice(sp + 1));
  }
  return out;
}

// utime + stime of a process, in seconds.
function cpuSeconds(pid) {
  if (!pid) return null;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tck = Number(process.env.CLK_TCK || 100);
  return (Number(fields[11]) + Number(fields[12])) / tck;
}

async function snapshot() {
  const s = { metrics: parseMetrics(await get(new URL('/metrics', target))), cpu_s: cpuSeconds(opts.pid) };
  if (opts.upstream) s.upstream = JSON.parse(await get(new URL('/__count', opts.upstream)));
  return s;
}

// Content and usage of a finished SSE body.
function parseSse(text) {
  let content = '';
  let usage = null;
  let error = null;
  let done = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const payload = line.slice(5).trim();
    if (payload === '[DONE]') { done = true; continue; }
    let e;
    try { e = JSON.parse(payload); } catch (err) { error = 'bad event'; continue; }
    if (e.error) error = e.error.message || 'error event';
    if (e.usage) usage = e.usage;
    for (const c of e.choices || []) if (c.delta && c.delta.content) content += c.delta.content;
  }
  return { content, usage, error: error || (done ? null : 'no [DONE]') };
}

// One chat request. Resolves with the measured record; never rejects.
function send(body, headers, { stream, abort }) {
  return new Promise((resolve) => {
    const data = Buffer.from(JSON.stringify(body));
    const t0 = now();
    const rec = { status: 0, cache: null, tier: null, ttft: null, latency: null, aborted: false, error: null };
    const req = http.request({
      agent, host: target.hostname, port: target.port, path: '/v1/chat/completions', method: 'POST',
      headers: Object.assign({ 'content-type': 'application/json', 'content-length': data.length }, headers),
    }, (res) => {
      rec.status = res.statusCode;
      rec.cache = res.headers['x-reprox-cache'] || null;
      rec.tier = res.headers['x-reprox-tier'] || null;
      const parts = [];
      res.on('data', (d) => {
        if (rec.ttft === null && stream) rec.ttft = now() - t0;
        parts.push(d);
        if (abort && !rec.aborted) {  // the client leaves after the first chunk
          rec.aborted = true;
          req.destroy();
          resolve(rec);
        }
      });
      res.on('end', () => {
        if (rec.aborted) return;
        rec.latency = now() - t0;
        const text = Buffer.concat(parts).toString('utf8');
        if (rec.status !== 200) { rec.error = text.slice(0, 200); return resolve(rec); }
        if (stream) {
          const s = parseSse(text);
          rec.content = s.content; rec.usage = s.usage; rec.error = s.error;
        } else {
          try {
            const j = JSON.parse(text);
            rec.content = j.choices[0].message.content || '';
            rec.usage = j.usage;
          } catch (e) { rec.error = 'bad JSON answer'; }
        }
        resolve(rec);
      });
      res.on('error', (e) => { if (!rec.aborted) { rec.error = String(e.message); resolve(rec); } });
    });
    req.on('error', (e) => { if (!rec.aborted) { rec.error = String(e.message); resolve(rec); } });
    req.end(data);
  });
}

async function main() {
  const { header, requests } = readTrace(opts.trace);
  const tenants = header.tenants;
  const history = new Map();       // conv -> messages so far (user and assistant)
  const finished = new Set();      // request index with an answer
  const prevTurn = new Map();      // request index -> index of the conversation's previous turn
  const lastOfConv = new Map();
  for (const q of requests) {
    if (q.kind !== 'chat') continue;
    if (lastOfConv.has(q.conv)) prevTurn.set(q.i, lastOfConv.get(q.conv));
    lastOfConv.set(q.conv, q.i);
  }
  const broken = new Set();        // conversations whose earlier turn failed
  const samples = [];
  const before = await snapshot();
  const t0 = now();
  const deadline = t0 + opts.maxSeconds * 1000;
  let next = 0;                    // lowest index not yet dispatched
  const dispatched = new Uint8Array(requests.length);
  let inFlight = 0;
  let stopped = false;
  let hits = 0;

  const progress = process.stdout.isTTY ? setInterval(() => {
    const n = samples.length;
    process.stdout.write(`\r  ${opts.name}: ${n}/${requests.length} requests, hit rate ${(n ? 100 * hits / n : 0).toFixed(1)}%, ` +
      `${((now() - t0) / 1000).toFixed(1)} s   `);
  }, 250) : null;

  // The next request that is ready: not dispatched, and its conversation's
  // previous turn answered. Looks ahead at most 256 requests.
  function takeReady() {
    while (next < requests.length && dispatched[next]) next++;
    for (let i = next; i < Math.min(requests.length, next + 256); i++) {
      if (dispatched[i]) continue;
      const p = prevTurn.get(i);
      if (p === undefined || finished.has(p)) return i;
    }
    return -1;
  }

  function bodyFor(q) {
    const messages = [{ role: 'system', content: tenants[q.tenant].system }];
    if (q.kind === 'chat') messages.push(...(history.get(q.conv) || []));
    messages.push({ role: 'user', content: q.text });
    const body = { messages, max_tokens: q.max_tokens };
    if (opts.model) body.model = opts.model;
    if (opts.user) body.user = opts.user;
    if (q.stream) { body.stream = true; body.stream_options = { include_usage: true }; }
    return body;
  }

  async function run(i) {
    const q = requests[i];
    const s = { i, kind: q.kind, tenant: q.tenant, stream: q.stream, no_cache: q.no_cache, abort: q.abort };
    if (q.kind === 'chat') { s.conv = q.conv; s.turn = q.turn; }
    if (q.kind === 'chat' && broken.has(q.conv)) {
      s.skipped = true;
    } else {
      const headers = { authorization: `Bearer ${tenants[q.tenant].token}` };
      if (q.no_cache) headers['cache-control'] = 'no-cache';
      s.start = now() - t0;
      const rec = await send(bodyFor(q), headers, q);
      s.end = now() - t0;
      Object.assign(s, { status: rec.status, cache: rec.cache, tier: rec.tier, ttft: rec.ttft, latency: rec.latency,
                         aborted: rec.aborted, error: rec.error });
      if (rec.usage) {
        s.prompt_tokens = rec.usage.prompt_tokens;
        s.completion_tokens = rec.usage.completion_tokens;
        s.cached_tokens = (rec.usage.prompt_tokens_details || {}).cached_tokens || 0;
      }
      if (rec.content !== undefined && !rec.error)
        s.hash = crypto.createHash('sha256').update(rec.content).digest('hex').slice(0, 16);
      if (q.kind === 'chat') {
        if (rec.error || rec.status !== 200 || rec.aborted) broken.add(q.conv);
        else {
          const h = history.get(q.conv) || [];
          h.push({ role: 'user', content: q.text }, { role: 'assistant', content: rec.content });
          history.set(q.conv, h);
        }
      }
    }
    if (s.cache === 'hit') hits++;
    samples.push(s);
    finished.add(i);
  }

  await new Promise((resolveAll) => {
    function pump() {
      if (now() > deadline) stopped = true;
      while (!stopped && inFlight < opts.concurrency) {
        const i = takeReady();
        if (i < 0) break;
        dispatched[i] = 1;
        inFlight++;
        run(i).then(() => { inFlight--; pump(); });
      }
      const left = stopped ? 0 : requests.length - samples.length;
      if (inFlight === 0 && (left === 0 || takeReady() < 0)) resolveAll();
    }
    pump();
  });
  const wall = (now() - t0) / 1000;
  if (progress) { clearInterval(progress); process.stdout.write('\r' + ' '.repeat(90) + '\r'); }
  console.log(`  ${opts.name}: ${samples.length}/${requests.length} requests in ${wall.toFixed(1)} s, ` +
              `hit rate ${(samples.length ? 100 * hits / samples.length : 0).toFixed(1)}%`);
  const after = await snapshot();
  agent.destroy();
  samples.sort((a, b) => a.i - b.i);
  const out = { name: opts.name, trace: header.trace, concurrency: opts.concurrency, max_seconds: opts.maxSeconds,
                model: opts.model, user: opts.user, wall_s: wall, truncated: samples.length < requests.length,
                before, after, samples };
  fs.writeFileSync(opts.out, JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
