// Regression: keep-alive clients mixing cache hits and misses must never see
// the connection dropped. The miss path watches the socket for a client
// disconnect; a readiness report for bytes an earlier read already took
// ("readable, 0 bytes available") was taken for EOF and the connection was
// closed under an in-flight miss (client: "socket hang up"). Found by the
// Redis chaos test; reproduces without Redis, so none is used here.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const { startStack, chatBody, postChat } = require('../harness.js');

test('mixed hits and misses over keep-alive: no dropped connection', { timeout: 60000 }, async (t) => {
  const { proxy } = await startStack(t);
  const hot = [];
  for (let i = 0; i < 16; ++i) {
    hot.push(chatBody({ seed: i }));
    assert.strictEqual((await postChat(proxy, hot[i])).status, 200);
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const errors = [];
  let ok = 0;
  let n = 0;
  const deadline = Date.now() + 5000;
  await Promise.all(Array.from({ length: 8 }, async (_, id) => {
    while (Date.now() < deadline && n < 100000) {
      const miss = ++n % 5 === 0;
      const payload = JSON.stringify(miss ? chatBody({}, `keepalive miss ${process.pid} ${id} ${n}`) : hot[n % 16]);
      const status = await new Promise((resolve) => {
        const req = http.request({ host: '127.0.0.1', port: proxy.port, path: '/v1/chat/completions', method: 'POST',
                                   agent, headers: { 'content-type': 'application/json', authorization: 'Bearer k',
                                                     'content-length': Buffer.byteLength(payload) } },
                                 (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
        req.setTimeout(10000, () => req.destroy(new Error('client timeout')));
        req.on('error', (e) => resolve(e.message));
        req.end(payload);
      });
      if (status === 200) ok++; else errors.push(`${status} (${miss ? 'miss' : 'hit'})`);
    }
  }));
  agent.destroy();
  t.diagnostic(`${ok} answers, ${errors.length} errors`);
  assert.ok(ok > 1000, 'the load really ran');
  assert.deepStrictEqual(errors.slice(0, 5), [], `errors: ${errors.length}`);
});
