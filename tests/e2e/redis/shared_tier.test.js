// Two reprox instances A and B sharing one real Redis and one scripted
// upstream: a miss on A is a Redis hit on B, concurrent identical requests
// generate once across instances, and a purge on A is seen by B.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { chatBody, postChat, parseSse, stripMeta, sleep } = require('../harness.js');
const { startRedis, startInstances, metricSum, waitFor } = require('./redis_harness.js');

const ADMIN = 'e2e-admin-token';

test('shared Redis tier across two instances', async (t) => {
  const redis = await startRedis(t);
  // [redis] from the config file: count the Redis tier every 100 ms.
  const { upstream, proxies } = await startInstances(t, redis.url, 2, ['--admin-token', ADMIN],
                                                     { redis: { stats_interval_ms: 100 } });
  const [a, b] = proxies;

  await t.test('a miss on A is a redis hit on B, then a memory hit', async () => {
    const body = chatBody({ seed: 7 });
    await upstream.reset();
    const miss = await postChat(a, body);
    assert.strictEqual(miss.status, 200, miss.text);
    assert.strictEqual(miss.cache, 'miss');
    // The put to Redis is asynchronous: wait until the entry is there.
    for (let i = 0; i < 100 && !redis.hasEntry(miss.key); ++i) await sleep(20);
    assert.ok(redis.hasEntry(miss.key), 'A stored the entry in Redis');

    const first = await postChat(b, body);
    assert.strictEqual(first.status, 200, first.text);
    assert.strictEqual(first.cache, 'hit');
    assert.strictEqual(first.headers.get('x-reprox-tier'), 'redis');
    assert.strictEqual(first.key, miss.key);
    assert.deepStrictEqual(first.json.choices, miss.json.choices);

    const second = await postChat(b, body);
    assert.strictEqual(second.cache, 'hit');
    assert.strictEqual(second.headers.get('x-reprox-tier'), 'memory');
    assert.deepStrictEqual(second.json.choices, miss.json.choices);
    // Byte for byte apart from id and created: the Redis hit renders from
    // the entry's bytes, the memory hit from the decoded generation.
    const sansIdAndCreated = (text) => text.replace(/"id":"[^"]*"/, '"id":""').replace(/"created":\d+/, '"created":0');
    assert.strictEqual(sansIdAndCreated(first.text), sansIdAndCreated(miss.text));
    assert.strictEqual(sansIdAndCreated(second.text), sansIdAndCreated(miss.text));
    assert.strictEqual((await upstream.count()).total, 1, 'one upstream generation for three answers');
  });

  await t.test('concurrent identical requests on A and B generate once', async () => {
    // A slow stream (12 chunks, 80 ms apart) keeps the leader busy ~1 s.
    const body = chatBody({ seed: 11, stream: true },
                          `single flight ${process.pid}-${Date.now()} [[scripted: delay_chunk_ms=80; words=10]]`);
    await upstream.reset();
    const onA = postChat(a, body);
    await sleep(30);
    const onB = postChat(b, body);
    const [ra, rb] = await Promise.all([onA, onB]);
    assert.strictEqual(ra.status, 200, ra.text);
    assert.strictEqual(rb.status, 200, rb.text);
    assert.strictEqual(ra.key, rb.key);
    assert.strictEqual((await upstream.count()).total, 1, 'exactly one upstream generation');
    const ea = stripMeta(parseSse(ra.text));
    const eb = stripMeta(parseSse(rb.text));
    assert.ok(ea.length > 10, `a real stream: ${ra.text}`);
    assert.deepStrictEqual(eb, ea, 'identical choices on both instances');
  });

  await t.test('a purge on A is seen by B', async () => {
    const neverOnB = chatBody({ seed: 21 });  // in Redis only, never in B's memory tier
    const cachedOnB = chatBody({ seed: 22 }); // in Redis and in B's memory tier
    for (const body of [neverOnB, cachedOnB]) {
      const r = await postChat(a, body);
      assert.strictEqual(r.cache, 'miss');
      for (let i = 0; i < 100 && !redis.hasEntry(r.key); ++i) await sleep(20);
    }
    const warm = await postChat(b, cachedOnB);
    assert.strictEqual(warm.headers.get('x-reprox-tier'), 'redis');
    assert.strictEqual((await postChat(b, cachedOnB)).headers.get('x-reprox-tier'), 'memory');

    const purge = await fetch(`${a.base}/reprox/v1/purge`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ all: true }),
    });
    assert.strictEqual(purge.status, 200);
    const purged = await purge.json();
    assert.strictEqual(purged.shared_tier, 'invalidated', `Redis took the purge: ${JSON.stringify(purged)}`);
    assert.ok(Number.isInteger(purged.purged), JSON.stringify(purged));

    // At once: B checks Redis entries against the purge epochs in Redis.
    const after = await postChat(b, neverOnB);
    assert.strictEqual(after.cache, 'miss', 'B misses a purged Redis entry right after the purge');
    // B's own memory copy goes when B sees epoch:seq change: on its next
    // Redis lookup (just made above) or its idle poll (100 ms).
    const again = await postChat(b, cachedOnB);
    assert.strictEqual(again.cache, 'miss', 'B dropped its memory copy of a purged entry');
  });

  await t.test('reprox_cache_entries/bytes{tier="redis"} count the shared entries', async () => {
    await fetch(`${a.base}/reprox/v1/purge`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ all: true }),
    });
    const keys = [];
    for (const seed of [31, 32, 33]) {
      const r = await postChat(a, chatBody({ seed }));
      assert.strictEqual(r.cache, 'miss');
      for (let i = 0; i < 100 && !redis.hasEntry(r.key); ++i) await sleep(20);
      keys.push(r.key);
    }
    const bytes = keys.reduce((n, k) => n + Number(redis.cli('STRLEN', `reprox:v1:${k}`)), 0);
    assert.ok(bytes > 0);
    // Both instances count the same shared tier; the purged entries are not
    // counted (and the count deletes them from Redis).
    for (const p of [a, b]) {
      const seen = await waitFor(async () => (await metricSum(p.base, 'reprox_cache_entries', { tier: 'redis' })) === 3 &&
                                             (await metricSum(p.base, 'reprox_cache_bytes', { tier: 'redis' })) === bytes, 5000);
      assert.ok(seen, `gauges on ${p.base}: entries ${await metricSum(p.base, 'reprox_cache_entries', { tier: 'redis' })}, ` +
                      `bytes ${await metricSum(p.base, 'reprox_cache_bytes', { tier: 'redis' })}, want 3 / ${bytes}`);
    }
    const left = redis.cli('--scan', '--pattern', 'reprox:v1:*').split('\n')
      .filter((k) => /^reprox:v1:[0-9a-f]{64}$/.test(k));
    assert.deepStrictEqual(left.sort(), keys.map((k) => `reprox:v1:${k}`).sort(), 'stale entries were reclaimed');
  });
});
