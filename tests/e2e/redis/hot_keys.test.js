// Hot keys on the shared tier: the instance that counts an entry's hits
// extends its TTL in Redis (PEXPIRE ... GT, sent after the answer, never
// waited for), step by step up to the rule's max_ttl. Read back with PTTL,
// for memory-tier hits (L1 in front) and for Redis-tier hits (no L1).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { chatBody, postChat, sleep } = require('../harness.js');
const { startRedis, startInstances, metricSum, waitFor } = require('./redis_harness.js');

const CONFIG = { cache: { hot_hits: 3, hot_window: '1s', rule: [{ ttl: 10, max_ttl: '35s' }] } };

async function pttl(redis, key) { return Number(redis.cli('PTTL', `reprox:v1:${key}`)); }

// One window of three hits; then PTTL must reach `atLeastMs`.
async function hotWindow(proxy, redis, body, key, atLeastMs, tier) {
  for (let i = 0; i < 3; i++) {
    const hit = await postChat(proxy, body);
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.headers.get('x-reprox-tier'), tier);
  }
  const reached = await waitFor(async () => (await pttl(redis, key)) >= atLeastMs, 3000);
  assert.ok(reached, `PTTL ${await pttl(redis, key)} ms, expected >= ${atLeastMs}`);
  await sleep(1100);  // the next window
}

for (const [name, args, tier] of [['memory-tier hits (L1 in front)', [], 'memory'],
                                  ['redis-tier hits (no L1)', ['--cache-bytes', '0'], 'redis']]) {
  test(`hot key TTL grows in Redis: ${name}`, async (t) => {
    const redis = await startRedis(t);
    const { proxies } = await startInstances(t, redis.url, 1, args, CONFIG);
    const [proxy] = proxies;
    const body = chatBody();
    const miss = await postChat(proxy, body);
    assert.equal(miss.cache, 'miss');
    assert.ok(await waitFor(async () => redis.hasEntry(miss.key), 3000), 'stored in Redis');
    const start = await pttl(redis, miss.key);
    assert.ok(start > 0 && start <= 10000, `PTTL at store ${start}`);

    await hotWindow(proxy, redis, body, miss.key, 19000, tier);  // step 1: 20 s
    await hotWindow(proxy, redis, body, miss.key, 34000, tier);  // step 2: 40 s, capped at 35 s
    const capped = await pttl(redis, miss.key);
    assert.ok(capped <= 35000, `never past max_ttl: ${capped}`);
    assert.equal(await metricSum(proxy.base, 'reprox_cache_ttl_extensions_total'), 2);
    assert.equal(await metricSum(proxy.base, 'reprox_cache_store_errors_total', { op: 'extend' }), 0);
  });
}
