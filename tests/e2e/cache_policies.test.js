// Cache policies end to end, in front of the scripted upstream:
// [[cache.rule]] TTLs (first match wins, expiry), hot keys extending an
// entry's TTL step by step, bypass reasons, what finished answers are
// stored, and the greedy fallback engaging, keying apart, showing on
// /healthz and clearing.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

function sample(text, name, labelPart = '') {
  let sum = 0;
  for (const line of text.split('\n')) {
    if ((line.startsWith(name + '{') && line.includes(labelPart)) || (labelPart === '' && line.startsWith(name + ' ')))
      sum += Number(line.trim().split(/\s+/).pop());
  }
  return sum;
}

async function metric(proxy, name, labelPart) {
  return sample(await (await fetch(`${proxy.base}/metrics`)).text(), name, labelPart);
}

async function explain(proxy, body, headers = {}) {
  const res = await fetch(`${proxy.base}/reprox/v1/explain`, {
    method: 'POST', body: JSON.stringify(body),
    headers: Object.assign({ 'content-type': 'application/json', authorization: 'Bearer test-key' }, headers),
  });
  return res.json();
}

test('rules: the first match sets the TTL, a 1 s rule expires, explain names the rule', async (t) => {
  const { proxy } = await h.startStack(t, {
    config: { cache: { ttl: '2h', rule: [{ namespace: 'short', ttl: 1 }, { namespace: 's*', ttl: '24h' }] } },
  });
  const short = h.chatBody({ cache: { namespace: 'short' } });
  const first = await h.postChat(proxy, short);
  assert.equal(first.cache, 'miss');
  assert.equal(first.headers.get('x-reprox-ttl'), '1');
  assert.equal((await h.postChat(proxy, short)).cache, 'hit');
  const ex = await explain(proxy, short);
  assert.match(ex.rule, /reprox\.toml:\d+$/);
  assert.equal(ex.ttl, 1);
  await h.sleep(1300);
  assert.equal((await h.postChat(proxy, short)).cache, 'miss', 'the 1 s entry expired');

  const other = await h.postChat(proxy, h.chatBody({ cache: { namespace: 'support' } }));
  assert.equal(other.headers.get('x-reprox-ttl'), String(24 * 3600), 'the second rule matched');
  const plain = await h.postChat(proxy, h.chatBody());
  assert.equal(plain.headers.get('x-reprox-ttl'), String(2 * 3600), 'no rule: [cache] ttl');
  assert.equal((await explain(proxy, h.chatBody())).rule, 'default');

  // A request may shorten its TTL, and lengthen it only up to max_ttl (7 d by default).
  const shorter = await h.postChat(proxy, h.chatBody({ cache: { ttl: 60 } }));
  assert.equal(shorter.headers.get('x-reprox-ttl'), '60');
  const longer = await h.postChat(proxy, h.chatBody({ cache: { ttl: 99999999 } }));
  assert.equal(longer.headers.get('x-reprox-ttl'), String(7 * 86400));
  const maxAge = await h.postChat(proxy, h.chatBody(), { 'cache-control': 'max-age=30' });
  assert.equal(maxAge.headers.get('x-reprox-ttl'), '30');
});

test('hot keys: N hits in a window extend the TTL step by step up to max_ttl', async (t) => {
  const { proxy } = await h.startStack(t, {
    config: { cache: { hot_hits: 3, hot_window: '1s', rule: [{ ttl: 10, max_ttl: 35 }] } },
  });
  const body = h.chatBody();
  assert.equal((await h.postChat(proxy, body)).headers.get('x-reprox-ttl'), '10');
  const ttls = [];
  for (let w = 0; w < 3; w++) {
    for (let i = 0; i < 3; i++) ttls.push(Number((await h.postChat(proxy, body)).headers.get('x-reprox-ttl')));
    await h.sleep(1100);  // the next window
  }
  // Third hit of each window: 20 s, then 35 s (40 capped), then 35 s again.
  assert.equal(ttls[2], 20, `ttls ${ttls}`);
  assert.equal(ttls[5], 35, `ttls ${ttls}`);
  assert.ok(ttls[8] >= 34 && ttls[8] <= 35, `ttls ${ttls}`);
  assert.ok(ttls[0] <= 10 && ttls[3] <= 20, `before the step the entry keeps its TTL: ${ttls}`);
  assert.equal(await metric(proxy, 'reprox_cache_ttl_extensions_total'), 3);
  assert.ok(await metric(proxy, 'reprox_cache_ttl_remaining_seconds_count') >= 9);
});

test('bypass: the answer says why; rule cache = false, tools = false, no-store', async (t) => {
  const { upstream, proxy } = await h.startStack(t, {
    config: { cache: { rule: [{ namespace: 'private', cache: false }, { model: 'scripted-*', tools: false }] } },
  });
  const priv = h.chatBody({ cache: { namespace: 'private' } });
  const a = await h.postChat(proxy, priv);
  assert.equal(a.cache, 'bypass');
  assert.match(a.headers.get('x-reprox-cache-reason'), /reprox\.toml:\d+: cache = false/);
  assert.equal((await h.postChat(proxy, priv)).cache, 'bypass', 'never stored');

  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
  const withTools = await h.postChat(proxy, h.chatBody({ tools }));
  assert.equal(withTools.cache, 'bypass');
  assert.match(withTools.headers.get('x-reprox-cache-reason'), /tools = false/);
  assert.equal((await h.postChat(proxy, h.chatBody())).cache, 'miss', 'no tools: cached');

  const noStore = await h.postChat(proxy, h.chatBody(), { 'cache-control': 'no-store' });
  assert.equal(noStore.cache, 'bypass');
  assert.match(noStore.headers.get('x-reprox-cache-reason'), /no-store/);
  assert.equal(noStore.headers.get('x-reprox-ttl'), null);
  const count = (await upstream.count()).total;
  assert.equal(count, 5);
});

test('finished answers: length answers are stored unless store_truncated = false; errors never', async (t) => {
  const { upstream, proxy } = await h.startStack(t, {});
  const truncated = h.chatBody({ max_tokens: 1 });
  const first = await h.postChat(proxy, truncated);
  assert.equal(first.json.choices[0].finish_reason, 'length');
  assert.equal((await h.postChat(proxy, truncated)).cache, 'hit');
  const failing = h.chatBody({}, `fails ${Date.now()} [[scripted: status=500]]`);
  assert.equal((await h.postChat(proxy, failing)).status, 502);
  assert.equal((await h.postChat(proxy, failing)).status, 502);
  const cut = h.chatBody({ stream: true }, `cut ${Date.now()} [[scripted: cut_after=1]]`);
  await h.postChat(proxy, cut);
  await h.postChat(proxy, cut);
  assert.equal((await upstream.count()).total, 5, 'errors and cut streams were asked again, never stored');

  const strict = await h.startStack(t, { config: { cache: { store_truncated: false } } });
  const body = h.chatBody({ max_tokens: 1 });
  assert.equal((await h.postChat(strict.proxy, body)).json.choices[0].finish_reason, 'length');
  assert.equal((await h.postChat(strict.proxy, body)).cache, 'miss', 'not stored');
  const whole = h.chatBody();
  await h.postChat(strict.proxy, whole);
  assert.equal((await h.postChat(strict.proxy, whole)).cache, 'hit');
});

async function waitFor(what, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await h.sleep(20);
  }
}

test('greedy fallback: engages past 5% mismatches, keys apart, shows on /healthz, clears', async (t) => {
  const WINDOW = 20;
  const { upstream, proxy } = await h.startStack(t, {
    config: { audit: { every: 1, fallback_window: WINDOW, fallback_threshold: 0.05 }, proxy: { admin_token: 'adm' } },
  });
  const flaky = h.chatBody({ temperature: 0.8 }, `flaky ${Date.now()} [[scripted: nondeterministic]]`);
  const sampled = await h.postChat(proxy, flaky);
  assert.equal(sampled.cache, 'miss');
  assert.equal(sampled.headers.get('x-reprox-fallback'), null);
  assert.deepEqual(await (await fetch(`${proxy.base}/healthz`)).json(), { status: 'ok' });

  // Hits are audited one at a time until a full window has mismatched.
  await waitFor('a full window of mismatches', async () => {
    const hit = await h.postChat(proxy, flaky);
    if (hit.headers.get('x-reprox-fallback')) return true;
    assert.equal(hit.cache, 'hit');
    return false;
  });
  assert.ok(await metric(proxy, 'reprox_repro_audits_total', 'result="mismatch"') >= WINDOW);
  assert.equal(await metric(proxy, 'reprox_repro_fallback_active', 'model="scripted-model"'), 1);
  const health = await (await fetch(`${proxy.base}/healthz`)).json();
  assert.equal(health.status, 'degraded');
  assert.match(health.reason, /greedy fallback: scripted-model/);

  // Under the fallback the same request has its own key and is generated at temperature 0.
  await upstream.reset();
  const greedy = await h.postChat(proxy, h.chatBody({ temperature: 0.8 }, `fresh ${Date.now()}`));
  assert.equal(greedy.cache, 'miss');
  assert.equal(greedy.headers.get('x-reprox-fallback'), 'greedy');
  assert.equal((await upstream.last()).body.temperature, 0);
  const ex = await explain(proxy, flaky);
  assert.equal(ex.mode, 'greedy-fallback');
  assert.notEqual(ex.key, sampled.key, 'greedy answers never share the sampled key');
  assert.match(ex.canonical, /"mode":"greedy-fallback"/);

  // Clearing needs the admin token, then ends the fallback.
  const denied = await fetch(`${proxy.base}/reprox/v1/fallback/clear`, { method: 'POST' });
  assert.equal(denied.status, 401);
  const cleared = await fetch(`${proxy.base}/reprox/v1/fallback/clear`, {
    method: 'POST', headers: { authorization: 'Bearer adm' }, body: '{}' });
  assert.deepEqual(await cleared.json(), { cleared: ['scripted-model'] });
  assert.deepEqual(await (await fetch(`${proxy.base}/healthz`)).json(), { status: 'ok' });
  assert.equal(await metric(proxy, 'reprox_repro_fallback_active', 'model="scripted-model"'), 0);
  const back = await h.postChat(proxy, flaky);
  assert.equal(back.key, sampled.key, 'the sampled key again');
  assert.equal(back.cache, 'hit');
  assert.equal(back.headers.get('x-reprox-fallback'), null);
});

test('greedy fallback off: audits are counted, nothing engages', async (t) => {
  const { proxy } = await h.startStack(t, {
    config: { audit: { every: 1, fallback: false, fallback_window: 5 } },
  });
  const flaky = h.chatBody({}, `flaky ${Date.now()} [[scripted: nondeterministic]]`);
  await h.postChat(proxy, flaky);
  await waitFor('a window of mismatches', async () => {
    const hit = await h.postChat(proxy, flaky);
    assert.equal(hit.headers.get('x-reprox-fallback'), null);
    return (await metric(proxy, 'reprox_repro_audits_total', 'result="mismatch"')) >= 8;
  });
  assert.deepEqual(await (await fetch(`${proxy.base}/healthz`)).json(), { status: 'ok' });
});
