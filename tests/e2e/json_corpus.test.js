// Every file of nst/JSONTestSuite's test_parsing as a request body: 4xx (or
// 2xx for a valid chat request), never 5xx, and the server stays healthy.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness');

test('JSONTestSuite bodies never give a 5xx', async (t) => {
  const dir = h.requiredPath('REPROX_JSON_TEST_SUITE_DIR', path.join(h.repoRoot, 'tests/corpora/json-test-suite/test_parsing'));
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length > 300, `corpus has ${files.length} files`);
  const { upstream, proxy } = await h.startStack(t, { args: ['--admin-token', 'admin'] });
  const bad = [];
  const counts = {};
  for (const endpoint of ['/v1/chat/completions', '/reprox/v1/explain', '/reprox/v1/purge']) {
    for (const f of files) {
      const body = fs.readFileSync(path.join(dir, f));
      const res = await fetch(`${proxy.base}${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer admin' },
        body,
      });
      const text = await res.text();
      counts[res.status] = (counts[res.status] || 0) + 1;
      const ok = (res.status >= 400 && res.status < 500) || (res.status >= 200 && res.status < 300);
      if (!ok) bad.push(`${endpoint} ${f}: ${res.status} ${text.slice(0, 200)}`);
      else if (res.status >= 400) {
        let parsed = null;
        try { parsed = JSON.parse(text); } catch (e) { /* reported below */ }
        if (!parsed || !parsed.error || typeof parsed.error.message !== 'string')
          bad.push(`${endpoint} ${f}: ${res.status} without an OpenAI error body: ${text.slice(0, 200)}`);
      }
    }
  }
  assert.deepEqual(bad, [], `status counts ${JSON.stringify(counts)}`);
  assert.equal((await upstream.count()).by_path['/v1/chat/completions'] || 0, 0,
               'no corpus file is a valid chat request');
  const health = await fetch(`${proxy.base}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  assert.equal(proxy.child.exitCode, null, 'reprox is still running');
});
