// A real client: the npm openai SDK against reprox.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./harness');

const OpenAI = require(path.join(h.npmDir(), 'openai'));

test('openai SDK', async (t) => {
  const { upstream, proxy } = await h.startStack(t);
  const client = new OpenAI({ baseURL: `${proxy.base}/v1`, apiKey: 'test-key', maxRetries: 0 });

  await t.test('non-streaming chat: miss, then hit with the same content', async () => {
    const params = { model: 'scripted-model', messages: [{ role: 'user', content: `sdk json ${Date.now()}` }], user: 'words=6' };
    const first = await client.chat.completions.create(params).withResponse();
    assert.equal(first.response.headers.get('x-reprox-cache'), 'miss');
    assert.equal(first.response.headers.get('x-reprox-seed'), '42');
    const second = await client.chat.completions.create(params).withResponse();
    assert.equal(second.response.headers.get('x-reprox-cache'), 'hit');
    assert.equal(second.response.headers.get('x-reprox-key'), first.response.headers.get('x-reprox-key'));
    assert.equal(second.data.choices[0].message.content, first.data.choices[0].message.content);
    assert.match(first.data.choices[0].message.content, / w6$/);
    assert.equal(second.data.choices[0].finish_reason, 'stop');
    assert.equal(second.data.system_fingerprint, first.data.system_fingerprint);
    assert.equal(second.data.usage.total_tokens, first.data.usage.total_tokens);
  });

  await t.test('streaming chat: miss, then hit with the same content and usage', async () => {
    const params = { model: 'scripted-model', messages: [{ role: 'user', content: `sdk stream ${Date.now()}` }],
                     stream: true, stream_options: { include_usage: true }, user: 'words=9' };
    const collect = async () => {
      const { data: stream, response } = await client.chat.completions.create(params).withResponse();
      let content = '';
      let finish = null;
      let usage = null;
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          content += c.delta.content || '';
          if (c.finish_reason) finish = c.finish_reason;
        }
        if (chunk.usage) usage = chunk.usage;
      }
      return { cache: response.headers.get('x-reprox-cache'), content, finish, usage };
    };
    const first = await collect();
    const second = await collect();
    assert.equal(first.cache, 'miss');
    assert.equal(second.cache, 'hit');
    assert.equal(second.content, first.content);
    assert.match(first.content, / w9$/);
    assert.equal(second.finish, 'stop');
    assert.ok(second.usage && second.usage.completion_tokens > 0);
    assert.deepEqual(second.usage, first.usage);

    // And the non-streamed form of the same request is a hit too.
    const json = await client.chat.completions.create(Object.assign({}, params, { stream: false, stream_options: undefined })).withResponse();
    assert.equal(json.response.headers.get('x-reprox-cache'), 'hit');
    assert.equal(json.data.choices[0].message.content, first.content);
  });

  await t.test('errors surface as SDK errors with the status', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'scripted-model', messages: [{ role: 'user', content: 'x' }], user: 'status=429' }),
      (e) => e instanceof OpenAI.APIError && e.status === 429);
    await assert.rejects(
      client.chat.completions.create({ model: 'scripted-model', messages: 'not a list' }),
      (e) => e instanceof OpenAI.APIError && e.status === 400);
  });

  await t.test('models.list goes through', async () => {
    const page = await client.models.list();
    assert.ok(Array.isArray(page.data));
  });

  assert.ok(upstream);
});
