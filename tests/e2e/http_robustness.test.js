// HTTP/1.1 robustness on raw sockets: limits, timeouts, smuggling guards,
// pipelining, keep-alive, Expect: 100-continue, forwarding of other paths.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

function chatRequest(body, extraHeaders = '') {
  const text = JSON.stringify(body);
  return `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
         `Authorization: Bearer test-key\r\n${extraHeaders}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

function only(res, status) {
  const answers = h.parseResponses(res.text);
  assert.ok(answers.length >= 1, `an answer: ${JSON.stringify(res)}`);
  assert.equal(answers[0].status, status, res.text);
  return answers[0];
}

function assertErrorJson(answer) {
  const body = JSON.parse(answer.body);
  assert.ok(body.error && typeof body.error.message === 'string', answer.body);
}

test('HTTP robustness', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { config: { server: { read_timeout_ms: 600 } } });
  const port = proxy.port;

  await t.test('headers larger than 8 KiB get 431', async () => {
    const res = await h.rawExchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`]);
    assertErrorJson(only(res, 431));
    const near = await h.rawExchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(7000)}\r\nConnection: close\r\n\r\n`]);
    only(near, 200);
  });

  await t.test('a body over 1 MiB gets 413', async () => {
    const size = (1 << 20) + 1;
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    const res = await h.rawExchange(port, [head, Buffer.alloc(size, 0x20)]);
    assertErrorJson(only(res, 413));
  });

  await t.test('a slow request gets 408 and is closed after the read timeout', async () => {
    const res = await h.rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n', { delayMs: 100 }, 'X-Slow: 1\r\n'],
                                    { idleMs: 5000 });
    assert.ok(res.closed, 'the server closed the connection');
    assert.ok(res.closedAfterMs >= 500 && res.closedAfterMs < 3500, `closed after ${res.closedAfterMs} ms`);
    assertErrorJson(only(res, 408));
  });

  // The read deadline is a lazy timer: requests on one connection only move
  // it. Requests spread over several read timeouts all succeed, and a slow
  // request after them still gets its 408 in time.
  await t.test('keep-alive requests over several read timeouts, then a slow one gets 408', async () => {
    const get = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const chunks = [];
    for (let i = 0; i < 8; i++) chunks.push(get, { delayMs: 250 });
    chunks.push('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const res = await h.rawExchange(port, chunks, { idleMs: 5000 });
    const answers = h.parseResponses(res.text);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200, 200, 200, 408]);
    assert.ok(res.closed, 'the server closed the connection');
    // The deadline runs from when the server waits for the request: the
    // answer to the eighth (~1750 ms) plus the read timeout (600 ms).
    assert.ok(res.closedAfterMs >= 1750 + 500 && res.closedAfterMs < 1750 + 3500, `closed after ${res.closedAfterMs} ms`);
  });

  await t.test('a connection that sends nothing is closed silently after the read timeout', async () => {
    const res = await h.rawExchange(port, [], { idleMs: 5000 });
    assert.ok(res.closed);
    assert.ok(res.closedAfterMs >= 500 && res.closedAfterMs < 3500, `closed after ${res.closedAfterMs} ms`);
    assert.equal(res.text, '');
  });

  await t.test('many slowloris sockets do not slow normal clients', async () => {
    const sockets = Array.from({ length: 100 }, () =>
      h.rawExchange(port, ['GET /healthz HTTP/1.1\r\n'], { idleMs: 5000 }));
    const started = Date.now();
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${proxy.base}/healthz`)).status, 200);
    assert.ok(Date.now() - started < 2000);
    const results = await Promise.all(sockets);
    assert.ok(results.every((r) => r.closed), 'every slow socket was closed');
  });

  await t.test('Content-Length with Transfer-Encoding gets 400, in both orders', async () => {
    const a = await h.rawExchange(port, ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n']);
    assertErrorJson(only(a, 400));
    const b = await h.rawExchange(port, ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n']);
    assertErrorJson(only(b, 400));
  });

  await t.test('a duplicate Content-Length gets 400', async () => {
    for (const second of ['2', '3']) {
      const res = await h.rawExchange(port, [`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: ${second}\r\n\r\n{}`]);
      assertErrorJson(only(res, 400));
    }
  });

  await t.test('garbage instead of a request line gets 400', async () => {
    const res = await h.rawExchange(port, ['THIS IS NOT HTTP\r\n\r\n']);
    only(res, 400);
  });

  await t.test('two pipelined requests get two answers in order', async () => {
    const body = h.chatBody({ user: 'delay_first_ms=200' });
    const res = await h.rawExchange(port, [chatRequest(body) + 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    const answers = h.parseResponses(res.text);
    assert.equal(answers.length, 2, res.text);
    assert.equal(answers[0].status, 200);
    assert.equal(answers[0].headers['x-reprox-cache'], 'miss');
    assert.equal(JSON.parse(answers[0].body).object, 'chat.completion');
    assert.equal(answers[1].status, 200);
    assert.deepEqual(JSON.parse(answers[1].body), { status: 'ok' });
    assert.ok(res.closed, 'closed after Connection: close');
  });

  await t.test('pipelined streamed and JSON chat answers stay in order', async () => {
    const body = h.chatBody({ stream: true, user: 'delay_chunk_ms=30;words=5' });
    const res = await h.rawExchange(port, [chatRequest(body) + chatRequest(Object.assign({}, body, { stream: false }), 'Connection: close\r\n')]);
    const answers = h.parseResponses(res.text);
    assert.equal(answers.length, 2, res.text);
    assert.equal(answers[0].headers['x-reprox-cache'], 'miss');
    assert.equal(h.parseSse(answers[0].body).pop(), '[DONE]');
    assert.equal(answers[1].headers['x-reprox-cache'], 'hit');
    assert.equal(JSON.parse(answers[1].body).choices[0].message.content, h.streamContent(h.parseSse(answers[0].body))[0]);
  });

  await t.test('keep-alive: one socket serves several requests one after another', async () => {
    const body = h.chatBody();
    const res = await h.rawExchange(port, [
      'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', { delayMs: 200 },
      chatRequest(body), { delayMs: 300 },
      chatRequest(body), { delayMs: 200 },
      'GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n',
    ], { idleMs: 400 });
    const answers = h.parseResponses(res.text);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200], res.text);
    assert.deepEqual(answers.slice(1, 3).map((a) => a.headers['x-reprox-cache']), ['miss', 'hit']);
    assert.ok(!res.closed || res.closedAfterMs > 700, 'the connection stayed open between requests');
  });

  await t.test('Expect: 100-continue gets 100 Continue, then the answer', async () => {
    const text = JSON.stringify(h.chatBody());
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer k\r\n` +
                 `Expect: 100-continue\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n`;
    const res = await h.rawExchange(port, [head, { delayMs: 300 }, text]);
    assert.match(res.text, /^HTTP\/1\.1 100 Continue\r\n\r\n/, 'the 100 came before the body was sent');
    const answers = h.parseResponses(res.text);
    assert.deepEqual(answers.map((a) => a.status), [100, 200]);
    assert.equal(answers[1].headers['x-reprox-cache'], 'miss');
  });

  await t.test('other paths are forwarded to the upstream unchanged', async () => {
    const res = await fetch(`${proxy.base}/echo/some/path?a=1&b=two`, {
      method: 'POST', headers: { 'x-custom': 'kept', 'content-type': 'text/plain' }, body: 'raw body bytes',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-scripted'), 'echo');
    const echoed = await res.json();
    assert.equal(echoed.method, 'POST');
    assert.equal(echoed.path, '/echo/some/path?a=1&b=two');
    assert.equal(echoed.body, 'raw body bytes');
    assert.equal(echoed.headers['x-custom'], 'kept');
    const get = await fetch(`${proxy.base}/echo?status=418`);
    assert.equal(get.status, 418);
    const unknown = await fetch(`${proxy.base}/no/such/path`);
    assert.equal(unknown.status, 404);
    assert.ok((await unknown.json()).error, 'OpenAI error JSON');
  });

  await t.test('a wrong method on a known path gets 405 and Allow', async () => {
    const res = await fetch(`${proxy.base}/v1/chat/completions`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST, OPTIONS');
    assert.ok((await res.json()).error);
    const healthz = await fetch(`${proxy.base}/healthz`, { method: 'DELETE' });
    assert.equal(healthz.status, 405);
    assert.equal(healthz.headers.get('allow'), 'GET, HEAD, OPTIONS');
  });

  await t.test('OPTIONS on a known path gets 204 and Allow', async () => {
    const res = await fetch(`${proxy.base}/healthz`, { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
  });

  // HEAD answers with GET's head, its Content-Length included, and no body:
  // the GET after it on the same socket is read as the next answer.
  await t.test('HEAD on a GET endpoint: the head without the body, keep-alive intact', async () => {
    for (const target of ['/healthz', '/metrics']) {
      const res = await h.rawExchange(port, [`HEAD ${target} HTTP/1.1\r\nHost: x\r\n\r\n`,
                                             `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
      const end = res.text.indexOf('\r\n\r\n');
      assert.match(res.text.slice(0, end), /^HTTP\/1\.1 200 /, target);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(res.text.slice(0, end))[1]);
      assert.ok(length > 0, `${target}: GET's length`);
      const rest = res.text.slice(end + 4);
      assert.match(rest, /^HTTP\/1\.1 200 /, `${target}: no body after HEAD's head`);
      const get = h.parseResponses(rest)[0];
      if (target === '/healthz') assert.equal(get.body.length, length, 'HEAD said the GET body length');
    }
  });

  assert.ok(upstream);
});
