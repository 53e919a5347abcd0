// [auth] keys_file: only client keys whose SHA-256 is listed may call the
// API (401 in OpenAI's shape otherwise); health and metrics stay open; the
// file names the line of a malformed entry.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const h = require('./harness');

const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');

test('an allow-list of client keys stored as SHA-256 hashes', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprox-keys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'keys.txt');
  fs.writeFileSync(file, `# team a\n${sha256('sk-good')}\n\n${sha256('sk-other').toUpperCase()}  # team b\n`);
  const { proxy } = await h.startStack(t, { config: { auth: { keys_file: file } } });

  const good = await h.postChat(proxy, h.chatBody(), { authorization: 'Bearer sk-good' });
  assert.equal(good.status, 200);
  assert.equal((await h.postChat(proxy, h.chatBody(), { authorization: 'Bearer sk-other' })).status, 200);
  for (const auth of ['Bearer sk-bad', '', `Bearer ${sha256('sk-good')}`]) {
    const bad = await h.postChat(proxy, h.chatBody(), auth ? { authorization: auth } : { authorization: '' });
    assert.equal(bad.status, 401, `authorization '${auth}'`);
    assert.equal(bad.json.error.code, 'invalid_api_key');
    assert.equal(bad.json.error.type, 'invalid_request_error');
  }
  const models = await fetch(`${proxy.base}/v1/models`, { headers: { authorization: 'Bearer sk-bad' } });
  assert.equal(models.status, 401);
  assert.equal((await fetch(`${proxy.base}/healthz`)).status, 200);
  assert.equal((await fetch(`${proxy.base}/metrics`)).status, 200);
  // The key itself is never written anywhere reprox prints.
  assert.ok(!proxy.child.output.includes('sk-good'));

  fs.writeFileSync(path.join(dir, 'bad.txt'), `${sha256('x')}\nnot-a-hash\n`);
  const check = spawnSync(process.env.REPROX_BIN, ['serve', '--listen', '127.0.0.1:0', '--upstream', 'http://127.0.0.1:9'],
                          { env: Object.assign({}, process.env, { REPROX_AUTH_KEYS_FILE: path.join(dir, 'bad.txt') }),
                            cwd: dir, timeout: 10000 });
  assert.notEqual(check.status, 0);
  assert.match(check.stderr.toString(), /bad\.txt:2: expected the SHA-256 of a key/);
});
