// Reproducibility audits (--audit-every / [audit]): a picked cache hit is
// generated again in the background and compared with the cached answer;
// reprox_repro_audits_total{result="match|mismatch"} counts the outcomes.
// The scripted upstream's "nondeterministic" directive plays an upstream
// that answers the same request differently each time.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

function sample(text, name, labelPart) {
  for (const line of text.split('\n')) {
    if (line.startsWith(name + '{') && line.includes(labelPart)) return Number(line.trim().split(/\s+/).pop());
  }
  return 0;
}

async function audits(proxy) {
  const text = await (await fetch(`${proxy.base}/metrics`)).text();
  return { match: sample(text, 'reprox_repro_audits_total', 'result="match"'),
           mismatch: sample(text, 'reprox_repro_audits_total', 'result="mismatch"') };
}

// Polls the audit counters until pred holds; a timeout names the last counts.
async function waitForAudits(proxy, what, pred, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = await audits(proxy);
    if (pred(a)) return a;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (counts: ${JSON.stringify(a)})`);
    await h.sleep(20);
  }
}

test('every hit audited: a deterministic upstream matches, a nondeterministic one mismatches', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { args: ['--audit-every', '1'] });
  assert.deepEqual(await audits(proxy), { match: 0, mismatch: 0 });

  // Deterministic answers (with logprobs and two choices): the audit matches.
  const body = h.chatBody({ n: 2, logprobs: true, stream: true });
  const miss = await h.postChat(proxy, body);
  assert.equal(miss.cache, 'miss');
  const before = (await upstream.count()).total;
  const hit = await h.postChat(proxy, body);
  assert.equal(hit.cache, 'hit');
  assert.equal(hit.text.replace(/"(id|created)":[^,]+,/g, ''), miss.text.replace(/"(id|created)":[^,]+,/g, ''));
  await waitForAudits(proxy, 'a matching audit', (a) => a.match === 1);
  assert.equal((await upstream.count()).total, before + 1, 'the audit asked the upstream once');
  assert.equal((await audits(proxy)).mismatch, 0);

  // An upstream that answers differently each time: the audit says so, and
  // the client still got the cached answer.
  const flaky = h.chatBody({}, `flaky ${Date.now()} [[scripted: nondeterministic]]`);
  const first = await h.postChat(proxy, flaky);
  const again = await h.postChat(proxy, flaky);
  assert.equal(again.cache, 'hit');
  assert.equal(again.json.choices[0].message.content, first.json.choices[0].message.content);
  await waitForAudits(proxy, 'a mismatching audit', (a) => a.mismatch === 1);
  assert.equal((await audits(proxy)).match, 1);
});

test('audits are sampled (one hit in N) and off by default', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { config: { audit: { every: 3 } } });
  const body = h.chatBody();
  await h.postChat(proxy, body);
  // Hits 3 and 6 are picked. At most one audit runs at a time (a hit picked
  // meanwhile is skipped), so the first must finish before the sixth hit:
  // on a loaded box its generation can outlast three hits.
  for (let i = 0; i < 3; i++) assert.equal((await h.postChat(proxy, body)).cache, 'hit');
  await waitForAudits(proxy, 'the first audit', (a) => a.match === 1);
  for (let i = 0; i < 3; i++) assert.equal((await h.postChat(proxy, body)).cache, 'hit');
  await waitForAudits(proxy, 'two audits', (a) => a.match === 2);
  await h.sleep(200);
  assert.deepEqual(await audits(proxy), { match: 2, mismatch: 0 });
  assert.equal((await upstream.count()).total, 3, 'one miss and two audits reached the upstream');

  const plain = await h.startReprox(upstream);
  t.after(() => plain.stop());
  const b2 = h.chatBody();
  await h.postChat(plain, b2);
  await h.postChat(plain, b2);
  await h.sleep(200);
  assert.deepEqual(await audits(plain), { match: 0, mismatch: 0 });
});
