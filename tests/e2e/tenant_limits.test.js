// Per-tenant limits ([tenant]): requests in progress at once and a request
// rate per API key; beyond them 429 with Retry-After and an OpenAI-style
// error, counted in reprox_tenant_rejections_total{reason}. Other API keys
// are not affected.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

async function rejections(proxy, reason) {
  const text = await (await fetch(`${proxy.base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('reprox_tenant_rejections_total{') && line.includes(`reason="${reason}"`))
      sum += Number(line.split(' ').pop());
  return sum;
}

test('concurrency per API key: the second slow request of one key gets 429, another key does not', async (t) => {
  const { proxy } = await h.startStack(t, { config: { tenant: { max_concurrent: 1 } } });
  const slow = (text) => h.chatBody({ stream: false }, `${text} ${Date.now()} [[scripted: delay_first_ms=800]]`);
  const first = h.postChat(proxy, slow('one'), { authorization: 'Bearer key-a' });
  await h.sleep(200);
  const second = await h.postChat(proxy, slow('two'), { authorization: 'Bearer key-a' });
  assert.equal(second.status, 429);
  assert.equal(second.headers.get('retry-after'), '1');
  assert.equal(second.json.error.code, 'rate_limit_exceeded');
  assert.equal(second.json.error.type, 'requests');
  const other = await h.postChat(proxy, slow('three'), { authorization: 'Bearer key-b' });
  assert.equal(other.status, 200, 'another API key has its own slot');
  assert.equal((await first).status, 200);
  const again = await h.postChat(proxy, slow('four'), { authorization: 'Bearer key-a' });
  assert.equal(again.status, 200, 'the slot came back');
  assert.equal(await rejections(proxy, 'concurrency'), 1);
});

test('request rate per API key: a token bucket, Retry-After says when', async (t) => {
  const { proxy } = await h.startStack(t, { config: { tenant: { requests_per_second: 1, burst: 3 } } });
  const statuses = [];
  let retryAfter = null;
  for (let i = 0; i < 5; i++) {
    const r = await h.postChat(proxy, h.chatBody(), { authorization: 'Bearer key-r' });
    statuses.push(r.status);
    if (r.status === 429) retryAfter = r.headers.get('retry-after');
  }
  assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
  assert.ok(statuses.slice(3).includes(429), `statuses ${statuses}`);
  assert.ok(Number(retryAfter) >= 1, retryAfter);
  assert.equal((await h.postChat(proxy, h.chatBody(), { authorization: 'Bearer key-s' })).status, 200);
  await h.sleep(1100);
  assert.equal((await h.postChat(proxy, h.chatBody(), { authorization: 'Bearer key-r' })).status, 200, 'refilled');
  assert.ok(await rejections(proxy, 'rate') >= 1);
});
