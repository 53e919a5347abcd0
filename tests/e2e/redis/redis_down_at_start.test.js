// reprox starts while Redis is down: /healthz says "degraded", answers come
// from the upstream and the memory tier, and once Redis is up caching
// through Redis resumes by itself (a key stored on A is a redis hit on B).
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { chatBody, postChat, sleep } = require('../harness.js');
const { reserveRedis, startInstances, getJson, waitFor, metricSum } = require('./redis_harness.js');

test('starts with Redis down, degrades, recovers when Redis comes up', async (t) => {
  const redis = await reserveRedis(t);  // nothing listens on its port yet
  const url = `${redis.url}?connect_timeout_ms=100&command_timeout_ms=100`;
  const { upstream, proxies } = await startInstances(t, url, 2);
  const [a, b] = proxies;

  // The breaker opens after a few failed connects: degraded, still serving.
  const degraded = await waitFor(async () => {
    await postChat(a, chatBody());  // lookups that fail feed the breaker
    const h = await getJson(a.base, '/healthz');
    return h.json.status === 'degraded' ? h : null;
  }, 10000);
  assert.ok(degraded, 'healthz reports degraded while Redis is down');
  assert.strictEqual(degraded.status, 200);

  const body = chatBody({ seed: 5 });
  const t0 = Date.now();
  const miss = await postChat(a, body);
  assert.strictEqual(miss.status, 200, miss.text);
  assert.strictEqual(miss.cache, 'miss');
  assert.ok(Date.now() - t0 < 1000, 'a miss does not wait on the dead Redis');
  const hit = await postChat(a, body);
  assert.strictEqual(hit.cache, 'hit');
  assert.strictEqual(hit.headers.get('x-reprox-tier'), 'memory');
  assert.deepStrictEqual(hit.json.choices, miss.json.choices);
  assert.ok(await metricSum(a.base, 'reprox_cache_store_errors_total', { tier: 'redis' }) > 0,
            'skipped Redis operations are counted');

  await redis.start();
  const upAt = Date.now();
  const healthy = await waitFor(async () => (await getJson(a.base, '/healthz')).json.status === 'ok', 10000);
  assert.ok(healthy, 'healthz returns to ok once Redis is up');

  // Caching through Redis resumes: a new key stored on A is a redis hit on B.
  const resumed = await waitFor(async () => {
    const fresh = chatBody({ seed: 6 });
    const r = await postChat(a, fresh);
    assert.strictEqual(r.status, 200);
    for (let i = 0; i < 25 && !redis.hasEntry(r.key); ++i) await sleep(20);
    return redis.hasEntry(r.key) ? fresh : null;
  }, 10000, 100);
  assert.ok(resumed, 'A stores new entries in Redis again');
  const before = (await upstream.count()).total;
  const onB = await postChat(b, resumed);
  assert.strictEqual(onB.cache, 'hit');
  assert.strictEqual(onB.headers.get('x-reprox-tier'), 'redis');
  assert.strictEqual((await upstream.count()).total, before, 'B did not generate');
  t.diagnostic(`Redis caching resumed ${Date.now() - upAt} ms after Redis came up`);
});
