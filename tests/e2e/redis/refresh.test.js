// With the Redis tier, a refresh (Cache-Control: no-cache) generates a new
// answer and stores it, and a max-age the stored entry is too old for
// generates too: the cross-instance single-flight must not hand either of
// them the entry already stored. The scripted upstream's "nondeterministic"
// directive answers differently each call, so a replay would show.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { chatBody, postChat, sleep } = require('../harness.js');
const { startRedis, startInstances, waitFor } = require('./redis_harness.js');

test('no-cache and a failed max-age generate, with Redis as with memory alone', async (t) => {
  const redis = await startRedis(t);
  const { upstream, proxies } = await startInstances(t, redis.url, 1);
  const [proxy] = proxies;
  const body = chatBody({}, `refresh ${Date.now()} [[scripted: nondeterministic]]`);
  const first = await postChat(proxy, body);
  assert.equal(first.cache, 'miss');
  assert.ok(await waitFor(async () => redis.hasEntry(first.key), 3000), 'stored in Redis');

  const refreshed = await postChat(proxy, body, { 'cache-control': 'no-cache' });
  assert.equal(refreshed.cache, 'miss');
  assert.notEqual(refreshed.json.choices[0].message.content, first.json.choices[0].message.content,
                  'a refresh generates a new answer');
  assert.equal((await upstream.count()).total, 2);
  await sleep(200);
  const hit = await postChat(proxy, body);
  assert.equal(hit.cache, 'hit');
  assert.equal(hit.json.choices[0].message.content, refreshed.json.choices[0].message.content, 'and stores it');

  await sleep(1100);
  const fresh = await postChat(proxy, body, { 'cache-control': 'max-age=0' });
  assert.equal(fresh.cache, 'miss');
  assert.notEqual(fresh.json.choices[0].message.content, refreshed.json.choices[0].message.content);
  assert.equal((await upstream.count()).total, 3);
});
