// A streaming client that stops reading: once the socket's buffers are
// full, reprox's write times out (server.write_timeout_ms), the connection
// is closed, the generation (followed by nobody else) is cancelled
// upstream, and nothing partial is cached.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const h = require('./harness');

async function waitFor(fn, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return true;
    await h.sleep(50);
  }
  return false;
}

test('a client that never reads its stream gets a write timeout; the generation stops; nothing is cached', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { config: { server: { write_timeout_ms: 500 } } });
  const text = `never read ${Date.now()}`;
  // A long stream: still running when the client's buffers are full.
  // 16 KiB chunks, 200 a second: the buffers fill within seconds while the
  // generation still has a minute to go.
  const body = JSON.stringify(h.chatBody({ stream: true, max_tokens: 100000,
                                           user: 'words=12000;pad=16384;delay_chunk_ms=5' }, text));
  const socket = net.connect(proxy.port, '127.0.0.1');
  socket.setNoDelay(true);
  let closedAt = 0;
  socket.on('close', () => { closedAt = Date.now(); });
  socket.on('error', () => {});
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.pause();  // never read: the kernel buffers fill, then reprox's writes block
  const started = Date.now();
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
               `Authorization: Bearer test-key\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const abortedBefore = (await upstream.count()).aborted;
  assert.ok(await waitFor(async () => (await upstream.count()).aborted > abortedBefore),
            'the upstream generation was cancelled');
  socket.destroy();
  assert.ok(Date.now() - started < 15000);

  // Nothing partial was stored: the same request is generated again.
  const again = await h.postChat(proxy, h.chatBody({ user: 'words=3' }, text));
  assert.equal(again.status, 200);
  assert.equal(again.cache, 'miss');
  // The server is healthy and serves others.
  assert.equal((await fetch(`${proxy.base}/healthz`)).status, 200);
  assert.ok(closedAt === 0 || closedAt >= started);
});
