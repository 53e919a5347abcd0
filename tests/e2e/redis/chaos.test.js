// Chaos under a bounded load: 8 keep-alive clients send a mix of hits and
// misses to A for ~15 s while Redis is paused (SIGSTOP 5 s, SIGCONT), then
// killed (-9) and restarted on the same port. No client sees an error, p99
// latency stays within the Redis command timeout plus a margin, caching
// through Redis resumes within seconds (a new key stored on A is a redis hit
// on B), and /metrics counts the skipped Redis operations.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const { chatBody, postChat, sleep } = require('../harness.js');
const { startRedis, startInstances, getJson, waitFor, metricSum } = require('./redis_harness.js');

const COMMAND_TIMEOUT_MS = 100;
const LATENCY_MARGIN_MS = 150;  // loaded 2-core box, Node client included
const CLIENTS = 8;
const LOAD_MS = 15000;
const MAX_REQUESTS = 200000;  // bound by count as well as by time
const HOT_KEYS = 32;
const MISS_SHARE = 0.2;

// One POST over a keep-alive agent; resolves {status, ms, tier} or {error}.
function post(agent, port, payload) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent,
                               headers: { 'content-type': 'application/json', authorization: 'Bearer load',
                                          'content-length': Buffer.byteLength(payload) } },
                             (res) => {
                               res.resume();
                               res.on('end', () => resolve({
                                 status: res.statusCode, tier: res.headers['x-reprox-tier'],
                                 ms: Number(process.hrtime.bigint() - started) / 1e6 }));
                               res.on('error', (e) => resolve({ error: e.message }));
                             });
    req.setTimeout(10000, () => req.destroy(new Error('client timeout')));
    req.on('error', (e) => resolve({ error: e.message }));
    req.end(payload);
  });
}

async function runLoad(port, hotBodies, startedAt) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const stats = { latencies: [], errors: [], hits: 0, misses: 0, sent: 0 };
  const deadline = Date.now() + LOAD_MS;
  let unique = 0;
  async function client(id) {
    while (Date.now() < deadline && stats.sent < MAX_REQUESTS) {
      stats.sent++;
      const miss = Math.random() < MISS_SHARE;
      const body = miss ? chatBody({ seed: 1000 + id }, `chaos miss ${process.pid} ${id} ${++unique}`)
                        : hotBodies[Math.floor(Math.random() * hotBodies.length)];
      const r = await post(agent, port, JSON.stringify(body));
      if (r.error || r.status !== 200)
        stats.errors.push(`${r.error || `HTTP ${r.status}`} at ${Date.now() - startedAt} ms (${miss ? 'miss' : 'hot'})`);
      else stats.latencies.push(r.ms);
      if (r.tier) stats.hits++; else stats.misses++;
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  agent.destroy();
  stats.latencies.sort((x, y) => x - y);
  const q = (p) => stats.latencies[Math.min(stats.latencies.length - 1, Math.floor(p * stats.latencies.length))];
  stats.p50 = q(0.5);
  stats.p99 = q(0.99);
  stats.max = stats.latencies[stats.latencies.length - 1];
  return stats;
}

// Stores a fresh key through A and checks B answers it from Redis;
// resolves true once that works.
async function redisRoundTrip(redis, a, b) {
  const body = chatBody({ seed: 77 });
  const r = await postChat(a, body);
  if (r.status !== 200) return false;
  for (let i = 0; i < 20; ++i) {
    try { if (redis.hasEntry(r.key)) break; } catch (e) { return false; }
    await sleep(25);
  }
  const onB = await postChat(b, body);
  return onB.status === 200 && onB.headers.get('x-reprox-tier') === 'redis';
}

test('bounded load through Redis pause, kill -9 and restart', { timeout: 90000 }, async (t) => {
  const redis = await startRedis(t);
  const url = `${redis.url}?connect_timeout_ms=${COMMAND_TIMEOUT_MS}&command_timeout_ms=${COMMAND_TIMEOUT_MS}`;
  const { proxies } = await startInstances(t, url, 2);
  const [a, b] = proxies;

  const hotBodies = [];
  for (let i = 0; i < HOT_KEYS; ++i) {
    const body = chatBody({ seed: i }, `chaos hot ${process.pid} ${i}`);
    assert.strictEqual((await postChat(a, body)).status, 200);
    hotBodies.push(body);
  }
  assert.ok(await waitFor(() => redisRoundTrip(redis, a, b), 5000), 'the shared tier works before the chaos');
  const errorsBefore = await metricSum(a.base, 'reprox_cache_store_errors_total', { tier: 'redis' });

  const loadStarted = Date.now();
  const load = runLoad(a.port, hotBodies, loadStarted);
  const at = (ms) => sleep(Math.max(0, loadStarted + ms - Date.now()));
  const events = [];

  await at(2000);
  redis.pause();
  events.push(['SIGSTOP', Date.now() - loadStarted]);
  await sleep(1000);
  const pausedHealth = (await getJson(a.base, '/healthz')).json.status;
  await at(7000);
  redis.resume();
  events.push(['SIGCONT', Date.now() - loadStarted]);
  const afterPause = await waitFor(() => redisRoundTrip(redis, a, b), 5000, 100);
  events.push(['redis caching back after SIGCONT', Date.now() - loadStarted]);

  await at(9000);
  await redis.killHard();
  events.push(['kill -9', Date.now() - loadStarted]);
  await sleep(500);
  await redis.start();
  const restartedAt = Date.now();
  events.push(['restarted', restartedAt - loadStarted]);
  const afterRestart = await waitFor(() => redisRoundTrip(redis, a, b), 5000, 100);
  const resumeMs = Date.now() - restartedAt;
  events.push(['redis caching back after restart', Date.now() - loadStarted]);

  const stats = await load;
  const errorsAfter = await metricSum(a.base, 'reprox_cache_store_errors_total', { tier: 'redis' });
  t.diagnostic(`events (ms since load start): ${JSON.stringify(events)}`);
  t.diagnostic(`load: ${stats.latencies.length} ok, ${stats.errors.length} errors, hits ${stats.hits}, ` +
               `misses ${stats.misses}; p50 ${stats.p50.toFixed(1)} ms, p99 ${stats.p99.toFixed(1)} ms, ` +
               `max ${stats.max.toFixed(1)} ms; healthz while paused: ${pausedHealth}; ` +
               `redis store errors ${errorsBefore} -> ${errorsAfter}; resumed ${resumeMs} ms after restart`);

  if (stats.errors.length) t.diagnostic(`A's log tail:\n${a.child.output.slice(-4000)}`);
  assert.deepStrictEqual(stats.errors.slice(0, 5), [], `client errors: ${stats.errors.length}`);
  assert.ok(stats.latencies.length > 1000, 'the load really ran');
  assert.ok(Date.now() - loadStarted < LOAD_MS + 5000, 'the load stopped by itself');
  assert.ok(stats.p99 <= COMMAND_TIMEOUT_MS + LATENCY_MARGIN_MS,
            `p99 ${stats.p99.toFixed(1)} ms within ${COMMAND_TIMEOUT_MS} + ${LATENCY_MARGIN_MS} ms`);
  assert.strictEqual(pausedHealth, 'degraded', 'healthz shows the paused Redis');
  assert.ok(afterPause, 'caching through Redis resumed after SIGCONT');
  assert.ok(afterRestart, 'caching through Redis resumed after the restart');
  assert.ok(resumeMs < 5000, `resumed ${resumeMs} ms after the restart`);
  assert.ok(errorsAfter > errorsBefore, 'skipped Redis operations show in reprox_cache_store_errors_total');
});
