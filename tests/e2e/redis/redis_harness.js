// Redis for the end-to-end tests: a real redis-server on a free loopback
// port (no persistence, its own temp dir), which tests can pause (SIGSTOP),
// resume, kill -9 and restart on the same port. Also starts reprox instances
// that share it, and small helpers around /metrics and redis-cli.
//
// Environment (set by tests/e2e/redis/CMakeLists.txt for ctest):
//   REDIS_SERVER  redis-server binary (required)
//   REDIS_CLI     redis-cli binary (required)
//   and those of tests/e2e/harness.js (REPROX_BIN, REPROX_SCRIPTED_UPSTREAM).
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const harness = require('../harness.js');

function binary(envName) {
  const p = process.env[envName];
  if (!p || !fs.existsSync(p)) throw new Error(`${envName} is not set or does not exist: ${p}`);
  return p;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const liveRedis = new Set();
process.on('exit', () => {
  for (const child of liveRedis) {
    try { child.kill('SIGCONT'); child.kill('SIGKILL'); } catch (e) { /* gone */ }
  }
});

class RedisServer {
  constructor(port) {
    this.port = port;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprox-e2e-redis-'));
    this.child = null;
  }

  get url() { return `redis://127.0.0.1:${this.port}`; }

  // Starts redis-server on this.port and resolves once it answers PING.
  async start() {
    const child = spawn(binary('REDIS_SERVER'),
                        ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
                         '--dir', this.dir, '--protected-mode', 'no'],
                        { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    liveRedis.add(child);
    child.output = '';
    child.stdout.on('data', (d) => { child.output += d; });
    child.stderr.on('data', (d) => { child.output += d; });
    child.exited = new Promise((resolve) => child.on('exit', () => { liveRedis.delete(child); resolve(); }));
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`redis-server exited:\n${child.output}`);
      try {
        if (this.cli('PING') === 'PONG') return;
      } catch (e) { /* not up yet */ }
      await harness.sleep(20);
    }
    throw new Error(`redis-server did not answer PING on ${this.port}:\n${child.output}`);
  }

  pause() { this.child.kill('SIGSTOP'); }
  resume() { this.child.kill('SIGCONT'); }

  // kill -9; resolves once the process is gone.
  async killHard() {
    if (!this.child) return;
    const child = this.child;
    this.child = null;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await child.exited;
  }

  async stop() {
    await this.killHard();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  // Runs one redis-cli command; returns its trimmed output.
  cli(...args) {
    return execFileSync(binary('REDIS_CLI'), ['-h', '127.0.0.1', '-p', String(this.port), ...args],
                        { encoding: 'utf8', timeout: 2000 }).trim();
  }

  // Whether the cache entry for a reprox key (x-reprox-key) is in Redis.
  hasEntry(key) { return this.cli('EXISTS', `reprox:v1:${key}`) === '1'; }
}

// A redis-server on a free port, started, stopped after the test file.
async function startRedis(testApi) {
  const server = new RedisServer(await freePort());
  await server.start();
  testApi.after(() => server.stop());
  return server;
}

// A RedisServer on a free port that is NOT started (Redis "down").
async function reserveRedis(testApi) {
  const server = new RedisServer(await freePort());
  testApi.after(() => server.stop());
  return server;
}

// `count` reprox instances in front of one upstream, all with --redis
// `redisUrl` (and the TOML sections in `config`); stopped after the test file.
async function startInstances(testApi, redisUrl, count, extraArgs = [], config = {}) {
  const upstream = await harness.startUpstream();
  const proxies = [];
  testApi.after(async () => {
    for (const p of proxies) await p.stop();
    await upstream.stop();
  });
  for (let i = 0; i < count; ++i)
    proxies.push(await harness.startReprox(upstream, { config, args: ['--redis', redisUrl, ...extraArgs] }));
  return { upstream, proxies };
}

async function getJson(base, p) {
  const res = await fetch(base + p);
  return { status: res.status, json: await res.json() };
}

// Sum of the samples of `family` whose labels include every `labels` pair.
async function metricSum(base, family, labels = {}) {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(family + '{') && !line.startsWith(family + ' ')) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// Polls `fn` (async, returns truthy when done) every `everyMs` until
// `timeoutMs`; resolves with the truthy value or null.
async function waitFor(fn, timeoutMs, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() >= deadline) return null;
    await harness.sleep(everyMs);
  }
}

module.exports = { RedisServer, startRedis, reserveRedis, startInstances, getJson, metricSum, waitFor, freePort };
