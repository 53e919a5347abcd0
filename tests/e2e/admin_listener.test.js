// [admin] listen: /metrics and the admin endpoints move to their own
// listener. The API listener answers them 404, as if absent; the admin
// listener serves nothing else and forwards nothing upstream. /healthz is on
// both.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

async function adminPort(child) {
  const deadline = Date.now() + 10000;
  for (;;) {
    const m = child.output.match(/admin endpoints listening on [^\s:]+:(\d+)/);
    if (m) return Number(m[1]);
    if (Date.now() > deadline) throw new Error(`no admin listener in:\n${child.output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function call(base, path, { method = 'GET', token, body } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text };
}

test('metrics and admin endpoints on a separate listener', async (t) => {
  const { proxy } = await h.startStack(t, {
    config: { admin: { listen: '127.0.0.1:0' }, proxy: { admin_token: 'adm1n' } },
  });
  const admin = `http://127.0.0.1:${await adminPort(proxy.child)}`;
  assert.notEqual(admin, proxy.base);

  // The API listener: the API and health, no metrics or admin endpoints.
  assert.equal((await h.postChat(proxy, h.chatBody())).status, 200);
  assert.equal((await call(proxy.base, '/healthz')).status, 200);
  for (const [path, method] of [['/metrics', 'GET'], ['/reprox/v1/stats', 'GET'], ['/reprox/status', 'GET'],
                                ['/reprox/v1/purge', 'POST'], ['/reprox/v1/fallback/clear', 'POST']]) {
    const res = await call(proxy.base, path, { method, token: 'adm1n', body: method === 'POST' ? { all: true } : undefined });
    assert.equal(res.status, 404, `${method} ${path} on the API listener`);
    assert.equal(JSON.parse(res.text).error.type, 'invalid_request_error');
  }

  // The admin listener: metrics (which counted the chat above), health and
  // the token-gated endpoints; the API is not there and nothing is forwarded.
  const metrics = await call(admin, '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.text, /reprox_requests_total\{[^}]*endpoint="\/v1\/chat\/completions"/);
  assert.equal((await call(admin, '/healthz')).status, 200);
  assert.equal((await call(admin, '/reprox/v1/stats', { token: 'adm1n' })).status, 200);
  assert.equal((await call(admin, '/reprox/v1/purge', { method: 'POST', body: { all: true } })).status, 401);
  const purged = await call(admin, '/reprox/v1/purge', { method: 'POST', token: 'adm1n', body: { all: true } });
  assert.equal(purged.status, 200, purged.text);
  for (const [path, method] of [['/v1/chat/completions', 'POST'], ['/v1/models', 'GET'], ['/reprox/v1/explain', 'POST'],
                                ['/v1/embeddings', 'POST']]) {
    const res = await call(admin, path, { method, body: method === 'POST' ? h.chatBody() : undefined });
    assert.equal(res.status, 404, `${method} ${path} on the admin listener`);
  }
});

test('a bad admin listen address stops start-up with a clear message', async () => {
  const { spawnSync } = require('node:child_process');
  const res = spawnSync(process.env.REPROX_BIN,
                        ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:notaport',
                         '--upstream', 'http://127.0.0.1:9'], { timeout: 10000 });
  assert.notEqual(res.status, 0);
  assert.match(res.stderr.toString() + res.stdout.toString(), /listen port must be a number, got '127\.0\.0\.1:notaport'/);
});
