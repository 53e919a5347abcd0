// Client disconnects: partial answers are never stored, and a leader's
// disconnect does not end a generation that others still read.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

async function openStream(proxy, body, signal) {
  const res = await fetch(`${proxy.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
    body: JSON.stringify(body),
    signal,
  });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    cache: res.headers.get('x-reprox-cache'),
    async readChunks(k) {
      while ((text.match(/^data: \{/gm) || []).length < k) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      return text;
    },
    async readAll() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

async function waitFor(predicate, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await h.sleep(50);
  }
  return false;
}

test('client disconnects', async (t) => {
  const { upstream, proxy } = await h.startStack(t);

  await t.test('a client that leaves mid-stream leaves no cache entry', async () => {
    const text = `leave ${Date.now()}`;
    const abortedBefore = (await upstream.count()).aborted;
    const controller = new AbortController();
    const s = await openStream(proxy, h.chatBody({ stream: true, user: 'delay_chunk_ms=100;words=30' }, text), controller.signal);
    assert.equal(s.cache, 'miss');
    await s.readChunks(3);
    controller.abort();
    assert.ok(await waitFor(async () => (await upstream.count()).aborted > abortedBefore),
              'the upstream stream was aborted');
    const onlyCached = await h.postChat(proxy, h.chatBody({}, text), { 'cache-control': 'only-if-cached' });
    assert.equal(onlyCached.status, 504, 'nothing was stored');
    // `user` carries the upstream's directives and is not part of the key.
    const again = await h.postChat(proxy, h.chatBody({ user: 'words=30' }, text));
    assert.equal(again.cache, 'miss');
    assert.match(again.json.choices[0].message.content, / w30$/);
    const hit = await h.postChat(proxy, h.chatBody({ stream: true }, text));
    assert.equal(hit.cache, 'hit', 'the later full answer is stored and replayed');
    assert.equal(h.streamContent(h.parseSse(hit.text))[0], again.json.choices[0].message.content);
  });

  await t.test('a non-streamed client that leaves while waiting cancels the generation', async () => {
    const text = `leave-json ${Date.now()}`;
    const abortedBefore = (await upstream.count()).aborted;
    const controller = new AbortController();
    const pending = fetch(`${proxy.base}/v1/chat/completions`, {
      method: 'POST', signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
      body: JSON.stringify(h.chatBody({ user: 'delay_chunk_ms=100;words=30' }, text)),
    }).catch((e) => e);
    await h.sleep(400);
    controller.abort();
    await pending;
    assert.ok(await waitFor(async () => (await upstream.count()).aborted > abortedBefore),
              'the upstream stream was aborted');
    const onlyCached = await h.postChat(proxy, h.chatBody({}, text), { 'cache-control': 'only-if-cached' });
    assert.equal(onlyCached.status, 504);
  });

  await t.test('the leader leaving does not end a generation another client reads', async () => {
    const text = `shared ${Date.now()}`;
    const body = h.chatBody({ stream: true, user: 'delay_chunk_ms=60;words=15' }, text);
    const abortedBefore = (await upstream.count()).aborted;
    const totalBefore = (await upstream.count()).total;
    const controller = new AbortController();
    const leader = await openStream(proxy, body, controller.signal);
    assert.equal(leader.cache, 'miss');
    await leader.readChunks(2);
    const follower = await openStream(proxy, body);
    assert.equal(follower.cache, 'coalesced');
    await follower.readChunks(3);
    controller.abort();
    const events = h.parseSse(await follower.readAll());
    assert.equal(events[events.length - 1], '[DONE]');
    assert.match(h.streamContent(events)[0], / w15$/);
    const c = await upstream.count();
    assert.equal(c.aborted, abortedBefore, 'the upstream stream was not aborted');
    assert.equal(c.total - totalBefore, 1);
    const repeat = await h.postChat(proxy, h.chatBody({}, text));
    assert.equal(repeat.cache, 'hit');
    assert.equal(repeat.json.choices[0].message.content, h.streamContent(events)[0]);
  });
});
