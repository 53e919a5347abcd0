// GET /reprox/v1/stats and GET /reprox/status: counts by cache status, the
// last requests (bounded, newest first, never prompt text), the page itself,
// and access with and without an admin token.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const h = require('./harness');

async function getStats(proxy, headers = {}) {
  const res = await fetch(`${proxy.base}/reprox/v1/stats`, { headers });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), text, json: JSON.parse(text) };
}

const tenantOf = (token) => crypto.createHash('sha256').update(token).digest('hex').slice(0, 8);

test('stats and page without an admin token', async (t) => {
  const { proxy } = await h.startStack(t);
  const secret = `private words ${process.pid}`;
  const a = h.chatBody({}, `${secret} a ${Date.now()}`);
  const b = h.chatBody({}, `${secret} b ${Date.now()}`);
  const sent = [];
  // The ring takes an entry just after the answer has gone out: a short
  // pause after each answer keeps the ring's order the order sent.
  const settle = () => h.sleep(15);
  const expectCache = async (body, cache, headers) => {
    const res = await h.postChat(proxy, body, headers);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.cache, cache);
    sent.push(res);
    await settle();
    return res;
  };
  const first = await expectCache(a, 'miss');
  await expectCache(a, 'hit');
  await expectCache(a, 'hit');
  await expectCache(b, 'miss');
  await expectCache(b, 'bypass', { 'cache-control': 'no-store' });
  await expectCache(Object.assign({ stream: true }, b), 'hit');
  const bad = await h.postChat(proxy, '{"messages": ');
  assert.equal(bad.status, 400);

  await t.test('counts by cache status and hit rate', async () => {
    const { status, type, json: s } = await getStats(proxy);
    assert.equal(status, 200);
    assert.match(type, /^application\/json/);
    assert.deepEqual(s.totals, { hit: 3, 'near-hit': 0, miss: 2, bypass: 1, coalesced: 0, total: 6 });
    assert.ok(s.uptime_s > 0);
    assert.ok(Math.abs(s.now_ms - Date.now()) < 60000);
    if (s.uptime_s < 50) {  // the windows still hold everything since the start
      for (const w of ['1m', '5m', '15m']) {
        assert.deepEqual(s.windows[w].requests, s.totals, w);
        assert.equal(s.windows[w].hit_rate, 0.5, w);
        assert.ok(s.windows[w].per_s.total > 0, w);
      }
    }
    assert.equal(s.history.hit_rate.length, 30);
    assert.equal(s.history.step_s, 30);
    assert.ok(s.cache.memory.entries >= 2);
    assert.ok(s.cache.memory.bytes > 0);
    assert.equal(s.cache.redis, null);
    assert.equal(s.engine.embedded, false);
    assert.ok(s.engine.generated_tokens > 0);
    assert.deepEqual(s.fallback, { engaged: false, models: [], reason: '' });
  });

  await t.test('the last requests, newest first, without prompt or answer text', async () => {
    const { text, json: s } = await getStats(proxy);
    assert.equal(s.recent.length, 7);
    const [refused, ...answered] = s.recent;
    assert.deepEqual({ ...refused, time_ms: 0, latency_ms: 0 },
                     { time_ms: 0, latency_ms: 0, tenant: '', key: '', status: 400, cache: 'error', tier: '' });
    const expected = sent.slice().reverse();
    answered.forEach((r, i) => {
      assert.equal(r.key, expected[i].key.slice(0, 16));
      assert.equal(r.cache, expected[i].cache);
      assert.equal(r.tier, expected[i].cache === 'hit' ? 'memory' : '');
      assert.equal(r.tenant, tenantOf('test-key'));
      assert.equal(r.status, 200);
      assert.ok(r.latency_ms >= 0);
    });
    for (let i = 1; i < s.recent.length; i++) assert.ok(s.recent[i - 1].time_ms >= s.recent[i].time_ms);
    assert.ok(!text.includes(secret), 'no prompt text');
    const answer = first.json.choices[0].message.content;
    if (answer) assert.ok(!text.includes(answer), 'no answer text');
  });

  await t.test('the ring keeps the last 50', async () => {
    for (let i = 0; i < 55; i++) assert.equal((await h.postChat(proxy, a)).cache, 'hit');
    await settle();
    const last = await h.postChat(proxy, b);
    await settle();
    const { json: s } = await getStats(proxy);
    assert.equal(s.recent.length, 50);
    assert.equal(s.recent[0].key, last.key.slice(0, 16));
    assert.ok(s.recent.every((r) => r.status === 200 && r.cache === 'hit'));
    assert.equal(s.totals.hit, 3 + 55 + 1);
  });

  await t.test('the page: one self-contained document', async () => {
    const res = await fetch(`${proxy.base}/reprox/status`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/html/);
    assert.match(res.headers.get('content-security-policy'), /default-src 'none'/);
    const html = await res.text();
    assert.match(html, /v1\/stats/);
    const urls = html.match(/\b(?:https?:)?\/\/[\w.-]+\.[a-z]{2,}[^\s"'<>)]*/gi) || [];
    assert.deepEqual(urls.filter((u) => !u.endsWith('www.w3.org/2000/svg')), [], 'no external URL');
    assert.ok(!/<link\b|<script[^>]+src=|<img[^>]+src=|@import/i.test(html), 'nothing loaded from elsewhere');
  });

  await t.test('wrong methods get 405', async () => {
    for (const p of ['/reprox/v1/stats', '/reprox/status']) {
      const res = await fetch(`${proxy.base}${p}`, { method: 'POST', body: '{}' });
      assert.equal(res.status, 405, p);
    }
  });
});

test('with an admin token both need it', async (t) => {
  const token = 'st+at/us=';  // '+' and '/' must be percent-encoded in the query
  const { proxy } = await h.startStack(t, { args: ['--admin-token', token] });
  assert.equal((await h.postChat(proxy, h.chatBody())).status, 200, 'chat is not gated');

  const unauthorized = async (res, what) => {
    assert.equal(res.status, 401, what);
    const body = await res.json();
    assert.equal(body.error.type, 'authentication_error', what);
    assert.equal(body.error.code, 'invalid_api_key', what);
    assert.equal(typeof body.error.message, 'string', what);
  };
  const stats = (headers) => fetch(`${proxy.base}/reprox/v1/stats`, { headers });
  const page = (query = '', headers = {}) => fetch(`${proxy.base}/reprox/status${query}`, { headers });

  await unauthorized(await stats({}), 'stats without a token');
  await unauthorized(await stats({ authorization: 'Bearer wrong' }), 'stats with a wrong token');
  await unauthorized(await fetch(`${proxy.base}/reprox/v1/stats?token=${encodeURIComponent(token)}`),
                     'stats take no query token');
  const ok = await stats({ authorization: `Bearer ${token}` });
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).totals.miss, 1);

  await unauthorized(await page(), 'page without a token');
  await unauthorized(await page('?token=wrong'), 'page with a wrong token');
  await unauthorized(await page(`?token=${token}`), "page with '+' unencoded (a space)");
  for (const [query, headers] of [[`?token=${encodeURIComponent(token)}`, {}],
                                  [`?x=1&token=${encodeURIComponent(token)}`, {}],
                                  ['', { authorization: `Bearer ${token}` }]]) {
    const res = await page(query, headers);
    assert.equal(res.status, 200, query);
    assert.match(await res.text(), /<title>reprox status<\/title>/);
  }
});
