// --cache-bytes 0 turns the memory tier off: with --redis every hit is read
// from Redis (the benchmark's "L2 only" setup relies on this).
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { chatBody, postChat, sleep } = require('../harness.js');
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

// Which path a Redis hit takes shows in Redis's own command counters: the
// I/O threads' lookups send plain MGETs, the worker path the Lua script
// (EVALSHA, whose own calls inside count as well).
function commandCalls(redis, name) {
  const m = redis.cli('INFO', 'commandstats').match(new RegExp(`cmdstat_${name}:calls=(\\d+)`));
  return m ? Number(m[1]) : 0;
}

for (const ioLookups of [true, false]) {
  test(`[redis] io_lookups = ${ioLookups}: hits take the ${ioLookups ? 'I/O-thread MGET' : 'worker Lua'} path`, async (t) => {
    const redis = await startRedis(t);
    const { proxies } = await startInstances(t, redis.url, 1, ['--cache-bytes', '0'], { redis: { io_lookups: ioLookups } });
    const [a] = proxies;
    const body = chatBody({ seed: 4 });
    const miss = await postChat(a, body);
    assert.strictEqual(miss.cache, 'miss');
    for (let i = 0; i < 100 && !redis.hasEntry(miss.key); ++i) await sleep(20);
    await sleep(200);  // the channels have connected
    const mget0 = commandCalls(redis, 'mget');
    const evalsha0 = commandCalls(redis, 'evalsha');
    for (let i = 0; i < 5; ++i) {
      const hit = await postChat(a, body);
      assert.strictEqual(hit.cache, 'hit');
      assert.deepStrictEqual(hit.json.choices, miss.json.choices);
    }
    const mgets = commandCalls(redis, 'mget') - mget0;
    const evalshas = commandCalls(redis, 'evalsha') - evalsha0;
    if (ioLookups) {
      assert.ok(mgets >= 5, `MGET calls ${mgets}`);
      assert.strictEqual(evalshas, 0);
    } else {
      assert.ok(evalshas >= 5, `EVALSHA calls ${evalshas}`);  // (the script's own MGETs count too)
    }
  });
}
