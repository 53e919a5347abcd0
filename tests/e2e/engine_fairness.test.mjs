// Fairness in the engine: queued requests are taken round-robin across API
// keys, so tenant B's single request finishes while tenant A has 64 queued,
// in well under A's total time; and [engine] tenant_queue_share stops one
// key from taking the whole queue (429 for A, room for B).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

async function startReprox(t, toml) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reprox-fair-'));
  fs.writeFileSync(path.join(dir, 'reprox.toml'), toml);
  const proc = spawn(process.env.REPROX_BIN, ['serve', '--config', path.join(dir, 'reprox.toml'), '--listen',
                                              '127.0.0.1:0', '--model', process.env.MODEL_DIR],
                     { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => { proc.kill('SIGKILL'); fs.rmSync(dir, { recursive: true, force: true }); });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reprox did not start:\n${log}`)), 60000);
    const onData = (d) => {
      log += d;
      const m = /listening on [\d.]+:(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`reprox exited ${code}:\n${log}`)));
  });
  return `http://127.0.0.1:${port}`;
}

function chat(base, key, text, maxTokens) {
  const started = Date.now();
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'cache-control': 'no-store' },
    body: JSON.stringify({ messages: [{ role: 'user', content: text }], max_tokens: maxTokens, temperature: 0 }),
  }).then(async (r) => ({ status: r.status, ms: Date.now() - started, body: await r.text() }));
}

test('a single request of tenant B is not held behind tenant A\'s burst of 64', async (t) => {
  const base = await startReprox(t, '[engine]\nqueue = 128\nmax_batch_size = 4\n');
  const tag = Date.now();
  const burst = [];
  for (let i = 0; i < 64; i++) burst.push(chat(base, 'tenant-a', `a ${tag} ${i}`, 48));
  await new Promise((r) => setTimeout(r, 100));
  const b = await chat(base, 'tenant-b', `b ${tag}`, 48);
  const a = await Promise.all(burst);
  const aTotal = Math.max(...a.map((x) => x.ms));
  assert.equal(b.status, 200, b.body);
  for (const x of a) assert.equal(x.status, 200, x.body);
  // B waited for at most a few batches, not for A's 16 batches of 4.
  assert.ok(b.ms < aTotal / 3, `B took ${b.ms} ms, A's burst ${aTotal} ms`);
});

test('tenant_queue_share: one API key holds at most its share of the queue', async (t) => {
  const base = await startReprox(t, '[engine]\nqueue = 8\nmax_batch_size = 1\ntenant_queue_share = 0.25\n');
  const tag = Date.now();
  const burst = [];
  for (let i = 0; i < 10; i++) burst.push(chat(base, 'tenant-a', `share ${tag} ${i}`, 64));
  await new Promise((r) => setTimeout(r, 150));
  const b = await chat(base, 'tenant-b', `share b ${tag}`, 8);
  const a = await Promise.all(burst);
  const refused = a.filter((x) => x.status === 429);
  assert.ok(refused.length >= 1, `statuses ${a.map((x) => x.status)}`);
  assert.match(refused[0].body, /share of the engine queue/);
  assert.equal(b.status, 200, b.body);
});
