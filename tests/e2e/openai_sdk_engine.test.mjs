// The real client against the embedded engine: the npm `openai` SDK streams
// and non-streams a chat from the default tiny model, then gets the same
// answer back from the cache.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(process.env.NPM_DIR + '/');
const OpenAI = require('openai').default ?? require('openai');
let client;
const procs = [];

// Starts reprox on the test model with extra environment; its /v1 URL.
async function startReprox(env = {}) {
  const p = spawn(process.env.REPROX_BIN, ['serve', '--listen', '127.0.0.1:0', '--model', process.env.MODEL_DIR],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  procs.push(p);
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error('reprox did not start:\n' + log)), 60000);
    p.stderr.on('data', (d) => {
      log += d;
      const m = /listening on ([\d.]+):(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(`http://${m[1]}:${m[2]}/v1`); }
    });
    p.on('exit', (code) => reject(new Error(`reprox exited ${code}:\n${log}`)));
  });
}

// The value of an unlabelled family on base's /metrics.
async function metricAt(base, name) {
  const text = await (await fetch(base.replace(/\/v1$/, '') + '/metrics')).text();
  const m = new RegExp('^' + name + ' ([0-9.e+]+)$', 'm').exec(text);
  assert.ok(m, `${name} is exported`);
  return Number(m[1]);
}

before(async () => {
  client = new OpenAI({ baseURL: await startReprox(), apiKey: 'sdk-test-key', maxRetries: 0 });
});

after(() => { for (const p of procs) p.kill('SIGKILL'); });

const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Name a colour.' }];

test('non-streaming: miss, then the same answer from the cache', async () => {
  const models = await client.models.list();
  const model = models.data[0].id;
  const first = await client.chat.completions.create({ model, messages, max_tokens: 12 }).withResponse();
  assert.equal(first.response.headers.get('x-reprox-cache'), 'miss');
  assert.equal(first.response.headers.get('x-reprox-seed'), '42');
  assert.ok(first.data.choices[0].message.content.length > 0);
  assert.match(first.data.system_fingerprint, /^fp_[0-9a-f]{16}$/);
  const again = await client.chat.completions.create({ model, messages, max_tokens: 12 }).withResponse();
  assert.equal(again.response.headers.get('x-reprox-cache'), 'hit');
  assert.deepEqual(again.data.choices, first.data.choices);
  assert.notEqual(again.data.id, first.data.id);
});

test('models.retrieve: the served model, and NotFoundError for another', async () => {
  const model = (await client.models.list()).data[0].id;
  const got = await client.models.retrieve(model);
  assert.equal(got.id, model);
  assert.equal(got.object, 'model');
  await assert.rejects(client.models.retrieve('no-such-model'), (e) => {
    assert.ok(e instanceof OpenAI.NotFoundError, String(e));
    assert.equal(e.code, 'model_not_found');
    return true;
  });
});

// vLLM's chat_template_kwargs, sent as an extra body field: Qwen3's
// enable_thinking = false renders an empty think block (4 more prompt
// tokens) under a key of its own.
test('chat_template_kwargs reach the template and the key', async () => {
  const model = (await client.models.list()).data[0].id;
  const body = { model, messages, max_tokens: 2, temperature: 0 };
  const thinking = await client.chat.completions.create(body).withResponse();
  const plain = await client.chat.completions
    .create({ ...body, chat_template_kwargs: { enable_thinking: false } }).withResponse();
  assert.equal(plain.data.usage.prompt_tokens, thinking.data.usage.prompt_tokens + 4);
  assert.notEqual(plain.response.headers.get('x-reprox-key'), thinking.response.headers.get('x-reprox-key'));
  const again = await client.chat.completions
    .create({ ...body, chat_template_kwargs: { enable_thinking: false } }).withResponse();
  assert.equal(again.response.headers.get('x-reprox-cache'), 'hit');
  assert.equal(again.response.headers.get('x-reprox-key'), plain.response.headers.get('x-reprox-key'));
  await assert.rejects(client.chat.completions.create({ ...body, chat_template_kwargs: { messages: [] } }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.param, 'chat_template_kwargs.messages');
    return true;
  });
});

// POSTs `body` to one of reprox's text endpoints (/tokenize, ...); its JSON.
async function textEndpoint(path, body) {
  const root = client.baseURL.replace(/\/v1$/, '');
  const res = await fetch(root + path, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

// vLLM's stop controls as extra body fields, as vLLM's benchmark clients
// send ignore_eos. A +100 logit_bias on eos makes the model end at once.
test('ignore_eos, skip_special_tokens, stop_token_ids and min_tokens', async () => {
  const model = (await client.models.list()).data[0].id;
  const tokenize = async (prompt) => (await textEndpoint('/tokenize', { prompt })).tokens;
  const [eos] = await tokenize('<|im_end|>');
  const body = { model, messages, max_tokens: 6, temperature: 0, logit_bias: { [eos]: 100 } };
  const ended = await client.chat.completions.create(body);
  assert.equal(ended.choices[0].finish_reason, 'stop');
  assert.equal(ended.usage.completion_tokens, 1);
  const ignored = await client.chat.completions.create({ ...body, ignore_eos: true }).withResponse();
  assert.equal(ignored.data.choices[0].finish_reason, 'length');
  assert.equal(ignored.data.usage.completion_tokens, 6);
  assert.equal(ignored.data.choices[0].message.content, '');
  const shown = await client.chat.completions.create({ ...body, ignore_eos: true, skip_special_tokens: false });
  assert.equal(shown.choices[0].message.content, '<|im_end|>'.repeat(6));
  const again = await client.chat.completions.create({ ...body, ignore_eos: true }).withResponse();
  assert.equal(again.response.headers.get('x-reprox-cache'), 'hit');
  assert.equal(again.response.headers.get('x-reprox-key'), ignored.response.headers.get('x-reprox-key'));
  // min_tokens holds eos back; the stream says the same.
  const held = await client.chat.completions.create({ ...body, min_tokens: 3 });
  assert.equal(held.usage.completion_tokens, 4);
  assert.equal(held.choices[0].finish_reason, 'stop');
  let streamed = '';
  for await (const chunk of await client.chat.completions.create({ ...body, min_tokens: 3, stream: true, seed: 7 }))
    streamed += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(streamed, held.choices[0].message.content, 'greedy: the seed does not matter');
  // A stop id ends the answer, without its text unless include_stop_str_in_output.
  const [hello] = await tokenize('Hello');
  const biased = { model, messages, max_tokens: 6, temperature: 0, logit_bias: { [hello]: 100 } };
  assert.equal((await client.chat.completions.create(biased)).choices[0].message.content, 'Hello'.repeat(6));
  const cut = await client.chat.completions.create({ ...biased, stop_token_ids: [hello] });
  assert.equal(cut.choices[0].finish_reason, 'stop');
  assert.equal(cut.choices[0].message.content, '');
  const kept = await client.chat.completions.create({ ...biased, stop_token_ids: [hello],
                                                      include_stop_str_in_output: true });
  assert.equal(kept.choices[0].message.content, 'Hello');
  await assert.rejects(client.chat.completions.create({ ...body, min_tokens: 7 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.param, 'min_tokens');
    return true;
  });
});

// Prefilling the answer: the model continues the final assistant message,
// on the prompt /apply-template shows.
test('continue_final_message continues the final message', async () => {
  const model = (await client.models.list()).data[0].id;
  const started = [...messages, { role: 'assistant', content: 'My favourite colour is' }];
  const extra = { add_generation_prompt: false, continue_final_message: true };
  const { prompt } = await textEndpoint('/apply-template', { messages: started, ...extra });
  assert.ok(prompt.endsWith('My favourite colour is'), prompt);
  const { count } = await textEndpoint('/tokenize', { prompt });
  const continued = await client.chat.completions.create({ model, messages: started, max_tokens: 4, ...extra });
  assert.equal(continued.usage.prompt_tokens, count);
  await assert.rejects(client.chat.completions.create({ model, messages: started, continue_final_message: true }),
    (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.param, 'continue_final_message');
      return true;
    });
});

// JSON mode, structured output and vLLM's guided_choice: answers stay in their language,
// streamed or not. The random test model is biased towards short objects.
test('response_format json_object and json_schema, and guided_choice', async () => {
  const model = (await client.models.list()).data[0].id;
  const logit_bias = {};
  for (const piece of ['{"', 'a', '":', ' ', '1', '}', '<|im_end|>'])
    for (const id of (await textEndpoint('/tokenize', { prompt: piece })).tokens) logit_bias[id] = 12;
  // The engine publishes its counters after each pass: once nothing runs,
  // they include the last one.
  const walks = async () => {
    for (let i = 0; i < 400 && await metricAt(client.baseURL, 'reprox_engine_running_sequences') !== 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    return metricAt(client.baseURL, 'reprox_engine_guide_mask_walks_total');
  };
  let whole = 0;
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const body = { model, messages, max_tokens: 40, seed, logit_bias, response_format: { type: 'json_object' } };
    const answer = await client.chat.completions.create(body);
    const text = answer.choices[0].message.content;
    assert.ok(text.trimStart().startsWith('{'), text);
    if (answer.choices[0].finish_reason === 'stop') {
      whole += 1;
      assert.equal(typeof JSON.parse(text), 'object', text);
    }
    const walked = await walks();
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ ...body, stream: true, cache: { 'no-cache': true } }))
      streamed += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(streamed, text, 'regenerated and streamed: the same bytes');
    assert.equal(await walks(), walked, 'regenerated with the same guide: every mask found cached');
  }
  assert.ok(await walks() > 0);
  assert.ok(whole >= 2, `${whole} of 6 answers ended`);

  const colours = ['blue', 'green', 'red'];
  const picked = await client.chat.completions.create({ model, messages, n: 3, max_tokens: 8, guided_choice: colours });
  for (const choice of picked.choices) {
    assert.ok(colours.includes(choice.message.content), choice.message.content);
    assert.equal(choice.finish_reason, 'stop');
  }
  // Structured output to a strict schema, as the SDK sends it, bounds included.
  const schema = { type: 'object', properties: { colour: { enum: ['red', 'green'] },
    count: { type: 'integer', minimum: 1, maximum: 9 } }, required: ['colour', 'count'], additionalProperties: false };
  const schemaBias = {};
  for (const piece of ['{"', '":', '"', ',"', '}', '<|im_end|>'])
    for (const id of (await textEndpoint('/tokenize', { prompt: piece })).tokens) schemaBias[id] = 12;
  const structured = { model, messages, max_tokens: 40, logit_bias: schemaBias,
    response_format: { type: 'json_schema', json_schema: { name: 'pick', strict: true, schema } } };
  let followed = 0;
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const answer = await client.chat.completions.create({ ...structured, seed });
    if (answer.choices[0].finish_reason !== 'stop') continue;
    followed += 1;
    const value = JSON.parse(answer.choices[0].message.content);
    assert.deepEqual(Object.keys(value), ['colour', 'count']);
    assert.ok(['red', 'green'].includes(value.colour));
    assert.ok(Number.isInteger(value.count) && value.count >= 1 && value.count <= 9, String(value.count));
  }
  assert.ok(followed >= 3, `${followed} of 6 answers ended`);
  // A discriminated union with $defs, as the SDK's zodResponseFormat writes z.discriminatedUnion.
  const pet = { type: 'object', properties: { pet: { anyOf: [{ $ref: '#/$defs/cat' }, { $ref: '#/$defs/dog' }] } },
    required: ['pet'], additionalProperties: false, $defs: {
      cat: { type: 'object', properties: { kind: { type: 'string', const: 'cat' }, lives: { type: 'integer', minimum: 1, maximum: 9 } },
        required: ['kind', 'lives'], additionalProperties: false },
      dog: { type: 'object', properties: { kind: { type: 'string', const: 'dog' }, good: { type: 'boolean' } },
        required: ['kind', 'good'], additionalProperties: false } } };
  let pets = 0;
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const answer = await client.chat.completions.create({ ...structured, seed,
      response_format: { type: 'json_schema', json_schema: { name: 'pet', strict: true, schema: pet } } });
    if (answer.choices[0].finish_reason !== 'stop') continue;
    pets += 1;
    const value = JSON.parse(answer.choices[0].message.content).pet;
    const keys = Object.keys(value);
    if (value.kind === 'cat') assert.deepEqual(keys, ['kind', 'lives']);
    else assert.deepEqual([value.kind, ...keys], ['dog', 'kind', 'good']);
  }
  assert.ok(pets >= 3, `${pets} of 6 answers ended`);
  schema.properties.count.multipleOf = 2;  // a keyword it cannot enforce: refused, not ignored
  await assert.rejects(client.chat.completions.create(structured), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.param, 'response_format');
    assert.match(e.message, /multipleOf/);
    return true;
  });
});

test('an image part is a BadRequestError naming it, not an answer to the text alone', async () => {
  const model = (await client.models.list()).data[0].id;
  const content = [{ type: 'text', text: 'What is in this picture?' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }];
  await assert.rejects(client.chat.completions.create({ model, max_tokens: 4, messages: [{ role: 'user', content }] }),
    (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.param, 'messages[0].content[1].type');
      return true;
    });
});

test('streaming: token by token, then the same deltas from the cache', async () => {
  const body = { messages, max_tokens: 12, seed: 7, stream: true, stream_options: { include_usage: true } };
  async function collect() {
    const { data: stream, response } = await client.chat.completions.create(body).withResponse();
    const deltas = [];
    let usage = null, finish = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        deltas.push(c.delta.content ?? '');
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
    return { cache: response.headers.get('x-reprox-cache'), deltas, usage, finish };
  }
  const first = await collect();
  assert.equal(first.cache, 'miss');
  assert.ok(first.deltas.length > 1, 'streamed in several chunks');
  assert.ok(first.usage && first.usage.completion_tokens > 0);
  const again = await collect();
  assert.equal(again.cache, 'hit');
  assert.deepEqual(again.deltas, first.deltas);
  assert.equal(again.finish, first.finish);
  // The same request without stream is the same answer.
  const { stream, stream_options, ...plain } = body;
  const json = await client.chat.completions.create(plain).withResponse();
  assert.equal(json.response.headers.get('x-reprox-cache'), 'hit');
  assert.equal(json.data.choices[0].message.content, first.deltas.join(''));
});

test('concurrent load: 12 different requests at once answer byte for byte as each does alone', async () => {
  const model = (await client.models.list()).data[0].id;
  const bodies = Array.from({ length: 12 }, (_, i) => ({
    model,
    messages: [{ role: 'user', content: `Request ${i}: tell me something about the number ${i * 7}.` }],
    max_tokens: 8 + (i % 5) * 4,
    temperature: [0, 0.7, 1.0, 1.3][i % 4],
    seed: 100 + i,
    n: i % 6 === 5 ? 2 : 1,
    logprobs: i % 3 === 0,
    top_logprobs: i % 3 === 0 ? 2 : undefined,
  }));
  // no-store: every call generates (never a cache hit), so the engine's
  // batching is what is compared.
  const ask = (body) => client.chat.completions.create(body, { headers: { 'Cache-Control': 'no-store' } })
    .withResponse().then(({ data, response }) => {
      assert.equal(response.headers.get('x-reprox-cache'), 'bypass');
      // cached_tokens legitimately differs: the rerun reuses the first run's KV.
      const { prompt_tokens, completion_tokens, total_tokens } = data.usage;
      return JSON.stringify({ choices: data.choices, prompt_tokens, completion_tokens, total_tokens,
        fp: data.system_fingerprint });
    });
  const metric = (name) => metricAt(client.baseURL, name);
  const passes0 = await metric('reprox_engine_passes_total'), rows0 = await metric('reprox_engine_batch_rows_total');
  const together = await Promise.all(bodies.map(ask));
  const passes = await metric('reprox_engine_passes_total') - passes0;
  const rows = await metric('reprox_engine_batch_rows_total') - rows0;
  assert.ok(rows > passes, `the 12 requests shared passes (${rows} rows in ${passes} passes)`);
  assert.equal(await metric('reprox_engine_running_sequences'), 0);
  assert.equal(await metric('reprox_engine_kv_slots_free'), 0);  // strict mode keeps no slots
  for (let i = 0; i < bodies.length; i++) {
    assert.equal(await ask(bodies[i]), together[i], `request ${i}`);
  }
});

// Fast mode with KV slots on the CPU (the code path a GPU runs, eagerly):
// concurrent requests over more sequences than slots all answer, every slot
// comes back, and the fingerprint is not the strict engine's.
test('fast mode with KV slots: every request answers and every slot comes back', async () => {
  const base = await startReprox({ REPROX_ENGINE_NUMERIC_MODE: 'fast', REPROX_ENGINE_KV_SLOTS: 'on',
    REPROX_ENGINE_MAX_BATCH_SIZE: '4', REPROX_ENGINE_THREADS: '1' });
  const fast = new OpenAI({ baseURL: base, apiKey: 'sdk-test-key', maxRetries: 0 });
  const model = (await fast.models.list()).data[0].id;
  assert.equal(await metricAt(base, 'reprox_engine_kv_slots_free'), 4);
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => fast.chat.completions.create({
    model, messages: [{ role: 'user', content: `Fast request ${i}` }], max_tokens: 6 + i, seed: i, n: i === 5 ? 2 : 1,
  })));
  for (const [i, a] of answers.entries()) {
    assert.equal(a.choices.length, i === 5 ? 2 : 1);
    assert.ok(a.usage.completion_tokens > 0, `request ${i} generated`);
  }
  let free = 0;
  for (let tries = 0; tries < 50 && free !== 4; tries++) {
    free = await metricAt(base, 'reprox_engine_kv_slots_free');
    if (free !== 4) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(free, 4);
  const strict = await client.chat.completions.create({ model, messages, max_tokens: 4 });
  assert.notEqual(answers[0].system_fingerprint, strict.system_fingerprint);
});
