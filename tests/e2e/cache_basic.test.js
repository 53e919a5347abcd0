// Miss then hit, seed injection and echo, key headers.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

test('chat completions: miss then hit, seed injected and echoed', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { args: ['--admin-token', 'adm'] });

  await t.test('a miss then a hit with identical choices', async () => {
    const body = h.chatBody();
    const before = (await upstream.count()).total;
    const miss = await h.postChat(proxy, body);
    assert.equal(miss.status, 200, miss.text);
    assert.equal(miss.cache, 'miss');
    assert.match(miss.key, /^[0-9a-f]{64}$/);
    assert.equal(miss.headers.get('x-reprox-seed'), '42');
    assert.equal(miss.headers.get('age'), null, 'a miss carries no age');
    const seen = await upstream.last();
    assert.equal(seen.body.seed, 42, 'the default seed is injected upstream');
    assert.match(miss.json.choices[0].message.content, /^seed=42 choice=0 model=scripted-model echo: hello/);

    const hit = await h.postChat(proxy, body);
    assert.equal(hit.status, 200);
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.key, miss.key);
    assert.equal(hit.headers.get('x-reprox-seed'), '42');
    assert.match(hit.headers.get('age') || '', /^\d+$/);
    assert.deepEqual(hit.json.choices, miss.json.choices);
    assert.deepEqual(hit.json.usage, miss.json.usage);
    assert.equal(hit.json.system_fingerprint, miss.json.system_fingerprint);
    assert.equal(hit.json.model, miss.json.model);
    assert.equal(hit.json.object, 'chat.completion');
    assert.match(hit.json.id, /^chatcmpl-/);
    assert.notEqual(hit.json.id, miss.json.id, 'every answer gets a fresh id');
    assert.equal((await upstream.count()).total - before, 1, 'the hit did not reach the upstream');
  });

  await t.test('a given seed is echoed, sent upstream and changes the key', async () => {
    const text = `seeded ${Date.now()}`;
    const unseeded = await h.postChat(proxy, h.chatBody({}, text));
    const seeded = await h.postChat(proxy, h.chatBody({ seed: 7 }, text));
    assert.equal(seeded.status, 200);
    assert.equal(seeded.cache, 'miss');
    assert.equal(seeded.headers.get('x-reprox-seed'), '7');
    assert.equal((await upstream.last()).body.seed, 7);
    assert.notEqual(seeded.key, unseeded.key);
    assert.match(seeded.json.choices[0].message.content, /^seed=7 /);
    // Sending the default seed explicitly is the same request as leaving it out.
    const explicit42 = await h.postChat(proxy, h.chatBody({ seed: 42 }, text));
    assert.equal(explicit42.cache, 'hit');
    assert.equal(explicit42.key, unseeded.key);
  });

  await t.test('field order and whitespace do not change the key', async () => {
    const text = `order ${Date.now()}`;
    const a = await h.postChat(proxy, `{"model":"scripted-model","temperature":0.5,"messages":[{"role":"user","content":"${text}"}]}`);
    const b = await h.postChat(proxy, `{ "messages" : [ {"content":"${text}", "role":"user"} ],\n "temperature": 5e-1, "model":"scripted-model" }`);
    assert.equal(a.cache, 'miss');
    assert.equal(b.cache, 'hit');
    assert.equal(b.key, a.key);
  });

  await t.test('a field reprox does not know goes upstream and into the key', async () => {
    const text = `other ${Date.now()}`;
    const high = await h.postChat(proxy, h.chatBody({ reasoning_effort: 'high' }, text));
    assert.equal(high.status, 200, high.text);
    assert.equal(high.cache, 'miss');
    assert.equal((await upstream.last()).body.reasoning_effort, 'high');
    const low = await h.postChat(proxy, h.chatBody({ reasoning_effort: 'low' }, text));
    assert.equal(low.cache, 'miss', 'an answer for another reasoning_effort is not reused');
    assert.equal((await upstream.last()).body.reasoning_effort, 'low');
    assert.notEqual(low.key, high.key);
    const again = await h.postChat(proxy, h.chatBody({ reasoning_effort: 'high' }, text));
    assert.equal(again.cache, 'hit');
    assert.equal(again.key, high.key);
    const none = await h.postChat(proxy, h.chatBody({}, text));
    assert.equal(none.cache, 'miss', 'leaving the field out is another request');
  });

  await t.test('hits of several entries, interleaved, each replay their own answer with fresh ids', async () => {
    const bodies = [1, 2, 3].map((w) => h.chatBody({ user: `words=${w}` }));
    const misses = [];
    for (const b of bodies) misses.push(await h.postChat(proxy, b));
    const ids = new Set(misses.map((m) => m.json.id));
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < bodies.length; i++) {
        const hit = await h.postChat(proxy, bodies[i]);
        assert.equal(hit.cache, 'hit');
        const { id, created, ...rest } = hit.json;
        const { id: id0, created: created0, ...rest0 } = misses[i].json;
        assert.deepEqual(rest, rest0);
        assert.ok(!ids.has(id), 'a fresh id per answer');
        ids.add(id);
        assert.ok(Math.abs(created - Math.floor(Date.now() / 1000)) <= 2, 'created is the time of this answer');
      }
    }
  });

  await t.test('after a purge, a regenerated entry is answered, never the old one', async () => {
    const text = `regenerated ${Date.now()}`;
    const first = await h.postChat(proxy, h.chatBody({ user: 'words=2' }, text));
    assert.equal((await h.postChat(proxy, h.chatBody({}, text))).cache, 'hit');
    for (let i = 0; i < 3; i++) {
      const purge = await fetch(`${proxy.base}/reprox/v1/purge`, {
        method: 'POST', headers: { authorization: 'Bearer adm' }, body: '{"all":true}' });
      assert.equal(purge.status, 200);
      // `user` steers the scripted upstream but is not part of the key.
      const words = 5 + i;
      const again = await h.postChat(proxy, h.chatBody({ user: `words=${words}` }, text));
      assert.equal(again.cache, 'miss');
      assert.equal(again.key, first.key);
      const hit = await h.postChat(proxy, h.chatBody({}, text));
      assert.equal(hit.cache, 'hit');
      assert.match(hit.json.choices[0].message.content, new RegExp(` w${words}$`));
      assert.equal(hit.json.choices[0].message.content, again.json.choices[0].message.content);
    }
  });
});
