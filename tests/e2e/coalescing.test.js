// Single-flight: identical requests in flight share one upstream generation.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

// Opens a streamed request and returns helpers to read it incrementally.
async function openStream(proxy, body) {
  const res = await fetch(`${proxy.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
    body: JSON.stringify(body),
  });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    res,
    cache: res.headers.get('x-reprox-cache'),
    async readUntil(predicate) {
      while (!predicate(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      return text;
    },
    async readAll() { return this.readUntil(() => false); },
  };
}

test('coalescing', async (t) => {
  const { upstream, proxy } = await h.startStack(t);

  await t.test('50 concurrent identical requests make one upstream call', async () => {
    const base = h.chatBody({ user: 'delay_first_ms=150;delay_chunk_ms=10;words=20' });
    const before = (await upstream.count()).total;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      h.postChat(proxy, Object.assign({}, base, { stream: i % 2 === 0 }))));
    assert.equal((await upstream.count()).total - before, 1, 'exactly one upstream call');
    const kinds = {};
    for (const r of results) {
      assert.equal(r.status, 200, r.text);
      kinds[r.cache] = (kinds[r.cache] || 0) + 1;
    }
    assert.equal(kinds.miss, 1, JSON.stringify(kinds));
    assert.ok(kinds.coalesced > 0, JSON.stringify(kinds));
    assert.equal((kinds.miss || 0) + (kinds.coalesced || 0) + (kinds.hit || 0), 50);
    const keys = new Set(results.map((r) => r.key));
    assert.equal(keys.size, 1);
    const contents = results.map((r, i) =>
      i % 2 === 0 ? h.streamContent(h.parseSse(r.text))[0] : r.json.choices[0].message.content);
    assert.equal(new Set(contents).size, 1, 'identical choices everywhere');
    assert.match(contents[0], / w20$/);
    const streamed = results.filter((_, i) => i % 2 === 0).map((r) => JSON.stringify(h.stripMeta(h.parseSse(r.text))));
    assert.equal(new Set(streamed).size, 1, 'identical delta sequences');
    const ids = new Set(results.map((r, i) => (i % 2 === 0 ? h.parseSse(r.text)[0].id : r.json.id)));
    assert.equal(ids.size, 50, 'each answer has its own id');
  });

  await t.test('a follower that arrives mid-stream gets the full stream from the start', async () => {
    const body = h.chatBody({ stream: true, user: 'delay_chunk_ms=60;words=12' });
    const before = (await upstream.count()).total;
    const leader = await openStream(proxy, body);
    assert.equal(leader.cache, 'miss');
    await leader.readUntil((text) => (text.match(/"content":"[^"]+/g) || []).length >= 3);
    const follower = await openStream(proxy, body);
    assert.equal(follower.cache, 'coalesced');
    const [leaderText, followerText] = await Promise.all([leader.readAll(), follower.readAll()]);
    const leaderEvents = h.parseSse(leaderText);
    const followerEvents = h.parseSse(followerText);
    assert.equal(followerEvents[followerEvents.length - 1], '[DONE]');
    assert.deepEqual(h.stripMeta(followerEvents), h.stripMeta(leaderEvents));
    assert.match(h.streamContent(followerEvents)[0], /^seed=42 choice=0 .* w12$/);
    assert.equal((await upstream.count()).total - before, 1);
    const after = await h.postChat(proxy, body);
    assert.equal(after.cache, 'hit');
  });

  await t.test('a non-streamed follower of a streamed leader gets the whole answer', async () => {
    const text = `mixed ${Date.now()}`;
    const leader = await openStream(proxy, h.chatBody({ stream: true, user: 'delay_chunk_ms=40;words=8' }, text));
    await leader.readUntil((t2) => t2.includes('"content"'));
    const follower = await h.postChat(proxy, h.chatBody({ user: 'anything' }, text));
    assert.equal(follower.cache, 'coalesced');
    const leaderEvents = h.parseSse(await leader.readAll());
    assert.equal(follower.json.choices[0].message.content, h.streamContent(leaderEvents)[0]);
  });
});
