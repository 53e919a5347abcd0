// The reproducibility suite end to end: every case through `reprox serve`
// must hash to the committed value (the same bytes the engine-level run
// hashes), again on a cache hit, and a streamed answer must carry the same
// text. Every cache hit is also audited (--audit-every 1): generated again
// in the background, with KV reuse, and compared with the cached answer.
// REPRO_WEIGHTS (optional) passes --weights to the server, REPRO_EXPECTED
// names the hash file to check against (default expected_sha256.json; a
// relative name is in this folder).
// REPROX_ENGINE_* variables (numeric mode, dtype, threads) reach the server
// through its environment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// One body per line, sent verbatim: JSON.parse would round 64-bit seeds.
const lines = readFileSync(join(here, 'cases.jsonl'), 'utf8').split('\n').filter((l) => l.length);
const cases = lines.map((l) => JSON.parse(l));
const expected = JSON.parse(readFileSync(resolvePath(here, process.env.REPRO_EXPECTED || 'expected_sha256.json'), 'utf8'));
const weightsArgs = process.env.REPRO_WEIGHTS ? ['--weights', process.env.REPRO_WEIGHTS] : [];
let proc, base;

before(async () => {
  proc = spawn(process.env.REPROX_BIN, ['serve', '--model', process.env.REPRO_MODEL, '--listen', '127.0.0.1:0',
    '--config', join(here, 'empty.toml'), '--audit-every', '1', ...weightsArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  base = await new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error('reprox did not start:\n' + log)), 60000);
    proc.stderr.on('data', (d) => {
      log += d;
      const m = /listening on ([\d.]+):(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(`http://${m[1]}:${m[2]}`); }
    });
    proc.on('exit', (code) => reject(new Error(`reprox exited ${code}:\n${log}`)));
  });
});

after(() => { proc?.kill('SIGKILL'); });

function choicesBytes(body) {
  const start = body.indexOf('"choices":');
  const end = body.lastIndexOf(',"usage":');
  return body.slice(start, end);
}

const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest('hex');

async function post(body) {
  const res = await fetch(base + '/v1/chat/completions', { method: 'POST', body,
    headers: { 'content-type': 'application/json', authorization: 'Bearer repro' } });
  return { res, text: await res.text() };
}

test('every case hashes to the committed value, miss and hit alike', async () => {
  assert.equal(cases.length, expected.length);
  const seen = new Set();
  for (let i = 0; i < cases.length; i++) {
    const first = await post(lines[i]);
    assert.equal(first.res.status, 200, `case ${i}: ${first.text}`);
    // Cases whose canonical key equals an earlier one's (e.g. greedy
    // requests differing only in seed) are hits.
    const key = first.res.headers.get('x-reprox-key');
    assert.equal(first.res.headers.get('x-reprox-cache'), seen.has(key) ? 'hit' : 'miss', `case ${i}`);
    seen.add(key);
    assert.equal(sha256(choicesBytes(first.text)), expected[i], `case ${i} (miss) differs from the committed hash`);
    const again = await post(lines[i]);
    assert.equal(again.res.headers.get('x-reprox-cache'), 'hit', `case ${i}`);
    assert.equal(choicesBytes(again.text), choicesBytes(first.text), `case ${i}: the hit's bytes differ`);
    if (cases[i].seed === undefined) assert.equal(first.res.headers.get('x-reprox-seed'), '42');
  }
});

test('a streamed answer carries the same text as the JSON answer', async () => {
  for (let i = 0; i < cases.length; i += 9) {
    const json = JSON.parse((await post(lines[i])).text);
    // no-store: generate afresh instead of replaying the cached entry
    const res = await fetch(base + '/v1/chat/completions', { method: 'POST',
      body: lines[i].replace(/^\{/, '{"stream":true,'),
      headers: { 'cache-control': 'no-store', authorization: 'Bearer repro' } });
    assert.equal(res.headers.get('x-reprox-cache'), 'bypass');
    const text = await res.text();
    const content = json.choices.map(() => '');
    const finish = json.choices.map(() => null);
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      for (const c of chunk.choices) {
        content[c.index] += c.delta.content ?? '';
        if (c.finish_reason) finish[c.index] = c.finish_reason;
      }
    }
    assert.deepEqual(content, json.choices.map((c) => c.message.content), `case ${i}`);
    assert.deepEqual(finish, json.choices.map((c) => c.finish_reason), `case ${i}`);
  }
});

test('audits of the hits found no answer that regenerates differently', async () => {
  const count = async () => {
    const text = await (await fetch(base + '/metrics')).text();
    const get = (r) => Number((new RegExp(`^reprox_repro_audits_total\\{result="${r}"\\} (\\S+)`, 'm').exec(text) || [])[1] || 0);
    return { match: get('match'), mismatch: get('mismatch') };
  };
  // One last hit, then wait for the audits to settle.
  let last = await count();
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = await count();
    if (now.match > 0 && now.match === last.match && now.mismatch === last.mismatch) break;
    last = now;
  }
  const final = await count();
  assert.equal(final.mismatch, 0, 'a cached answer regenerated differently');
  assert.ok(final.match >= 10, `only ${final.match} audits ran`);
});
