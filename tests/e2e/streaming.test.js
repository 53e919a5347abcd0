// Streamed misses and hits: one stored entry serves both shapes, and a
// streamed hit replays the original delta sequence.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

function checkStream(events) {
  assert.equal(events[events.length - 1], '[DONE]', 'the stream ends with [DONE]');
  const chunks = events.slice(0, -1);
  assert.ok(chunks.length > 0);
  const ids = new Set(chunks.map((e) => e.id));
  assert.equal(ids.size, 1, 'one id per streamed answer');
  for (const e of chunks) assert.equal(e.object, 'chat.completion.chunk');
  return chunks;
}

test('streaming', async (t) => {
  const { upstream, proxy } = await h.startStack(t);

  await t.test('a streamed hit replays the streamed miss', async () => {
    const body = h.chatBody({ stream: true, user: 'words=12' });
    const miss = await h.postChat(proxy, body);
    assert.equal(miss.status, 200, miss.text);
    assert.equal(miss.cache, 'miss');
    assert.match(miss.headers.get('content-type'), /^text\/event-stream/);
    const missEvents = h.parseSse(miss.text);
    const missChunks = checkStream(missEvents);
    assert.ok(missChunks.length >= 12, 'one chunk per upstream piece');
    assert.equal(missChunks[0].choices[0].delta.role, 'assistant');
    assert.equal(missChunks[missChunks.length - 1].choices[0].finish_reason, 'stop');
    assert.ok(missChunks.every((e) => !e.usage), 'no usage chunk unless asked for');

    const hit = await h.postChat(proxy, body);
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.key, miss.key);
    assert.match(hit.headers.get('content-type'), /^text\/event-stream/);
    const hitEvents = h.parseSse(hit.text);
    checkStream(hitEvents);
    assert.deepEqual(h.stripMeta(hitEvents), h.stripMeta(missEvents));
    assert.notEqual(hitEvents[0].id, missEvents[0].id, 'a fresh id per answer');
    assert.equal(h.streamContent(hitEvents)[0], h.streamContent(missEvents)[0]);
  });

  await t.test('a JSON hit after a streamed miss gives the same content', async () => {
    const text = `stream-then-json ${Date.now()}`;
    const streamed = await h.postChat(proxy, h.chatBody({ stream: true, user: 'words=5' }, text));
    assert.equal(streamed.cache, 'miss');
    const content = h.streamContent(h.parseSse(streamed.text))[0];
    const json = await h.postChat(proxy, h.chatBody({ user: 'words=5' }, text));
    assert.equal(json.cache, 'hit');
    assert.equal(json.key, streamed.key, 'stream is not part of the key');
    assert.equal(json.json.choices[0].message.content, content);
    assert.equal(json.json.choices[0].finish_reason, 'stop');
  });

  await t.test('a streamed hit after a JSON miss gives the same content', async () => {
    const text = `json-then-stream ${Date.now()}`;
    const json = await h.postChat(proxy, h.chatBody({ user: 'words=4' }, text));
    assert.equal(json.cache, 'miss');
    const streamed = await h.postChat(proxy, h.chatBody({ stream: true }, text));
    assert.equal(streamed.cache, 'hit');
    const events = h.parseSse(streamed.text);
    checkStream(events);
    assert.equal(h.streamContent(events)[0], json.json.choices[0].message.content);
  });

  await t.test('stream_options.include_usage adds the usage chunk, on a miss and on a hit', async () => {
    const body = h.chatBody({ stream: true, stream_options: { include_usage: true }, user: 'words=3' });
    for (const expected of ['miss', 'hit']) {
      const res = await h.postChat(proxy, body);
      assert.equal(res.cache, expected);
      const chunks = checkStream(h.parseSse(res.text));
      const last = chunks[chunks.length - 1];
      assert.deepEqual(last.choices, []);
      assert.ok(last.usage, 'the last chunk carries usage');
      assert.ok(last.usage.completion_tokens > 0);
      assert.equal(last.usage.total_tokens, last.usage.prompt_tokens + last.usage.completion_tokens);
      assert.ok(chunks.slice(0, -1).every((e) => !e.usage));
    }
    // The same request without include_usage hits the same entry and has no usage chunk.
    const plain = await h.postChat(proxy, Object.assign({}, body, { stream_options: undefined }));
    assert.equal(plain.cache, 'hit');
    assert.ok(checkStream(h.parseSse(plain.text)).every((e) => !e.usage));
  });

  await t.test('n=2 interleaved choices replay in the same order', async () => {
    const body = h.chatBody({ stream: true, n: 2, user: 'words=3' });
    const miss = await h.postChat(proxy, body);
    const hit = await h.postChat(proxy, body);
    assert.equal(miss.cache, 'miss');
    assert.equal(hit.cache, 'hit');
    const missEvents = h.parseSse(miss.text);
    assert.deepEqual(h.stripMeta(h.parseSse(hit.text)), h.stripMeta(missEvents));
    const contents = h.streamContent(missEvents);
    assert.match(contents[0], /choice=0/);
    assert.match(contents[1], /choice=1/);
    const json = await h.postChat(proxy, Object.assign({}, body, { stream: false }));
    assert.equal(json.cache, 'hit');
    assert.deepEqual(json.json.choices.map((c) => c.message.content), contents);
  });

  await t.test('upstream saw one request per miss', async () => {
    const c = await upstream.count();
    assert.equal(c.aborted, 0);
  });
});
