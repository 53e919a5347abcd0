// Upstream failures map to OpenAI-style errors and are never cached.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

function assertOpenAiError(res, status) {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') || '', /application\/json/);
  assert.ok(res.json && res.json.error, `an OpenAI error object: ${res.text}`);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.json.error.message.length > 0);
  assert.ok('type' in res.json.error);
}

test('upstream failures', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { config: { upstream: { first_byte_timeout_ms: 500 } } });

  async function onlyIfCached(text) {
    return h.postChat(proxy, h.chatBody({}, text), { 'cache-control': 'only-if-cached' });
  }

  await t.test('500 becomes 502 with an OpenAI error, and is not cached', async () => {
    const text = `fail500 ${Date.now()}`;
    for (const stream of [false, true]) {
      const res = await h.postChat(proxy, h.chatBody({ stream, user: 'status=500' }, text));
      assertOpenAiError(res, 502);
    }
    assert.equal((await onlyIfCached(text)).status, 504);
    const ok = await h.postChat(proxy, h.chatBody({}, text));
    assert.equal(ok.status, 200);
    assert.equal(ok.cache, 'miss');
  });

  await t.test('429 passes through', async () => {
    const text = `fail429 ${Date.now()}`;
    const res = await h.postChat(proxy, h.chatBody({ user: 'status=429' }, text));
    assertOpenAiError(res, 429);
    assert.equal((await onlyIfCached(text)).status, 504);
  });

  await t.test('without a model, the request is a 400 naming it, not a 404 for model \'\'', async () => {
    const body = h.chatBody();
    delete body.model;
    for (const stream of [false, true]) {
      const res = await h.postChat(proxy, Object.assign({ stream }, body));
      assertOpenAiError(res, 400);
      assert.equal(res.json.error.param, 'model');
      assert.match(res.json.error.message, /Missing required parameter: 'model'/);
    }
  });

  await t.test('a 400 from the upstream stays a 400', async () => {
    const res = await h.postChat(proxy, h.chatBody({ user: 'status=400;message=nope' }));
    assertOpenAiError(res, 400);
    assert.match(res.json.error.message, /nope/);
  });

  await t.test('a cut stream ends with an error event and nothing is cached', async () => {
    const text = `cut ${Date.now()}`;
    const res = await h.postChat(proxy, h.chatBody({ stream: true, user: 'cut_after=4;words=10;delay_chunk_ms=100' }, text));
    assert.equal(res.status, 200, 'the stream had started');
    assert.match(h.streamContent(h.parseSse(res.text))[0], /^seed=42 /, 'the pieces before the cut were relayed');
    const events = h.parseSse(res.text);
    assert.notEqual(events[events.length - 1], '[DONE]', 'no [DONE] after a failure');
    assert.ok(events[events.length - 1].error, 'the last event is an error');
    assert.equal((await onlyIfCached(text)).status, 504);
    const json = await h.postChat(proxy, h.chatBody({ user: 'cut_after=4;words=10' }, text));
    assertOpenAiError(json, 502);
    assert.equal((await onlyIfCached(text)).status, 504);
    // Cut before the client saw anything: an error status instead of a stream.
    const early = await h.postChat(proxy, h.chatBody({ stream: true, user: 'cut_after=4;words=10' }, text));
    if (early.status === 200) assert.ok(h.parseSse(early.text).pop().error, early.text);
    else assertOpenAiError(early, 502);
    assert.equal((await onlyIfCached(text)).status, 504);
  });

  await t.test('an invalid chunk fails the answer and nothing is cached', async () => {
    const text = `badjson ${Date.now()}`;
    const res = await h.postChat(proxy, h.chatBody({ user: 'invalid_json;words=4' }, text));
    assert.ok(res.status >= 500 && res.status < 600, `${res.status} ${res.text}`);
    assert.ok(res.json && res.json.error);
    assert.equal((await onlyIfCached(text)).status, 504);
  });

  await t.test('a slow first byte beyond the timeout gives 504', async () => {
    const text = `slow ${Date.now()}`;
    const started = Date.now();
    const res = await h.postChat(proxy, h.chatBody({ user: 'delay_first_ms=3000' }, text));
    const elapsed = Date.now() - started;
    assertOpenAiError(res, 504);
    assert.ok(elapsed < 2500, `answered after ${elapsed} ms`);
    assert.equal((await onlyIfCached(text)).status, 504);
  });

  await t.test('an unreachable upstream gives 502', async () => {
    const dead = await h.startUpstream();
    const port = dead.port;
    await dead.stop();
    const p = await h.startReprox({ base: `http://127.0.0.1:${port}` });
    try {
      const res = await h.postChat(p, h.chatBody());
      assert.ok(res.status === 502 || res.status === 503 || res.status === 504, `${res.status} ${res.text}`);
      assert.ok(res.json.error);
      const health = await fetch(`${p.base}/healthz`);
      assert.ok(health.status === 200 || health.status === 503);
    } finally {
      await p.stop();
    }
  });
});
