// Near-duplicate matching across instances: the candidate index lives in
// Redis beside the entries, so an entry stored through instance A answers
// a near-duplicate on instance B; a purge on A ends it on B too.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { chatBody, postChat, sleep } = require('../harness.js');
const { startRedis, startInstances, waitFor } = require('./redis_harness.js');

test('two instances share the near-duplicate index through Redis', async (t) => {
  const redis = await startRedis(t);
  const { upstream, proxies } = await startInstances(t, redis.url, 2, ['--admin-token', 'adm'],
                                                     { cache: { rule: [{ near: 'serve' }] } });
  const [a, b] = proxies;
  const tag = `${Date.now()}`;
  const base = chatBody({ seed: 5 }, `What are your opening hours on weekends, shop ${tag}?`);
  const miss = await postChat(a, base);
  assert.equal(miss.cache, 'miss');
  assert.ok(await waitFor(async () => redis.hasEntry(miss.key), 3000), 'stored in Redis');
  await sleep(200);  // the index write follows the entry's

  const near = chatBody({ seed: 5 }, `what are your opening hours on weekends shop ${tag}`);
  const onB = await postChat(b, near);
  assert.equal(onB.cache, 'near-hit', `headers: ${JSON.stringify([...onB.headers])}`);
  assert.equal(onB.headers.get('x-reprox-near-key'), miss.key);
  assert.equal(onB.headers.get('x-reprox-tier'), 'redis');
  assert.equal((await upstream.count()).total, 1);

  const purge = await fetch(`${a.base}/reprox/v1/purge`, {
    method: 'POST', headers: { authorization: 'Bearer adm' }, body: '{"all": true}' });
  assert.equal(purge.status, 200);
  await sleep(300);  // B drops its L1 on the next epoch poll
  const after = await postChat(b, chatBody({ seed: 5 }, `What are your opening hours on weekends? shop ${tag}`));
  assert.equal(after.cache, 'miss');
});
