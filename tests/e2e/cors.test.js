// Browser apps on other origins ([server] cors_origins): preflights, the
// CORS fields on whole, cached, streamed and error answers, and a real
// headless Chromium that calls reprox from an allowed origin (and is
// blocked from another). The browser part is skipped, saying so, when no
// Chromium is installed (Debian: chromium); REPROX_CHROMIUM names another.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const http = require('node:http');
const h = require('./harness');
const browser = require('./chromium');

const chromium = browser.findChromium();

// One request with node:http (fetch would not send Origin as given).
function request(port, method, pathname, headers = {}, body = '') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const chatHeaders = (origin) => ({ origin, 'content-type': 'application/json', authorization: 'Bearer test-key' });

// A server of one page that calls the reprox named by its ?proxy= query
// and writes what it saw into #out; resolves with {base, close}.
async function pageServer() {
  const page = `<!doctype html><html><body><pre id="out"></pre><script>
const PROXY = new URLSearchParams(location.search).get('proxy');
const body = (extra) => JSON.stringify(Object.assign(
  { model: 'scripted-model', messages: [{ role: 'user', content: 'from a browser ' + location.port }] }, extra));
const post = (b) => fetch(PROXY + '/v1/chat/completions', { method: 'POST', body: b,
  headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' } });
(async () => {
  const out = {};
  try {
    const first = await post(body({}));
    out.status = first.status;
    out.cache = first.headers.get('x-reprox-cache');
    out.key = first.headers.get('x-reprox-key');
    out.content = (await first.json()).choices[0].message.content;
    const again = await post(body({}));
    out.again = { cache: again.headers.get('x-reprox-cache'), tier: again.headers.get('x-reprox-tier'),
                  content: (await again.json()).choices[0].message.content };
    const streamed = await post(body({ stream: true }));
    out.stream = { cache: streamed.headers.get('x-reprox-cache'), done: (await streamed.text()).includes('data: [DONE]') };
    const bad = await post('{"messages": ');
    out.bad = { status: bad.status, type: (await bad.json()).error.type };
    const models = await fetch(PROXY + '/v1/models', { headers: { authorization: 'Bearer test-key' } });
    out.models = models.status;
  } catch (e) {
    out.error = String(e);
  }
  document.getElementById('out').textContent = JSON.stringify(out);
})();
</script></body></html>`;
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// The JSON the page wrote into #out, after Chromium ran it.
async function runPage(url) {
  const dom = await browser.runChromium(chromium, url, ['--dump-dom']);
  const m = dom.match(/<pre id="out">([^<]*)<\/pre>/);
  if (!m || !m[1]) throw new Error(`the page wrote nothing:\n${dom.slice(0, 2000)}`);
  return JSON.parse(m[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
}

test('CORS for listed origins', { timeout: 120000 }, async (t) => {
  // The pages' servers start first: their origins go into the config.
  const allowed = await pageServer();
  const other = await pageServer();
  t.after(() => { allowed.close(); other.close(); });
  const { proxy } = await h.startStack(t, { config: { server: { cors_origins: `https://app.example, ${allowed.base}` } } });
  const port = proxy.port;

  await t.test('a preflight from a listed origin gets 204 and the CORS fields', async () => {
    const res = await request(port, 'OPTIONS', '/v1/chat/completions', {
      origin: 'https://app.example', 'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, x-reprox-namespace' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(res.headers['access-control-allow-methods'], 'POST, OPTIONS');
    assert.equal(res.headers['access-control-allow-headers'], 'authorization, content-type, x-reprox-namespace');
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.equal(res.headers.vary, 'Origin');
    assert.equal(res.headers['access-control-allow-private-network'], undefined);
    assert.equal(res.headers['content-length'], undefined, 'a 204 has no Content-Length');
    assert.equal(res.text, '');
    // A public origin's page calling reprox on a private address asks first.
    const pna = await request(port, 'OPTIONS', '/v1/chat/completions', {
      origin: 'https://app.example', 'access-control-request-method': 'POST',
      'access-control-request-private-network': 'true' });
    assert.equal(pna.headers['access-control-allow-private-network'], 'true');
  });

  await t.test('a preflight from another origin gets no CORS fields', async () => {
    const res = await request(port, 'OPTIONS', '/v1/chat/completions', {
      origin: 'https://evil.example', 'access-control-request-method': 'POST' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers.allow, 'POST, OPTIONS');
    const pna = await request(port, 'OPTIONS', '/v1/chat/completions', {
      origin: 'https://evil.example', 'access-control-request-method': 'POST',
      'access-control-request-private-network': 'true' });
    assert.equal(pna.headers['access-control-allow-private-network'], undefined);
  });

  await t.test('whole, cached, streamed and error answers carry the fields', async () => {
    const body = JSON.stringify(h.chatBody());
    const expose = (res) => res.headers['access-control-expose-headers'].split(/,\s*/);
    for (const expected of ['miss', 'hit']) {
      const res = await request(port, 'POST', '/v1/chat/completions', chatHeaders('https://app.example'), body);
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-reprox-cache'], expected);
      assert.equal(res.headers['access-control-allow-origin'], 'https://app.example', expected);
      assert.equal(res.headers.vary, 'Origin');
      for (const name of ['x-reprox-cache', 'x-reprox-key', 'x-reprox-seed', 'age', 'retry-after'])
        assert.ok(expose(res).includes(name), `${name} is exposed`);
    }
    const streamed = await request(port, 'POST', '/v1/chat/completions', chatHeaders('https://app.example'),
                                   JSON.stringify(h.chatBody({ stream: true })));
    assert.equal(streamed.headers['content-type'].split(';')[0], 'text/event-stream');
    assert.equal(streamed.headers['access-control-allow-origin'], 'https://app.example');
    assert.ok(streamed.text.includes('data: [DONE]'));
    const bad = await request(port, 'POST', '/v1/chat/completions', chatHeaders('https://app.example'), '{"messages": ');
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['access-control-allow-origin'], 'https://app.example');
    const health = await request(port, 'GET', '/healthz', { origin: 'https://APP.example' });
    assert.equal(health.headers['access-control-allow-origin'], 'https://APP.example', 'origins compare without case');
  });

  await t.test('a body over the limit gets its 413 with the fields, so a page can read it', async () => {
    const size = (1 << 20) + 1;
    const head = (origin) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\n` +
                             `Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    const listed = h.parseResponses((await h.rawExchange(port, [head('https://app.example'),
                                                                Buffer.alloc(size, 0x20)])).text);
    assert.equal(listed[0].status, 413);
    assert.equal(listed[0].headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(listed[0].headers.vary, 'Origin');
    const other = h.parseResponses((await h.rawExchange(port, [head('https://evil.example'),
                                                               Buffer.alloc(size, 0x20)])).text);
    assert.equal(other[0].status, 413);
    assert.equal(other[0].headers['access-control-allow-origin'], undefined);
  });

  await t.test("forwarded paths carry reprox's CORS fields, not the upstream's", async () => {
    const listed = await request(port, 'GET', '/echo', { origin: 'https://app.example' });
    assert.equal(listed.headers['x-scripted'], 'echo');
    assert.equal(listed.headers['access-control-allow-origin'], 'https://app.example');
    const other = await request(port, 'GET', '/echo', { origin: 'https://evil.example' });
    assert.equal(other.headers['x-scripted'], 'echo');
    assert.equal(other.headers['access-control-allow-origin'], undefined, 'the upstream says "*"');
  });

  await t.test('requests from other origins, or without one, get no CORS fields', async () => {
    const body = JSON.stringify(h.chatBody());
    const from = await request(port, 'POST', '/v1/chat/completions', chatHeaders('https://evil.example'), body);
    assert.equal(from.status, 200, 'the answer itself is the same: the browser is what withholds it');
    assert.equal(from.headers['access-control-allow-origin'], undefined);
    const sdk = await h.postChat(proxy, JSON.parse(body));
    assert.equal(sdk.status, 200);
    assert.equal(sdk.headers.get('access-control-allow-origin'), null);
  });

  await t.test('a real browser on a listed origin reads answers; on another it is blocked', {
    skip: chromium ? false : 'chromium is not installed (apt-get install chromium): CORS was not checked in a browser',
  }, async () => {
    const seen = await runPage(`${allowed.base}/?proxy=${encodeURIComponent(proxy.base)}`);
    assert.equal(seen.error, undefined, JSON.stringify(seen));
    assert.equal(seen.status, 200);
    assert.equal(seen.cache, 'miss');
    assert.match(seen.key, /^[0-9a-f]{64}$/);
    assert.deepEqual(seen.again, { cache: 'hit', tier: 'memory', content: seen.content });
    assert.deepEqual(seen.stream, { cache: 'hit', done: true });
    assert.deepEqual(seen.bad, { status: 400, type: 'invalid_request_error' });
    assert.equal(seen.models, 200);
    const blocked = await runPage(`${other.base}/?proxy=${encodeURIComponent(proxy.base)}`);
    assert.match(blocked.error || '', /TypeError|Failed to fetch/, JSON.stringify(blocked));
  });
});

test('CORS off by default; "*" allows any origin', { timeout: 60000 }, async (t) => {
  await t.test('off: no CORS fields, and OPTIONS names the methods', async (tt) => {
    const { proxy } = await h.startStack(tt);
    const pre = await request(proxy.port, 'OPTIONS', '/v1/chat/completions', {
      origin: 'https://app.example', 'access-control-request-method': 'POST' });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.allow, 'POST, OPTIONS');
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    const res = await request(proxy.port, 'GET', '/healthz', { origin: 'https://app.example' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const forwarded = await request(proxy.port, 'GET', '/echo', { origin: 'https://app.example' });
    assert.equal(forwarded.headers['x-scripted'], 'echo');
    assert.equal(forwarded.headers['access-control-allow-origin'], undefined, 'the upstream says "*"');
  });

  await t.test('"*": every origin, no Vary', async (tt) => {
    const { proxy } = await h.startStack(tt, { args: ['--cors-origins', '*'] });
    const pre = await request(proxy.port, 'OPTIONS', '/v1/models', {
      origin: 'http://localhost:3000', 'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization' });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.equal(pre.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
    assert.equal(pre.headers['access-control-allow-headers'], 'authorization');
    assert.equal(pre.headers.vary, undefined);
    const res = await request(proxy.port, 'POST', '/v1/chat/completions', chatHeaders('null'),
                              JSON.stringify(h.chatBody()));
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  });

  await t.test('a malformed origin stops start-up, naming the key', async () => {
    const bin = h.requiredPath('REPROX_BIN');
    const res = await new Promise((resolve) => execFile(bin, ['serve', '--listen', '127.0.0.1:0', '--upstream',
      'http://127.0.0.1:9', '--cors-origins', 'https://app.example/'], { timeout: 20000 },
    (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stderr })));
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /flag --cors-origins: server\.cors_origins: "https:\/\/app\.example\/" is not an origin/);
  });
});
