// End-to-end harness: starts the scripted upstream and a reprox process on
// free ports, waits until both are ready, and kills both when the test file
// ends (also when it fails or throws).
//
// Environment (set by tests/e2e/CMakeLists.txt for ctest):
//   REPROX_BIN                the reprox binary (required)
//   REPROX_SCRIPTED_UPSTREAM  tests/proxy/backend/scripted_upstream.js
//   REPROX_NPM_DIR            tests/fixtures/npm/node_modules
//   REPROX_JSON_TEST_SUITE_DIR  the nst/JSONTestSuite test_parsing folder
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');

const repoRoot = path.resolve(__dirname, '..', '..');

function requiredPath(envName, fallback) {
  const p = process.env[envName] || fallback;
  if (!p || !fs.existsSync(p)) throw new Error(`${envName} is not set or does not exist: ${p}`);
  return p;
}

const live = new Set();
process.on('exit', () => {
  for (const child of live) {
    try { child.kill('SIGKILL'); } catch (e) { /* already gone */ }
  }
});

// Spawns `cmd args`, resolves with {child, match} once `pattern` matches its
// output (stdout or stderr); rejects when it exits or times out first.
function spawnUntil(cmd, args, options, pattern, timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, Object.assign({ stdio: ['ignore', 'pipe', 'pipe'] }, options));
    live.add(child);
    child.output = '';
    const buffered = { stdout: '', stderr: '' };
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${cmd} did not become ready in ${timeoutMs} ms:\n${child.output}`)), timeoutMs);
    function finish(err, match) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) { child.kill('SIGKILL'); reject(err); } else resolve({ child, match });
    }
    const onData = (which) => (data) => {
      const text = data.toString();
      child.output += text;
      if (child.output.length > 1 << 20) child.output = child.output.slice(-(1 << 19));
      if (done) return;
      buffered[which] += text;
      const m = buffered[which].match(pattern);
      if (m) finish(null, m);
    };
    child.stdout.on('data', onData('stdout'));
    child.stderr.on('data', onData('stderr'));
    child.on('exit', (code, signal) => {
      live.delete(child);
      child.exitCode_ = code;
      child.exitSignal_ = signal;
      finish(new Error(`${cmd} exited (code ${code}, signal ${signal}) before it was ready:\n${child.output}`));
    });
    child.on('error', (e) => finish(e));
  });
}

async function startUpstream() {
  const script = requiredPath('REPROX_SCRIPTED_UPSTREAM', path.join(repoRoot, 'tests/proxy/backend/scripted_upstream.js'));
  const { child, match } = await spawnUntil(process.execPath, [script, '--port', '0'], {}, /listening (\d+)/);
  const port = Number(match[1]);
  const base = `http://127.0.0.1:${port}`;
  return {
    child, port, base,
    async count() { return (await fetch(`${base}/__count`)).json(); },
    async last() { return (await fetch(`${base}/__last`)).json(); },
    async reset() { await fetch(`${base}/__reset`, { method: 'POST' }); },
    stop() { return stopChild(child, 'SIGKILL'); },
  };
}

// Writes a TOML config; `sections` is {server: {read_timeout_ms: 500}, ...}.
// An array of objects becomes an array of tables: {cache: {rule: [{ttl: 1}]}}
// writes [[cache.rule]] blocks after the section's other keys.
function writeConfig(dir, sections) {
  const value = (v) => (typeof v === 'string' ? JSON.stringify(v) : String(v));
  let text = '';
  for (const [section, keys] of Object.entries(sections)) {
    text += `[${section}]\n`;
    const tables = [];
    for (const [k, v] of Object.entries(keys)) {
      if (Array.isArray(v) && v.every((t) => typeof t === 'object')) tables.push([k, v]);
      else text += `${k} = ${value(v)}\n`;
    }
    for (const [k, list] of tables) {
      for (const t of list) {
        text += `[[${section}.${k}]]\n`;
        for (const [tk, tv] of Object.entries(t)) text += `${tk} = ${value(tv)}\n`;
      }
    }
  }
  const file = path.join(dir, 'reprox.toml');
  fs.writeFileSync(file, text);
  return file;
}

// Starts reprox in front of `upstream`. `config` holds TOML sections;
// `args` extra flags.
async function startReprox(upstream, { config = {}, args = [] } = {}) {
  const bin = requiredPath('REPROX_BIN');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprox-e2e-'));
  const sections = Object.assign({}, config);
  sections.upstream = Object.assign({ url: upstream.base }, config.upstream || {});
  const file = writeConfig(dir, sections);
  const { child, match } = await spawnUntil(bin, ['serve', '--config', file, '--listen', '127.0.0.1:0', ...args],
                                            { cwd: dir }, /reprox listening on [^\s:]+:(\d+)/);
  const port = Number(match[1]);
  return {
    child, port, dir,
    base: `http://127.0.0.1:${port}`,
    stop() {
      return stopChild(child, 'SIGKILL').finally(() => fs.rmSync(dir, { recursive: true, force: true }));
    },
  };
}

// Resolves with {code, signal} once the child has exited.
function waitExit(child) {
  if (child.exitCode_ !== undefined) return Promise.resolve({ code: child.exitCode_, signal: child.exitSignal_ });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function stopChild(child, signal) {
  if (child.exitCode_ !== undefined) return Promise.resolve();
  const exited = waitExit(child);
  child.kill(signal);
  return exited;
}

// Starts upstream + reprox; registers their teardown with node:test's
// `after`, so they go even when a test fails.
async function startStack(testApi, options) {
  const upstream = await startUpstream();
  let proxy;
  try {
    proxy = await startReprox(upstream, options);
  } catch (e) {
    await upstream.stop();
    throw e;
  }
  testApi.after(async () => {
    await proxy.stop();
    await upstream.stop();
  });
  return { upstream, proxy };
}

let uniqueCounter = 0;
// A chat body whose prompt no other test uses.
function chatBody(extra = {}, text) {
  const prompt = text || `hello ${process.pid}-${Date.now()}-${++uniqueCounter}`;
  return Object.assign({ model: 'scripted-model', messages: [{ role: 'user', content: prompt }] }, extra);
}

async function postChat(proxy, body, headers = {}) {
  const res = await fetch(`${proxy.base}/v1/chat/completions`, {
    method: 'POST',
    headers: Object.assign({ 'content-type': 'application/json', authorization: 'Bearer test-key' }, headers),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* SSE or not JSON */ }
  return { status: res.status, headers: res.headers, text, json, cache: res.headers.get('x-reprox-cache'),
           key: res.headers.get('x-reprox-key') };
}

// Parses an SSE body into its `data:` payloads (JSON parsed; "[DONE]" kept).
function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    for (const line of block.split(/\r?\n/)) {
      if (!line.startsWith('data:')) continue;
      const payload = line.slice(5).trim();
      events.push(payload === '[DONE]' ? '[DONE]' : JSON.parse(payload));
    }
  }
  return events;
}

// The stream with the per-answer fields (id, created) removed.
function stripMeta(events) {
  return events.map((e) => {
    if (e === '[DONE]') return e;
    const { id, created, ...rest } = e;
    return rest;
  });
}

// Concatenated delta content per choice.
function streamContent(events) {
  const out = [];
  for (const e of events) {
    if (e === '[DONE]' || !e.choices) continue;
    for (const c of e.choices) out[c.index] = (out[c.index] || '') + (c.delta.content || '');
  }
  return out;
}

// A raw HTTP/1.1 exchange on one socket: writes `chunks` (strings/Buffers,
// with optional {delayMs} items between them), collects everything the
// server sends until it closes or `idleMs` passes without data.
function rawExchange(port, chunks, { idleMs = 1500, totalMs = 10000 } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received = [];
    const started = Date.now();
    let closedAt = null;
    let error = null;
    let idle;
    const total = setTimeout(() => finish(), totalMs);
    function finish() {
      clearTimeout(idle);
      clearTimeout(total);
      socket.destroy();
      resolve({ text: Buffer.concat(received).toString('latin1'), closed: closedAt !== null,
                closedAfterMs: closedAt === null ? null : closedAt - started, error });
    }
    function armIdle() {
      clearTimeout(idle);
      idle = setTimeout(finish, idleMs);
    }
    socket.on('data', (d) => { received.push(d); armIdle(); });
    socket.on('error', (e) => { error = e; });
    socket.on('close', () => { closedAt = Date.now(); finish(); });
    socket.on('connect', async () => {
      for (const c of chunks) {
        if (c && c.delayMs !== undefined) { await new Promise((r) => setTimeout(r, c.delayMs)); continue; }
        if (socket.destroyed) break;
        socket.write(c);
      }
      armIdle();
    });
  });
}

// Splits raw response bytes into [{status, headers, body}] (Content-Length
// or chunked bodies).
function parseResponses(text) {
  const out = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const head = rest.slice(0, end).split('\r\n');
    const status = Number(head[0].split(' ')[1]);
    const headers = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    rest = rest.slice(end + 4);
    let body = '';
    if (status === 100) { out.push({ status, headers, body }); continue; }
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        if (lineEnd < 0) { rest = ''; break; }
        const size = parseInt(rest.slice(0, lineEnd), 16);
        rest = rest.slice(lineEnd + 2);
        if (size === 0) { rest = rest.slice(rest.indexOf('\r\n') + 2); break; }
        body += rest.slice(0, size);
        rest = rest.slice(size + 2);
      }
    } else {
      const len = Number(headers['content-length'] || 0);
      body = rest.slice(0, len);
      rest = rest.slice(len);
    }
    out.push({ status, headers, body });
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function npmDir() {
  return requiredPath('REPROX_NPM_DIR', path.join(repoRoot, 'tests/fixtures/npm/node_modules'));
}

module.exports = {
  startUpstream, startReprox, startStack, writeConfig, waitExit, stopChild,
  chatBody, postChat, parseSse, stripMeta, streamContent, rawExchange, parseResponses, sleep, npmDir,
  requiredPath, repoRoot,
};
