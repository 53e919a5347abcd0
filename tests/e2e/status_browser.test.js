// The status page in a real browser: headless Chromium loads
// /reprox/status?token=TOKEN after some traffic, lets it poll, and the
// numbers it rendered must equal those of /reprox/v1/stats fetched around
// the load (the traffic has stopped, so the counts cannot move). Saves a
// phone-sized screenshot under the build dir:
//   <build>/test-artifacts/status-page/status-phone.png
// Skipped, saying so, when no Chromium is installed (Debian: chromium).
// REPROX_CHROMIUM names another binary.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const h = require('./harness');
const browser = require('./chromium');

const chromium = browser.findChromium();
const skip = chromium ? false
  : 'chromium is not installed (apt-get install chromium): the status page was not checked in a browser';

const runChromium = (url, flags) => browser.runChromium(chromium, url, flags);

// The opening tag of the element with this id, and one of its attributes.
function tagOf(dom, id) {
  const m = dom.match(new RegExp(`<[a-z][^>]*\\sid="${id}"[^>]*>`));
  assert.ok(m, `element #${id} is in the page`);
  return m[0];
}
function attr(tag, name) {
  const m = tag.match(new RegExp(`\\s${name}="([^"]*)"`));
  return m ? m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&') : null;
}
const value = (dom, id) => attr(tagOf(dom, id), 'data-value');

function rowsOf(dom) {
  return [...dom.matchAll(/<tr class="req"([^>]*)>/g)].map((m) => {
    const row = {};
    for (const [, k, v] of m[1].matchAll(/\sdata-([\w-]+)="([^"]*)"/g)) row[k] = v;
    return row;
  });
}

// The width and height of a PNG, from its IHDR chunk.
function pngSize(file) {
  const b = fs.readFileSync(file);
  assert.equal(b.subarray(1, 4).toString(), 'PNG');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), bytes: b.length };
}

test('the status page renders the stats', { skip, timeout: 110000 }, async (t) => {
  const token = 'page-token';
  const { proxy } = await h.startStack(t, { args: ['--admin-token', token] });
  const secret = `browser secret ${process.pid}`;
  const bodies = [0, 1, 2].map((i) => h.chatBody({}, `${secret} ${i} ${Date.now()}`));
  for (const body of bodies) assert.equal((await h.postChat(proxy, body)).cache, 'miss');
  for (let i = 0; i < 5; i++) assert.equal((await h.postChat(proxy, bodies[i % 3])).cache, 'hit');
  assert.equal((await h.postChat(proxy, bodies[0], { 'cache-control': 'no-store' })).cache, 'bypass');
  assert.equal((await h.postChat(proxy, '{"messages": ')).status, 400);
  await h.sleep(15);  // the ring takes an entry just after the answer has gone out

  const stats = async () => {
    const res = await fetch(`${proxy.base}/reprox/v1/stats`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    return res.json();
  };
  const stable = (s) => ({ totals: s.totals, memory: s.cache.memory, kv: s.kv, recent: s.recent,
                           running: s.engine.running, waiting: s.engine.waiting, tokens: s.engine.generated_tokens });
  const url = `${proxy.base}/reprox/status?token=${encodeURIComponent(token)}`;
  const before = await stats();
  const dom = await runChromium(url, ['--dump-dom']);
  const after = await stats();
  assert.deepEqual(stable(after), stable(before), 'nothing moved while the page loaded');
  const s = after;

  await t.test('it polled, with the token', () => {
    assert.equal(attr(tagOf(dom, 'conn'), 'class'), 'ok', 'connection shown as live');
    const polls = Number(dom.match(/<body[^>]*\sdata-polls="(\d+)"/)[1]);
    assert.ok(polls >= 1, `polls: ${polls}`);
  });

  await t.test('the numbers equal /reprox/v1/stats', () => {
    for (const k of ['hit', 'near-hit', 'miss', 'bypass', 'coalesced', 'total'])
      assert.equal(Number(value(dom, `total-${k}`)), s.totals[k], `total-${k}`);
    assert.deepEqual(s.totals, { hit: 5, 'near-hit': 0, miss: 3, bypass: 1, coalesced: 0, total: 9 });
    if (s.uptime_s < 50) {  // the 1-minute window still holds every request: its counts cannot move
      for (const k of ['hit', 'miss', 'bypass', 'total'])
        assert.equal(Number(value(dom, `minute-${k}`)), s.windows['1m'].requests[k], `minute-${k}`);
      for (const w of ['1m', '5m', '15m'])
        assert.equal(Number(value(dom, `hit-rate-${w}`)), s.windows[w].hit_rate, `hit-rate-${w}`);
    }
    assert.equal(Number(value(dom, 'memory-entries')), s.cache.memory.entries);
    assert.equal(Number(value(dom, 'memory-bytes')), s.cache.memory.bytes);
    assert.equal(value(dom, 'redis-state'), 'off');
    assert.equal(Number(value(dom, 'kv-bytes')), s.kv.bytes);
    assert.equal(Number(value(dom, 'kv-reused-tokens')), s.kv.reused_tokens);
    assert.equal(Number(value(dom, 'engine-running')), s.engine.running);
    assert.equal(Number(value(dom, 'engine-waiting')), s.engine.waiting);
    assert.equal(Number(value(dom, 'engine-generated-tokens')), s.engine.generated_tokens);
    assert.equal(value(dom, 'engine-kind'), 'upstream');
    assert.equal(attr(tagOf(dom, 'hit-sparkline'), 'data-points'), '30');
    assert.ok(/\shidden(=""|\s|>)/.test(tagOf(dom, 'fallback-banner')), 'no fallback banner');
  });

  await t.test('the last requests table equals the stats', () => {
    const rows = rowsOf(dom);
    assert.equal(rows.length, s.recent.length);
    assert.equal(rows.length, 10);
    assert.equal(Number(value(dom, 'recent-count')), 10);
    rows.forEach((row, i) => {
      const r = s.recent[i];
      assert.deepEqual({ key: row.key, tenant: row.tenant, status: Number(row.status), cache: row.cache,
                         tier: row.tier, time: Number(row['time-ms']) },
                       { key: r.key, tenant: r.tenant, status: r.status, cache: r.cache, tier: r.tier, time: r.time_ms },
                       `row ${i}`);
    });
    assert.ok(!dom.includes(secret), 'no prompt text in the page');
  });

  await t.test('a phone-sized screenshot', async () => {
    const dir = path.join(path.dirname(h.requiredPath('REPROX_BIN')), 'test-artifacts', 'status-page');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'status-phone.png');
    fs.rmSync(file, { force: true });
    await runChromium(url, ['--window-size=390,844', `--screenshot=${file}`]);
    const png = pngSize(file);
    assert.equal(png.width, 390);
    assert.equal(png.height, 844);
    assert.ok(png.bytes > 10000, `a page, not a blank: ${png.bytes} bytes`);
    t.diagnostic(`screenshot: ${file}`);
  });

  // The same page, served beside a canned stats document with an engaged
  // greedy fallback and a Redis tier (states the scripted stack never has).
  await t.test('the fallback banner and the Redis tier', async () => {
    const html = await (await fetch(url)).text();
    const canned = JSON.parse(JSON.stringify(s));
    canned.fallback = { engaged: true, models: ['m-one', 'm-two'],
                        reason: 'greedy fallback: m-one (12/200 audits mismatched), m-two (11/200 audits mismatched)' };
    canned.cache.redis = { entries: 1234, bytes: 5678901, healthy: false };
    const server = http.createServer((req, res) => {
      const json = req.url.startsWith('/reprox/v1/stats');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'text/html' });
      res.end(json ? JSON.stringify(canned) : html);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const page = await runChromium(`http://127.0.0.1:${server.address().port}/reprox/status`, ['--dump-dom']);
      const banner = tagOf(page, 'fallback-banner');
      assert.ok(!/\shidden/.test(banner), 'the banner shows');
      assert.equal(value(page, 'fallback-models'), 'm-one,m-two');
      assert.match(page, /12\/200 audits mismatched/);
      assert.equal(Number(value(page, 'redis-entries')), 1234);
      assert.equal(Number(value(page, 'redis-bytes')), 5678901);
      assert.equal(value(page, 'redis-state'), 'unavailable');
    } finally {
      server.close();
    }
  });
});
