// /v1/models, /healthz, /metrics, /reprox/v1/explain, /reprox/v1/purge.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

const METRIC_NAMES = [
  'reprox_requests_total', 'reprox_cache_lookups_total', 'reprox_cache_entries', 'reprox_cache_bytes',
  'reprox_cache_evictions_total', 'reprox_cache_invalidations_total', 'reprox_cache_store_errors_total',
  'reprox_seed_injected_total', 'reprox_request_duration_seconds', 'reprox_time_to_first_token_seconds',
  'reprox_prompt_tokens_total', 'reprox_generated_tokens_total', 'reprox_kv_reused_tokens_total',
  'reprox_repro_audits_total',
];

// The value of one sample line, e.g. sample(text, 'reprox_cache_lookups_total', 'result="hit"').
function sample(text, name, labelPart = '') {
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    if (labelPart && !rest.includes(labelPart)) continue;
    total += Number(line.trim().split(/\s+/).pop());
    found = true;
  }
  return found ? total : 0;
}

test('admin and info endpoints', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { args: ['--admin-token', 's3cret'] });
  const metrics = async () => {
    const res = await fetch(`${proxy.base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/plain/);
    return res.text();
  };
  const explain = async (body, token = 'test-key') => {
    const res = await fetch(`${proxy.base}/reprox/v1/explain`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };
  const purge = async (body, token) => {
    const headers = { 'content-type': 'application/json' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${proxy.base}/reprox/v1/purge`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json() };
  };

  await t.test('/healthz', async () => {
    const res = await fetch(`${proxy.base}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });

  await t.test('/v1/models is an OpenAI list', async () => {
    const res = await fetch(`${proxy.base}/v1/models`);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.object, 'list');
    assert.ok(Array.isArray(body.data));
    for (const m of body.data) {
      assert.equal(typeof m.id, 'string');
      assert.equal(m.object, 'model');
    }
  });

  await t.test('/metrics names every metric of interface.md', async () => {
    const text = await metrics();
    const missing = METRIC_NAMES.filter((name) => !new RegExp(`^# TYPE ${name} `, 'm').test(text));
    assert.deepEqual(missing, [], 'every metric is exported, with its TYPE line');
  });

  await t.test('/metrics counters move on miss and hit', async () => {
    const before = await metrics();
    const body = h.chatBody();
    assert.equal((await h.postChat(proxy, body)).cache, 'miss');
    assert.equal((await h.postChat(proxy, body)).cache, 'hit');
    const after = await metrics();
    assert.equal(sample(after, 'reprox_cache_lookups_total', 'result="miss"') -
                 sample(before, 'reprox_cache_lookups_total', 'result="miss"'), 1);
    assert.equal(sample(after, 'reprox_cache_lookups_total', 'result="hit"') -
                 sample(before, 'reprox_cache_lookups_total', 'result="hit"'), 1);
    assert.equal(sample(after, 'reprox_seed_injected_total') - sample(before, 'reprox_seed_injected_total'), 2);
    assert.equal(sample(after, 'reprox_requests_total', 'code="200"') -
                 sample(before, 'reprox_requests_total', 'code="200"') >= 2, true);
    assert.ok(sample(after, 'reprox_cache_entries', 'tier="memory"') >= 1);
    assert.ok(sample(after, 'reprox_cache_bytes', 'tier="memory"') > 0);
    assert.ok(sample(after, 'reprox_generated_tokens_total') > sample(before, 'reprox_generated_tokens_total'));
    assert.ok(sample(after, 'reprox_request_duration_seconds_count') - sample(before, 'reprox_request_duration_seconds_count') >= 2);
  });

  // A hit's latency is observed before its answer leaves: a client that
  // reads /metrics right after its answer sees it counted, every time.
  await t.test('a hit is in the latency histogram by the time its answer arrives', async () => {
    const body = h.chatBody({ messages: [{ role: 'user', content: 'counted before it is sent' }] });
    await h.postChat(proxy, body);
    let count = sample(await metrics(), 'reprox_request_duration_seconds_count');
    for (let i = 0; i < 40; i++) {
      assert.equal((await h.postChat(proxy, body)).cache, 'hit');
      const now = sample(await metrics(), 'reprox_request_duration_seconds_count');
      assert.equal(now - count, 1, `hit ${i}`);
      count = now;
    }
  });

  await t.test('/reprox/v1/explain gives the key of the chat answer', async () => {
    const body = h.chatBody({ temperature: 0.7 });
    const ex = await explain(body);
    assert.equal(ex.status, 200);
    for (const f of ['key', 'canonical', 'seed', 'seed_injected', 'cacheable', 'reason']) assert.ok(f in ex.json, f);
    assert.match(ex.json.key, /^[0-9a-f]{64}$/);
    assert.equal(ex.json.seed, 42);
    assert.equal(ex.json.seed_injected, true);
    assert.equal(ex.json.cacheable, true);
    const before = (await upstream.count()).total;
    assert.equal((await upstream.count()).total, before, 'explain generates nothing');
    const chat = await h.postChat(proxy, body);
    assert.equal(chat.key, ex.json.key);
    const other = await explain(body, 'another-key');
    assert.notEqual(other.json.key, ex.json.key, 'the tenant is part of the key');
    const seeded = await explain(Object.assign({ seed: 3 }, body));
    assert.equal(seeded.json.seed, 3);
    assert.equal(seeded.json.seed_injected, false);
    const bad = await explain({ messages: 'nope' });
    assert.equal(bad.status, 400);
    assert.ok(bad.json.error);
  });

  await t.test('/reprox/v1/purge needs the admin token', async () => {
    assert.equal((await purge({ all: true })).status, 401);
    assert.equal((await purge({ all: true }, 'wrong')).status, 401);
    assert.equal((await purge({ all: true }, 's3cret-')).status, 401);
    const bad = await purge({ nothing: 1 }, 's3cret');
    assert.equal(bad.status, 400);
  });

  await t.test('purge by namespace, then everything', async () => {
    const body = h.chatBody();
    await h.postChat(proxy, body, { 'x-reprox-namespace': 'keep' });
    await h.postChat(proxy, body, { 'x-reprox-namespace': 'drop' });
    const byNs = await purge({ namespace: 'drop' }, 's3cret');
    assert.equal(byNs.status, 200);
    assert.equal(byNs.json.purged, 1);
    assert.equal((await h.postChat(proxy, body, { 'x-reprox-namespace': 'drop' })).cache, 'miss');
    assert.equal((await h.postChat(proxy, body, { 'x-reprox-namespace': 'keep' })).cache, 'hit');

    const inv0 = sample(await metrics(), 'reprox_cache_invalidations_total');
    const all = await purge({ all: true }, 's3cret');
    assert.equal(all.status, 200);
    assert.ok(all.json.purged >= 2, JSON.stringify(all.json));
    assert.equal(sample(await metrics(), 'reprox_cache_invalidations_total') - inv0, all.json.purged);
    assert.equal((await h.postChat(proxy, body, { 'x-reprox-namespace': 'keep' })).cache, 'miss');
    assert.equal(sample(await metrics(), 'reprox_cache_entries', 'tier="memory"'), 1);
  });

  await t.test('purge by model', async () => {
    const body = h.chatBody({ model: 'other-model' });
    assert.equal((await h.postChat(proxy, body)).cache, 'miss');
    const res = await purge({ model: 'other-model' }, 's3cret');
    assert.equal(res.json.purged, 1);
    assert.equal((await h.postChat(proxy, body)).cache, 'miss');
  });
});

test('purge is refused when no admin token is configured', async (t) => {
  const { proxy } = await h.startStack(t);
  const res = await fetch(`${proxy.base}/reprox/v1/purge`, {
    method: 'POST', headers: { authorization: 'Bearer ' }, body: '{"all":true}',
  });
  assert.ok(res.status === 401 || res.status === 403, String(res.status));
  assert.ok((await res.json()).error);
});
