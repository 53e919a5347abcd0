// Near-duplicate matching end to end, in front of the scripted upstream:
// shadow mode counts without serving; serve mode answers an exact miss from
// the nearest entry with its headers, never writes it back, keeps tenants
// apart, lets guards veto, honours cache: {"near": false}, and a purge
// removes near-hits too.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('./harness');

async function metric(proxy, name, labelPart = '') {
  const text = await (await fetch(`${proxy.base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if ((line.startsWith(name + '{') && line.includes(labelPart)) || (!labelPart && line.startsWith(name + ' ')))
      sum += Number(line.trim().split(/\s+/).pop());
  return sum;
}

function ask(text, extra = {}) {
  return Object.assign({ model: 'scripted-model', seed: 3, messages: [
    { role: 'system', content: 'You are the support assistant.' }, { role: 'user', content: text }] }, extra);
}

test('shadow mode computes the would-be near-hit, serves the exact path, counts the outcome', async (t) => {
  const { upstream, proxy } = await h.startStack(t, { config: { cache: { rule: [{ near: 'shadow' }] } } });
  const tag = `${Date.now()}`;
  const first = await h.postChat(proxy, ask(`How do I reset my password for account ${tag}?`));
  assert.equal(first.cache, 'miss');
  const second = await h.postChat(proxy, ask(`how do i reset my password for account ${tag}`));
  assert.equal(second.cache, 'miss', 'shadow never serves a near-hit');
  assert.equal((await upstream.count()).total, 2);
  const deadline = Date.now() + 5000;
  let compared = 0;
  while (Date.now() < deadline) {
    compared = (await metric(proxy, 'reprox_near_shadow_total', 'outcome="same"')) +
               (await metric(proxy, 'reprox_near_shadow_total', 'outcome="different"'));
    if (compared === 1) break;
    await h.sleep(20);
  }
  assert.equal(compared, 1, 'one comparison with the would-be near-hit');
  assert.equal(await metric(proxy, 'reprox_cache_near_hits_total'), 0);
  assert.equal(await metric(proxy, 'reprox_near_shadow_answer_similarity_count'), 1);
});

test('serve mode: near-hit headers, no write-back, guards, tenants, opt-out, purge', async (t) => {
  const { upstream, proxy } = await h.startStack(t, {
    config: { cache: { rule: [{ near: 'serve' }] }, proxy: { admin_token: 'adm' } } });
  const tag = `${Date.now()}`;
  const original = await h.postChat(proxy, ask(`How do I reset my password for account ${tag}?`));
  assert.equal(original.cache, 'miss');
  const nearBody = ask(`how do i reset my password for account ${tag}`);
  const near = await h.postChat(proxy, nearBody);
  assert.equal(near.cache, 'near-hit');
  assert.equal(near.headers.get('x-reprox-near-key'), original.key);
  assert.ok(Number(near.headers.get('x-reprox-similarity')) >= 0.95, near.headers.get('x-reprox-similarity'));
  assert.notEqual(near.key, original.key);
  assert.equal(near.json.choices[0].message.content, original.json.choices[0].message.content);
  assert.equal((await h.postChat(proxy, nearBody)).cache, 'near-hit', 'never written back under its own key');
  assert.equal(await metric(proxy, 'reprox_cache_near_hits_total'), 2);
  assert.equal((await upstream.count()).total, 1);

  // Another tenant never near-hits this tenant's entry.
  const other = await h.postChat(proxy, nearBody, { authorization: 'Bearer someone-else' });
  assert.equal(other.cache, 'miss');
  // The request can turn it off.
  const optOut = await h.postChat(proxy, Object.assign({}, nearBody, { cache: { near: false } }));
  assert.equal(optOut.cache, 'miss');

  // A guard vetoes a near-identical question about another amount.
  const amount = await h.postChat(proxy, ask(`Please transfer $100 to my savings account ${tag}`));
  assert.equal(amount.cache, 'miss');
  const more = ask(`Please transfer $1000 to my savings account ${tag}`);
  assert.equal((await h.postChat(proxy, more)).cache, 'miss');
  const ex = await (await fetch(`${proxy.base}/reprox/v1/explain`, {
    method: 'POST', body: JSON.stringify(more),
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' } })).json();
  assert.equal(ex.near.mode, 'serve');
  const vetoed = ex.near.candidates.find((c) => c.key === amount.key);
  assert.ok(vetoed, JSON.stringify(ex.near));
  assert.equal(vetoed.vetoed_by, 'numbers');
  assert.equal(ex.near.match, null);

  // A purge takes the near-hits with the entries.
  const purge = await fetch(`${proxy.base}/reprox/v1/purge`, {
    method: 'POST', headers: { authorization: 'Bearer adm' }, body: '{"all": true}' });
  assert.equal(purge.status, 200);
  const afterPurge = await h.postChat(proxy, ask(`How do I reset the password for account ${tag}?`));
  assert.equal(afterPurge.cache, 'miss');
});

test('the in-memory index keeps cache.near_index_bytes: past it the oldest entry goes first', async (t) => {
  // About 2 KiB per entry (context, bands, text and its features): room for one.
  const { proxy } = await h.startStack(t, {
    config: { cache: { rule: [{ near: 'serve' }], near_index_bytes: '3KiB' } } });
  const tag = `${Date.now()}`;
  assert.equal((await h.postChat(proxy, ask(`How do I reset my password for account ${tag}?`))).cache, 'miss');
  assert.equal((await h.postChat(proxy, ask(`Where can I download my invoices for ${tag}?`))).cache, 'miss');
  // A near-hit adds nothing to the index; a miss would (so it goes last).
  const newer = await h.postChat(proxy, ask(`where can i download my invoices for ${tag}`));
  assert.equal(newer.cache, 'near-hit', 'the newest entry is still there');
  const older = await h.postChat(proxy, ask(`how do i reset my password for account ${tag}`));
  assert.equal(older.cache, 'miss', 'the first entry left the index');
});
