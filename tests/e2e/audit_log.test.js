// The audit log ([log] audit): one JSON line per chat request with the
// fields operators need and never the bearer token or (unless asked) the
// prompt; reopened on SIGHUP so logrotate works. The access log ([log]
// access) writes one line per request to stderr.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness');

const TOKEN = 'sk-secret-token-for-the-audit-test';

function readLines(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
}

async function waitLines(file, n, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = readLines(file);
    if (lines.length >= n) return lines;
    if (Date.now() > deadline) throw new Error(`${file}: ${lines.length} lines, waited for ${n}`);
    await h.sleep(20);
  }
}

const FIELDS = ['time', 'time_ms', 'key', 'tenant', 'model', 'seed', 'seed_injected', 'params', 'mode', 'fingerprint',
                'cache', 'tier', 'rule', 'ttl_s', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'latency_ms',
                'status', 'error'];

test('one line per request with every field, no token, no prompt; SIGHUP reopens', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { config: { log: { audit: 'audit.jsonl' } } });
  const file = path.join(proxy.dir, 'audit.jsonl');
  const auth = { authorization: `Bearer ${TOKEN}` };
  const prompt = `audit prompt ${Date.now()}`;
  const body = h.chatBody({ seed: 7, temperature: 0.5, stop: ['\n\n'] }, prompt);
  await h.postChat(proxy, body, auth);                               // miss
  await h.postChat(proxy, body, auth);                               // hit
  await h.postChat(proxy, h.chatBody({ stream: true }), auth);       // a streamed miss, injected seed
  await h.postChat(proxy, h.chatBody(), Object.assign({ 'cache-control': 'no-store' }, auth));  // bypass
  await h.postChat(proxy, { model: 'scripted-model', messages: [], temperature: 7 }, auth);  // refused
  const lines = await waitLines(file, 5);
  assert.equal(lines.length, 5);
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(!text.includes(TOKEN), 'never the bearer token');
  assert.ok(!text.includes(prompt), 'never the prompt unless audit_prompts');
  // A line is written when its answer is done, so the streamed miss may land
  // after the request that followed it: pick each line by what it is.
  const records = lines.map((l) => JSON.parse(l));
  const [miss, hit] = records.filter((r) => r.seed === 7);
  const stream = records.find((r) => r.params && r.params.stream === true);
  const refused = records.find((r) => r.status === 400);
  const bypass = records.find((r) => ![miss, hit, stream, refused].includes(r));
  for (const f of FIELDS) assert.ok(f in miss, `field ${f}`);
  assert.equal(miss.cache, 'miss');
  assert.equal(hit.cache, 'hit');
  assert.equal(hit.tier, 'memory');
  assert.equal(miss.key, hit.key);
  assert.equal(miss.seed, 7);
  assert.equal(miss.seed_injected, false);
  assert.equal(miss.params.temperature, 0.5);
  assert.deepEqual(miss.params.stop, ['\n\n']);
  assert.equal(miss.mode, 'sampled');
  assert.match(miss.fingerprint, /^fp_[0-9a-f]{16}$/);
  assert.equal(miss.rule, 'default');
  assert.equal(miss.ttl_s, 3600);
  assert.ok(miss.prompt_tokens > 0 && miss.completion_tokens > 0);
  assert.equal(miss.status, 200);
  assert.match(miss.tenant, /^[0-9a-f]{64}$/);
  assert.equal(stream.cache, 'miss');
  assert.equal(stream.seed_injected, true);
  assert.equal(stream.params.stream, true);
  assert.ok(stream.completion_tokens > 0);
  assert.equal(bypass.cache, 'bypass');
  assert.equal(bypass.ttl_s, -1);
  assert.equal(refused.status, 400);
  assert.equal(refused.cache, 'error');
  assert.ok(refused.error.length > 0);
  assert.equal(miss.messages, undefined);

  // logrotate: move the file away, SIGHUP, and the next line lands in a new file.
  const rotated = file + '.1';
  fs.renameSync(file, rotated);
  proxy.child.kill('SIGHUP');
  await h.sleep(100);
  await h.postChat(proxy, body, auth);
  const fresh = await waitLines(file, 1);
  assert.equal(JSON.parse(fresh[0]).cache, 'hit');
  assert.equal(readLines(rotated).length, 5, 'the rotated file keeps its lines');
  assert.equal((await upstream.count()).total, 3);
});

test('audit_prompts = true logs the messages; access = true writes a line per request to stderr', async (t) => {
  const { proxy } = await h.startStack(t, { config: { log: { audit: 'audit.jsonl', audit_prompts: true, access: true } } });
  const file = path.join(proxy.dir, 'audit.jsonl');
  const prompt = `logged prompt ${Date.now()}`;
  await h.postChat(proxy, h.chatBody({}, prompt), { authorization: `Bearer ${TOKEN}` });
  const [line] = await waitLines(file, 1);
  const record = JSON.parse(line);
  assert.deepEqual(record.messages, [{ role: 'user', content: prompt }]);
  assert.ok(!line.includes(TOKEN));
  const deadline = Date.now() + 5000;
  while (!/"POST \/v1\/chat\/completions" 200 miss/.test(proxy.child.output) && Date.now() < deadline) await h.sleep(20);
  assert.match(proxy.child.output, /"POST \/v1\/chat\/completions" 200 miss - [\d.]+ms key=[0-9a-f]{16}/);
  assert.ok(!proxy.child.output.includes(TOKEN));
  const dropped = (await (await fetch(`${proxy.base}/metrics`)).text()).match(/^reprox_audit_log_dropped_total (\S+)/m);
  assert.ok(dropped, 'reprox_audit_log_dropped_total is exported');
  assert.equal(Number(dropped[1]), 0);
});
