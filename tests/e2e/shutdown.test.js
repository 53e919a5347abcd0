// Graceful shutdown: SIGTERM lets in-flight streams finish, refuses new
// connections and exits 0 within the drain timeout.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const h = require('./harness');

function connectResult(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('connect', () => { s.destroy(); resolve('connected'); });
    s.on('error', (e) => resolve(e.code));
  });
}

test('SIGTERM drains in-flight streams', async (t) => {
  const { proxy } = await h.startStack(t, { config: { server: { drain_timeout_ms: 8000, read_timeout_ms: 5000 } } });

  const res = await fetch(`${proxy.base}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(h.chatBody({ stream: true, user: 'delay_chunk_ms=100;words=15' })),
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const first = await reader.read();
  assert.ok(!first.done);
  let text = new TextDecoder().decode(first.value);

  // A request whose headers are half sent when the drain starts: it is
  // answered (503 from /healthz), then its connection closes.
  const halfHealth = h.rawExchange(proxy.port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n', { delayMs: 500 }, '\r\n'],
                                   { idleMs: 3000 });
  await h.sleep(150);
  const signalledAt = Date.now();
  proxy.child.kill('SIGTERM');
  await h.sleep(150);
  assert.equal(await connectResult(proxy.port), 'ECONNREFUSED', 'new connections are refused while draining');

  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const events = h.parseSse(text);
  assert.equal(events[events.length - 1], '[DONE]', 'the in-flight stream completed');
  assert.match(h.streamContent(events)[0], / w15$/);

  const health = h.parseResponses((await halfHealth).text);
  assert.equal(health.length, 1, 'the half-sent request was answered');
  assert.equal(health[0].status, 503);
  assert.deepEqual(JSON.parse(health[0].body), { status: 'draining' });

  const exit = await h.waitExit(proxy.child);
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.ok(Date.now() - signalledAt < 8000, 'exited within the drain timeout');
});

test('the drain timeout cuts streams that take too long, and the process still exits 0', async (t) => {
  const { proxy } = await h.startStack(t, { config: { server: { drain_timeout_ms: 700 } } });
  const res = await fetch(`${proxy.base}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(h.chatBody({ stream: true, user: 'delay_chunk_ms=200;words=50' })),
  });
  const reader = res.body.getReader();
  await reader.read();
  const signalledAt = Date.now();
  proxy.child.kill('SIGTERM');
  const exit = await h.waitExit(proxy.child);
  const elapsed = Date.now() - signalledAt;
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.ok(elapsed >= 600 && elapsed < 3000, `exited after ${elapsed} ms`);
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } catch (e) { /* the connection was cut */ }
  assert.ok(!text.includes('[DONE]'), 'the cut stream did not pretend to complete');
});

test('SIGTERM with no traffic exits 0 at once', async (t) => {
  const { proxy } = await h.startStack(t);
  const idle = await fetch(`${proxy.base}/healthz`);  // leaves an idle keep-alive connection
  assert.equal(idle.status, 200);
  const signalledAt = Date.now();
  proxy.child.kill('SIGTERM');
  const exit = await h.waitExit(proxy.child);
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.ok(Date.now() - signalledAt < 2000);
});
