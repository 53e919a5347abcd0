// Every JSON document reprox sends, checked against OpenAI's own published
// schemas (chat_schemas.json here, from openai/openai-openapi; see README.md):
// chat completions (CreateChatCompletionResponse), every stream chunk
// (CreateChatCompletionStreamResponse), GET /v1/models (ListModelsResponse),
// GET /v1/models/{id} (Model when served) and every error body
// (ErrorResponse), in-stream error events included. Both paths: the
// embedded engine (REPROX_MODEL_DIR, a `reprox make-tiny-model` folder) and
// the scripted upstream (tests/proxy/backend/scripted_upstream.js), and hits
// read back from the Redis tier; misses, hits and streams; n>1, logprobs with
// top_logprobs, and stop. Each subtest counts its documents and fails with
// the first failing one's ajv errors and the document itself.
//
// Environment (set by tests/e2e/schema/CMakeLists.txt for ctest):
//   REPROX_BIN, REPROX_SCRIPTED_UPSTREAM, REPROX_NPM_DIR  as for tests/e2e
//   REPROX_MODEL_DIR  the tiny model for the engine path; when unset (a
//                     build without libtorch) the engine path is skipped.
//   REDIS_SERVER, REDIS_CLI  for the Redis-tier hits; skipped when unset.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const h = require('../harness');

// --- Schemas -----------------------------------------------------------------

const SCHEMA_FILE = path.join(__dirname, 'chat_schemas.json');
const SCHEMA_ID = 'https://reprox.invalid/openai/chat_schemas.json';
const DOCUMENT_SCHEMAS = ['CreateChatCompletionResponse', 'CreateChatCompletionStreamResponse',
                          'ListModelsResponse', 'Model', 'ErrorResponse'];
// Keywords whose value maps names to schemas (the names are not keywords).
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

// OpenAPI 3.1 with 3.0 leftovers -> JSON Schema 2020-12: "#/components/schemas/X"
// refs point into the root's $defs, and `nullable: true` becomes "or null".
function toJsonSchema(node) {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable') continue;
    if (key === '$ref') {
      const m = /^#\/components\/schemas\/([A-Za-z0-9_.-]+)$/.exec(value);
      if (!m) throw new Error(`unexpected $ref ${value} in ${SCHEMA_FILE}`);
      out.$ref = `#/$defs/${m[1]}`;
    } else if (SCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v)]));
    } else {
      out[key] = toJsonSchema(value);
    }
  }
  if (node.nullable === true) return { anyOf: [out, { type: 'null' }] };
  return out;
}

function loadValidators() {
  const npm = h.npmDir();
  const ajvModule = require(path.join(npm, 'ajv/dist/2020'));
  const Ajv2020 = ajvModule.default || ajvModule;
  const formatsModule = require(path.join(npm, 'ajv-formats'));
  const addFormats = formatsModule.default || formatsModule;
  const file = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8'));
  const defs = {};
  for (const [name, schema] of Object.entries(file.schemas)) defs[name] = toJsonSchema(schema);
  // strict: false lets the OpenAPI annotations (x-oaiMeta, discriminator, ...)
  // through; every validation keyword still applies.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);  // "uri", "date"
  ajv.addFormat('unixtime', { type: 'number', validate: (x) => Number.isInteger(x) && x >= 0 });
  ajv.addSchema({ $id: SCHEMA_ID, $defs: defs });
  const validators = {};
  for (const name of DOCUMENT_SCHEMAS) {
    assert.ok(defs[name], `${name} is in ${SCHEMA_FILE}`);
    validators[name] = ajv.compile({ $ref: `${SCHEMA_ID}#/$defs/${name}` });
  }
  return validators;
}

const validators = loadValidators();

// --- Counting and checking documents -------------------------------------------

// Per path ("engine", "upstream"): documents validated, by schema.
const tallies = {};
// The first document of each schema seen, kept for the negative controls.
const samples = {};

// One per subtest: checks documents, counts them, and fails at the end with
// the first failure's ajv errors and document.
function checker(pathName) {
  const tally = (tallies[pathName] = tallies[pathName] || {});
  const failures = [];
  let count = 0;
  return {
    doc(schema, doc, where) {
      count++;
      tally[schema] = (tally[schema] || 0) + 1;
      const validate = validators[schema];
      if (!validate(doc)) {
        failures.push({ schema, where, errors: validate.errors, doc });
        return false;
      }
      if (!samples[schema]) samples[schema] = JSON.parse(JSON.stringify(doc));
      return true;
    },
    done() {
      if (failures.length === 0) return count;
      const f = failures[0];
      assert.fail(`${failures.length} of ${count} documents failed validation.\n` +
                  `First: ${f.where}, against ${f.schema}\n` +
                  `ajv errors:\n${JSON.stringify(f.errors, null, 2)}\n` +
                  `document:\n${JSON.stringify(f.doc, null, 2)}`);
    },
  };
}

// Checks one HTTP answer from a chat/models/other endpoint: JSON bodies by
// status, SSE bodies event by event. Returns {status, cache, key, tier,
// json, events, done, text}.
function checkAnswer(v, res, text, where, okSchema) {
  const type = res.headers.get('content-type') || '';
  const out = { status: res.status, cache: res.headers.get('x-reprox-cache'), key: res.headers.get('x-reprox-key'),
                tier: res.headers.get('x-reprox-tier'), json: null, events: null, text };
  if (type.startsWith('text/event-stream')) {
    assert.equal(res.status, 200, `${where}: an SSE answer is a 200`);
    out.events = [];
    let sawDone = false;
    for (const block of text.split(/\r?\n\r?\n/)) {
      for (const line of block.split(/\r?\n/)) {
        if (!line.startsWith('data:')) continue;
        const payload = line.slice(5).trim();
        assert.ok(!sawDone, `${where}: nothing follows data: [DONE]`);
        if (payload === '[DONE]') { sawDone = true; continue; }
        let doc;
        try { doc = JSON.parse(payload); } catch (e) { assert.fail(`${where}: an SSE event is not JSON: ${payload}`); }
        const n = out.events.length;
        if (doc && doc.error !== undefined) v.doc('ErrorResponse', doc, `${where}, SSE error event ${n}`);
        else v.doc('CreateChatCompletionStreamResponse', doc, `${where}, stream chunk ${n}`);
        out.events.push(doc);
      }
    }
    out.done = sawDone;
    return out;
  }
  assert.match(type, /^application\/json/, `${where}: HTTP ${res.status} with content-type ${type}: ${text}`);
  try { out.json = JSON.parse(text); } catch (e) { assert.fail(`${where}: the body is not JSON: ${text}`); }
  if (res.status === 200) v.doc(okSchema, out.json, where);
  else v.doc('ErrorResponse', out.json, `${where} (HTTP ${res.status})`);
  return out;
}

async function get(v, base, urlPath, where, okSchema) {
  const res = await fetch(base + urlPath);
  return checkAnswer(v, res, await res.text(), where, okSchema);
}

async function chat(v, base, body, where, headers = {}) {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: Object.assign({ 'content-type': 'application/json', authorization: 'Bearer schema-test' }, headers),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return checkAnswer(v, res, await res.text(), where, 'CreateChatCompletionResponse');
}

// A raw HTTP exchange (for answers fetch cannot provoke: 413, 431, 408,
// malformed requests); every response in it is an error body.
async function raw(v, port, chunks, expectStatus, where, options) {
  const res = await h.rawExchange(port, chunks, options);
  const answers = h.parseResponses(res.text).filter((a) => a.status !== 100);
  assert.equal(answers.length, 1, `${where}: one answer: ${res.text}`);
  const a = answers[0];
  assert.equal(a.status, expectStatus, `${where}: ${res.text}`);
  assert.match(a.headers['content-type'] || '', /^application\/json/, where);
  v.doc('ErrorResponse', JSON.parse(a.body), `${where} (HTTP ${a.status})`);
}

// Checks the shape the request asked for, so each case exercises what it
// claims to (n choices, logprobs present, a stream that ends with [DONE]).
// (top_logprobs are checked on the engine only: the scripted upstream sends
// them empty.)
function expectShape(r, body, where, topLogprobs) {
  const n = body.n || 1;
  if (r.events) {
    assert.ok(r.done, `${where}: the stream ends with data: [DONE]`);
    const finished = new Set();
    let logprobChunks = 0;
    for (const e of r.events) {
      assert.ok(!e.error, `${where}: no error event: ${JSON.stringify(e)}`);
      for (const c of e.choices) {
        if (c.finish_reason) finished.add(c.index);
        if (c.logprobs) logprobChunks++;
      }
    }
    assert.equal(finished.size, n, `${where}: every one of the ${n} choices finished`);
    if (body.logprobs) assert.ok(logprobChunks > 0, `${where}: chunks carry logprobs`);
    const usage = r.events.filter((e) => e.usage);
    if (body.stream_options && body.stream_options.include_usage) assert.equal(usage.length, 1, `${where}: one usage chunk`);
  } else {
    assert.equal(r.status, 200, `${where}: ${r.text}`);
    assert.equal(r.json.choices.length, n, `${where}: ${n} choices`);
    for (const c of r.json.choices) {
      if (body.logprobs) assert.ok(c.logprobs && c.logprobs.content.length > 0, `${where}: choice ${c.index} has logprobs`);
      else assert.equal(c.logprobs, null, `${where}: no logprobs unless asked for`);
      if (topLogprobs && body.logprobs && body.top_logprobs) {
        assert.ok(c.logprobs.content.some((t) => t.top_logprobs.length > 0), `${where}: top_logprobs are filled`);
      }
    }
  }
}

// For each request shape: a JSON miss, its JSON hit and a streamed hit; a
// streamed miss (usage included), its streamed hit and a JSON hit; a
// no-store answer of each kind. 8 answers per shape. `afterMiss(answer)`
// runs after each miss (e.g. to wait for a Redis write); `hitTier` is the
// x-reprox-tier every hit must carry.
async function missesHitsStreams(t, pathName, base, shapes, { afterMiss, hitTier } = {}) {
  for (const [label, shape] of Object.entries(shapes)) {
    await t.test(`${label}: misses, hits and streams`, async () => {
      const v = checker(pathName);
      const jsonFirst = shape(`schema ${label} json-first ${process.pid}-${Date.now()}`);
      const streamFirst = shape(`schema ${label} stream-first ${process.pid}-${Date.now()}`);
      const streamed = (b) => Object.assign({}, b, { stream: true, stream_options: { include_usage: true } });
      const plainStream = (b) => Object.assign({}, b, { stream: true });

      const cases = [
        [jsonFirst, 'JSON miss', 'miss'],
        [jsonFirst, 'JSON hit', 'hit'],
        [plainStream(jsonFirst), 'streamed hit of a JSON miss', 'hit'],
        [streamed(streamFirst), 'streamed miss', 'miss'],
        [streamed(streamFirst), 'streamed hit', 'hit'],
        [streamFirst, 'JSON hit of a streamed miss', 'hit'],
      ];
      for (const [body, what, cache] of cases) {
        const where = `${pathName} ${label}: ${what}`;
        const r = await chat(v, base, body, where);
        assert.equal(r.status, 200, `${where}: ${r.text}`);
        assert.equal(r.cache, cache, `${where}: x-reprox-cache`);
        if (cache === 'hit' && hitTier) assert.equal(r.tier, hitTier, `${where}: x-reprox-tier`);
        expectShape(r, body, where, pathName === 'engine');
        if (cache === 'miss' && afterMiss) await afterMiss(r);
      }
      for (const body of [jsonFirst, streamed(jsonFirst)]) {
        const where = `${pathName} ${label}: no-store ${body.stream ? 'stream' : 'JSON'}`;
        const r = await chat(v, base, body, where, { 'cache-control': 'no-store' });
        assert.equal(r.cache, 'bypass', `${where}: x-reprox-cache`);
        expectShape(r, body, where, pathName === 'engine');
      }
      t.diagnostic(`${pathName} ${label}: ${v.done()} documents valid`);
    });
  }
}

// Error bodies both paths answer the same way: bad JSON, bad parameters,
// unknown endpoint, wrong method, only-if-cached miss, purge refused,
// 413, 431, 408 and a malformed request line.
async function commonErrors(t, pathName, server, model) {
  await t.test('error bodies: 400, 403, 404, 405, 408, 413, 431, 504', async () => {
    const v = checker(pathName);
    const base = server.base;
    const bad = [
      ['{"messages":', 400, 'a body that is not JSON'],
      ['[1,2]', 400, 'a body that is not an object'],
      [{ model }, 400, 'no messages'],
      [{ model, messages: [] }, 400, 'empty messages'],
      [{ model, messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }, 400, 'a string temperature'],
      [{ model, messages: [{ role: 'user', content: 'x' }], n: 0 }, 400, 'n=0'],
      [{ model, messages: [{ role: 'user', content: 'x' }], top_logprobs: 3 }, 400, 'top_logprobs without logprobs'],
      [{ model, messages: [{ role: 'wizard', content: 'x' }] }, 400, 'an unknown role'],
      [{ model, messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: 3 }, 400, 'bad stream_options'],
    ];
    for (const [body, status, what] of bad) {
      const r = await chat(v, base, body, `${pathName}: ${what}`);
      assert.equal(r.status, status, `${what}: ${r.text}`);
    }
    const miss = await chat(v, base, { model, messages: [{ role: 'user', content: `never asked ${Date.now()}` }] },
                            `${pathName}: only-if-cached miss`, { 'cache-control': 'only-if-cached' });
    assert.equal(miss.status, 504, miss.text);
    const notFound = await get(v, base, '/v1/nothing-here', `${pathName}: GET an unknown path`, 'ErrorResponse');
    assert.equal(notFound.status, 404, notFound.text);
    const res = await fetch(`${base}/v1/chat/completions`);
    const wrongMethod = checkAnswer(v, res, await res.text(), `${pathName}: GET /v1/chat/completions`, 'ErrorResponse');
    assert.equal(wrongMethod.status, 405, wrongMethod.text);
    const purgeRes = await fetch(`${base}/reprox/v1/purge`, { method: 'POST', body: '{"all":true}' });
    const purge = checkAnswer(v, purgeRes, await purgeRes.text(), `${pathName}: purge without an admin token`, 'ErrorResponse');
    assert.equal(purge.status, 403, purge.text);

    const size = 70000;  // over the 65536-byte body limit both servers get
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    await raw(v, server.port, [head, Buffer.alloc(size, 0x20)], 413, `${pathName}: a body over the limit`);
    await raw(v, server.port, [`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`], 431,
              `${pathName}: headers over the limit`);
    await raw(v, server.port, ['GET /v1/models HTTP/1.1\r\nHost: x\r\n'], 408, `${pathName}: a request not received in time`,
              { idleMs: 3000 });
    await raw(v, server.port, ['GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n'], 400,
              `${pathName}: a malformed request`);
    t.diagnostic(`${pathName} errors: ${v.done()} documents valid`);
  });
}

async function models(t, pathName, base) {
  let model;
  await t.test('GET /v1/models and /v1/models/{id}', async () => {
    const v = checker(pathName);
    const list = await get(v, base, '/v1/models', `${pathName}: GET /v1/models`, 'ListModelsResponse');
    assert.equal(list.status, 200, list.text);
    assert.ok(list.json.data.length > 0, 'at least one model');
    model = list.json.data[0].id;
    // Served as a Model, or not served (an error body): valid either way.
    const one = await get(v, base, `/v1/models/${encodeURIComponent(model)}`, `${pathName}: GET /v1/models/{id}`, 'Model');
    assert.ok(one.status === 200 || one.status === 404, one.text);
    t.diagnostic(`${pathName} models: ${v.done()} documents valid`);
  });
  return model;
}

// --- The embedded engine ---------------------------------------------------------

const live = new Set();
process.on('exit', () => { for (const c of live) { try { c.kill('SIGKILL'); } catch (e) { /* gone */ } } });

// `reprox serve` on the tiny model with a TOML config; killed after `t`.
async function startEngine(t, sections) {
  const bin = h.requiredPath('REPROX_BIN');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprox-schema-'));
  const file = h.writeConfig(dir, Object.assign({ engine: { model: process.env.REPROX_MODEL_DIR } }, sections));
  const child = spawn(bin, ['serve', '--config', file, '--listen', '127.0.0.1:0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const exited = new Promise((resolve) => child.once('exit', () => { live.delete(child); resolve(); }));
  t.after(async () => {
    child.kill('SIGKILL');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const port = await new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`reprox did not start in 60 s:\n${log}`)), 60000);
    const onData = (d) => {
      log += d;
      const m = /reprox listening on [^\s:]+:(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`reprox exited (${code}, ${signal}):\n${log}`)); });
  });
  return { port, base: `http://127.0.0.1:${port}`, child };
}

const serverSections = { server: { body_limit: 65536, read_timeout_ms: 1000 } };
const engineSkip = process.env.REPROX_MODEL_DIR ? false : 'REPROX_MODEL_DIR is not set (a build without libtorch)';

test('engine path', { skip: engineSkip }, async (t) => {
  const server = await startEngine(t, serverSections);
  const model = await models(t, 'engine', server.base);
  const msgs = (text) => [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: text }];
  await missesHitsStreams(t, 'engine', server.base, {
    plain: (text) => ({ model, messages: msgs(text), max_tokens: 10 }),
    'n=3': (text) => ({ model, messages: msgs(text), max_tokens: 8, n: 3, temperature: 1.0, seed: 11 }),
    'logprobs+top_logprobs': (text) => ({ model, messages: msgs(text), max_tokens: 8, logprobs: true, top_logprobs: 3 }),
    stop: (text) => ({ model, messages: msgs(text), max_tokens: 16, temperature: 0.9, stop: ['e', ' a'] }),
    'n=2+logprobs+stop': (text) => ({ model, messages: msgs(text), max_tokens: 12, n: 2, logprobs: true, top_logprobs: 2,
                                      stop: ['.'], temperature: 1.1, seed: 5 }),
  });
  await commonErrors(t, 'engine', server, model);

  await t.test('engine-only error bodies: unknown model, tools, response_format', async () => {
    const v = checker('engine');
    const text = [{ role: 'user', content: 'x' }];
    const cases = [
      [{ model: 'no-such-model', messages: text }, 404, 'an unknown model'],
      [{ model, messages: text, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }, 400, 'tools'],
      [{ model, messages: text, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 400,
       'response_format json_schema'],
    ];
    for (const [body, status, what] of cases) {
      const r = await chat(v, server.base, body, `engine: ${what}`);
      assert.equal(r.status, status, `${what}: ${r.text}`);
    }
    t.diagnostic(`engine-only errors: ${v.done()} documents valid`);
  });
});

test('engine path: 429 when the engine queue is full', { skip: engineSkip }, async (t) => {
  const server = await startEngine(t, { engine: { model: process.env.REPROX_MODEL_DIR, queue: 1, max_batch_size: 1 } });
  const v = checker('engine');
  const bodies = Array.from({ length: 24 }, (_, i) => ({
    messages: [{ role: 'user', content: `queue ${i} ${Date.now()}` }], max_tokens: 200, stream: i % 2 === 1,
  }));
  const answers = await Promise.all(bodies.map((b, i) => chat(v, server.base, b, `engine: concurrent request ${i}`,
                                                              { 'cache-control': 'no-store' })));
  const statuses = answers.map((a) => a.status);
  assert.ok(statuses.every((s) => s === 200 || s === 429), `200 or 429 only: ${statuses}`);
  assert.ok(statuses.includes(429), `a full queue answered 429 at least once: ${statuses}`);
  t.diagnostic(`engine 429s: ${statuses.filter((s) => s === 429).length} of ${statuses.length}; ${v.done()} documents valid`);
});

// --- The upstream (scripted) -------------------------------------------------

test('upstream path', async (t) => {
  const { proxy, upstream } = await h.startStack(t, { config: serverSections });
  const model = await models(t, 'upstream', proxy.base);
  const msgs = (text) => [{ role: 'user', content: text }];
  await missesHitsStreams(t, 'upstream', proxy.base, {
    plain: (text) => ({ model, messages: msgs(text), user: 'words=3' }),
    'n=3': (text) => ({ model, messages: msgs(text), n: 3, max_tokens: 9 }),
    'logprobs+top_logprobs': (text) => ({ model, messages: msgs(text), logprobs: true, top_logprobs: 3 }),
    stop: (text) => ({ model, messages: msgs(text), stop: ['w3', '\n'], user: 'words=5' }),
    'n=2+logprobs+stop, choices in one chunk': (text) => ({ model, messages: msgs(`${text} [[scripted: multi_choice_chunk]]`),
                                                          n: 2, logprobs: true, top_logprobs: 2, stop: ['.'] }),
    'tool calls': (text) => ({ model, messages: msgs(`${text} [[scripted: tool_calls]]`),
                               tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] }),
    'JSON upstream answer to a stream': (text) => ({ model, messages: msgs(`${text} [[scripted: nonstream]]`), n: 2, logprobs: true }),
  });
  await commonErrors(t, 'upstream', proxy, model);

  await t.test('upstream failures: 400, 401, 404, 429, 5xx, mid-stream errors', async () => {
    const v = checker('upstream');
    for (const status of [400, 401, 404, 429, 500, 503]) {
      for (const stream of [false, true]) {
        const where = `upstream: scripted HTTP ${status}${stream ? ', stream' : ''}`;
        const r = await chat(v, proxy.base, { model, messages: msgs(`fail ${status} ${Date.now()}`), stream,
                                               user: `status=${status}` }, where);
        assert.equal(r.status, status < 500 ? status : 502, `${where}: ${r.text}`);
      }
    }
    // Failures after the stream started: an error event in the SSE.
    for (const directive of ['sse_error', 'invalid_json', 'cut_after=2']) {
      const where = `upstream: ${directive}`;
      const r = await chat(v, proxy.base, { model, messages: msgs(`broken ${directive} ${Date.now()}`), stream: true,
                                            user: `${directive}; words=4` }, where);
      if (r.events) assert.ok(r.events.some((e) => e.error), `${where}: an error event: ${r.text}`);
      else assert.equal(r.status, 502, `${where}: ${r.text}`);
    }
    t.diagnostic(`upstream failures: ${v.done()} documents valid`);
  });
});

// Hits read back from the shared Redis tier (no memory tier: --cache-bytes 0),
// whose JSON answers render straight from the stored entry's bytes.
const redisSkip = process.env.REDIS_SERVER && process.env.REDIS_CLI ? false
  : 'REDIS_SERVER / REDIS_CLI are not set (no redis-server found)';

test('upstream path, hits from the Redis tier', { skip: redisSkip }, async (t) => {
  const { startRedis, startInstances } = require('../redis/redis_harness');
  const redis = await startRedis(t);
  const { proxies: [proxy] } = await startInstances(t, redis.url, 1, ['--cache-bytes', '0']);
  const msgs = (text) => [{ role: 'user', content: text }];
  const model = 'scripted-model';
  const stored = async (r) => {
    for (let i = 0; i < 250 && !redis.hasEntry(r.key); ++i) await h.sleep(20);
    assert.ok(redis.hasEntry(r.key), `the entry ${r.key} reached Redis`);
  };
  await missesHitsStreams(t, 'upstream (Redis tier)', proxy.base, {
    'n=2+logprobs+stop': (text) => ({ model, messages: msgs(text), n: 2, logprobs: true, top_logprobs: 2, stop: ['.'] }),
    'tool calls': (text) => ({ model, messages: msgs(`${text} [[scripted: tool_calls]]`),
                               tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] }),
  }, { afterMiss: stored, hitTier: 'redis' });
});

// --- The validator itself can fail ------------------------------------------

test('negative controls: a required field removed from a real document fails', async (t) => {
  const mutations = [
    ['CreateChatCompletionResponse', 'choices[0].message.refusal', (d) => { delete d.choices[0].message.refusal; }],
    ['CreateChatCompletionResponse', 'choices[0].finish_reason', (d) => { delete d.choices[0].finish_reason; }],
    ['CreateChatCompletionResponse', 'created', (d) => { delete d.created; }],
    ['CreateChatCompletionStreamResponse', 'choices[0].finish_reason',
     (d) => { if (d.choices.length) delete d.choices[0].finish_reason; else delete d.choices; }],
    ['CreateChatCompletionStreamResponse', 'object', (d) => { delete d.object; }],
    ['ListModelsResponse', 'data[0].owned_by', (d) => { delete d.data[0].owned_by; }],
    ['ErrorResponse', 'error.param', (d) => { delete d.error.param; }],
  ];
  for (const [schema, field, mutate] of mutations) {
    assert.ok(samples[schema], `a valid ${schema} was seen`);
    const doc = JSON.parse(JSON.stringify(samples[schema]));
    mutate(doc);
    assert.equal(validators[schema](doc), false, `${schema} without ${field} is rejected`);
  }
  // The logprobs object's "refusal" is required too.
  const withLogprobs = { object: 'chat.completion', id: 'x', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop',
    message: { role: 'assistant', content: 'a', refusal: null },
    logprobs: { content: [{ token: 'a', logprob: -1, bytes: [97], top_logprobs: [] }] } }] };
  assert.equal(validators.CreateChatCompletionResponse(withLogprobs), false, 'logprobs without refusal is rejected');
  withLogprobs.choices[0].logprobs.refusal = null;
  assert.equal(validators.CreateChatCompletionResponse(withLogprobs), true,
               JSON.stringify(validators.CreateChatCompletionResponse.errors));
  t.diagnostic(`${mutations.length + 1} mutated documents rejected`);
});

test('documents validated, per path', (t) => {
  const answers = { CreateChatCompletionResponse: 8, CreateChatCompletionStreamResponse: 20 };
  const all = Object.assign({ ListModelsResponse: 1, ErrorResponse: 10 }, answers);
  const minimum = Object.assign(engineSkip ? {} : { engine: all }, { upstream: all },
                                redisSkip ? {} : { 'upstream (Redis tier)': answers });
  let total = 0;
  for (const [p, least] of Object.entries(minimum)) {
    const tally = tallies[p] || {};
    const sum = Object.values(tally).reduce((a, b) => a + b, 0);
    total += sum;
    t.diagnostic(`${p}: ${sum} documents (${Object.entries(tally).map(([k, n]) => `${k} ${n}`).join(', ')})`);
    for (const [schema, n] of Object.entries(least)) {
      assert.ok((tally[schema] || 0) >= n, `${p}: at least ${n} ${schema} documents (${tally[schema] || 0})`);
    }
  }
  t.diagnostic(`total: ${total} documents`);
});
