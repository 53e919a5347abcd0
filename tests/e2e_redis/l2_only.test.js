// --cache-bytes 0 turns the memory tier off: with --redis every hit is read
// from Redis (the benchmark's "L2 only" setup relies on this).
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { chatBody, postChat, sleep } = require('../e2e/harness.js');
const { startRedis, startInstances } = require('./redis_harness.js');

test('--cache-bytes 0: every hit comes from Redis', async (t) => {
  const redis = await startRedis(t);
  const { upstream, proxies } = await startInstances(t, redis.url, 1, ['--cache-bytes', '0']);
  const [a] = proxies;
  const body = chatBody({ seed: 3 });
  const miss = await postChat(a, body);
  assert.strictEqual(miss.cache, 'miss');
  for (let i = 0; i < 100 && !redis.hasEntry(miss.key); ++i) await sleep(20);
  for (let i = 0; i < 3; ++i) {
    const hit = await postChat(a, body);
    assert.strictEqual(hit.cache, 'hit');
    assert.strictEqual(hit.headers.get('x-reprox-tier'), 'redis');
    assert.deepStrictEqual(hit.json.choices, miss.json.choices);
  }
  assert.strictEqual((await upstream.count()).total, 1);
});
