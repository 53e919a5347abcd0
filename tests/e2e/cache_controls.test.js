// Request cache controls, namespaces and tenant isolation.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

test('cache controls', async (t) => {
  const { upstream, proxy } = await h.startStack(t);
  const calls = async () => (await upstream.count()).total;
  const post = (body, headers) => h.postChat(proxy, body, headers);

  await t.test('Cache-Control: no-store bypasses and stores nothing', async () => {
    const body = h.chatBody();
    const before = await calls();
    const a = await post(body, { 'cache-control': 'no-store' });
    assert.equal(a.status, 200);
    assert.equal(a.cache, 'bypass');
    assert.match(a.key, /^[0-9a-f]{64}$/);
    const b = await post(body);
    assert.equal(b.cache, 'miss', 'nothing was stored');
    assert.equal(b.key, a.key);
    const c = await post(body, { 'cache-control': 'no-store' });
    assert.equal(c.cache, 'bypass', 'no-store does not read either');
    assert.equal(await calls() - before, 3);
  });

  await t.test('body cache: {"no-store": true} bypasses, and the object is not in the key', async () => {
    const text = `body-no-store ${Date.now()}`;
    const a = await post(h.chatBody({ cache: { 'no-store': true } }, text));
    assert.equal(a.cache, 'bypass');
    const b = await post(h.chatBody({}, text));
    assert.equal(b.cache, 'miss');
    assert.equal(b.key, a.key);
  });

  await t.test('Cache-Control: no-cache regenerates and refreshes the entry', async () => {
    const body = h.chatBody();
    assert.equal((await post(body)).cache, 'miss');
    await h.sleep(1100);
    const old = await post(body);
    assert.equal(old.cache, 'hit');
    assert.ok(Number(old.headers.get('age')) >= 1, `age ${old.headers.get('age')}`);
    const before = await calls();
    const refreshed = await post(body, { 'cache-control': 'no-cache' });
    assert.equal(refreshed.cache, 'miss');
    assert.equal(await calls() - before, 1, 'the upstream was asked again');
    const after = await post(body);
    assert.equal(after.cache, 'hit');
    assert.equal(after.headers.get('age'), '0', 'the entry was refreshed');
  });

  await t.test('body cache: {"no-cache": true} regenerates', async () => {
    const text = `body-no-cache ${Date.now()}`;
    assert.equal((await post(h.chatBody({}, text))).cache, 'miss');
    assert.equal((await post(h.chatBody({ cache: { 'no-cache': true } }, text))).cache, 'miss');
    assert.equal((await post(h.chatBody({}, text))).cache, 'hit');
  });

  await t.test('Cache-Control: max-age', async () => {
    const body = h.chatBody();
    assert.equal((await post(body)).cache, 'miss');
    await h.sleep(1100);
    assert.equal((await post(body, { 'cache-control': 'max-age=60' })).cache, 'hit');
    const tooOld = await post(body, { 'cache-control': 'max-age=0' });
    assert.equal(tooOld.cache, 'miss', 'an entry older than max-age is not served');
    assert.equal((await post(body, { 'cache-control': 'max-age=0' })).cache, 'hit', 'the regenerated entry is fresh');
  });

  await t.test('Cache-Control: only-if-cached', async () => {
    const body = h.chatBody();
    const before = await calls();
    const miss = await post(body, { 'cache-control': 'only-if-cached' });
    assert.equal(miss.status, 504);
    assert.ok(miss.json.error);
    assert.equal(await calls(), before, 'the upstream was not asked');
    assert.equal((await post(body)).cache, 'miss');
    const hit = await post(body, { 'cache-control': 'only-if-cached' });
    assert.equal(hit.status, 200);
    assert.equal(hit.cache, 'hit');
  });

  await t.test('x-reprox-namespace separates entries', async () => {
    const body = h.chatBody();
    const a = await post(body, { 'x-reprox-namespace': 'alpha' });
    const b = await post(body, { 'x-reprox-namespace': 'beta' });
    const none = await post(body);
    assert.deepEqual([a.cache, b.cache, none.cache], ['miss', 'miss', 'miss']);
    assert.equal(new Set([a.key, b.key, none.key]).size, 3);
    assert.equal((await post(body, { 'x-reprox-namespace': 'alpha' })).cache, 'hit');
    const viaBody = await post(Object.assign({ cache: { namespace: 'beta' } }, body));
    assert.equal(viaBody.cache, 'hit', 'the body namespace equals the header namespace');
    assert.equal(viaBody.key, b.key);
  });

  await t.test('different bearer tokens never share entries; the same token does', async () => {
    const body = h.chatBody();
    const a1 = await post(body, { authorization: 'Bearer tenant-a' });
    const b1 = await post(body, { authorization: 'Bearer tenant-b' });
    assert.equal(a1.cache, 'miss');
    assert.equal(b1.cache, 'miss', 'tenant B does not see tenant A\'s entry');
    assert.notEqual(a1.key, b1.key);
    const anon = await post(body, { authorization: '' });
    assert.equal(anon.cache, 'miss');
    const a2 = await post(body, { authorization: 'Bearer tenant-a' });
    const b2 = await post(body, { authorization: 'Bearer tenant-b' });
    assert.deepEqual([a2.cache, b2.cache], ['hit', 'hit']);
    assert.equal(a2.key, a1.key);
    assert.equal(b2.key, b1.key);
  });
});
