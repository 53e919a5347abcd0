#!/usr/bin/env node
// Synthetic but realistic chat trace for replaying against reprox.
// Node built-ins only; the same seed and parameters give the same trace.
//
//   node benchmarks/workload/trace.js [--requests 1500] [--seed 1]
//        [--zipf 1.0] [--questions 3000] [--tenants 4] [--faq-share 0.5]
//        [--stream-share 0.33] [--no-cache-share 0.03] [--abort-share 0.1]
//        [--max-tokens 24] [--active 6] [--out trace.jsonl]
//   Each flag also reads an environment variable: --zipf <- ZIPF, ...
//   (upper case, '-' as '_'). Without --out it writes to stdout.
//
// The trace is JSON lines: a header {"trace": {...parameters...},
// "tenants": [{token, system}]}, then one line per request, in dispatch order:
//   {"i", "kind": "faq"|"chat", "tenant", "text", "stream", "no_cache",
//    "abort", "max_tokens", and for "faq": "q" (question id, 0 = most
//    popular), for "chat": "conv", "turn" (1-based), "turns"}
//
// Two kinds of traffic, interleaved:
//   faq   one question after the tenant's system prompt. Questions come
//         from templates and word lists (a few thousand distinct ones); each
//         tenant draws them from a Zipf distribution (exponent --zipf) over
//         the same popularity ranking.
//   chat  conversations of 2 to 20 turns (most are short). A turn carries
//         only the new user message; the replayer re-sends the whole
//         conversation, with the answers reprox actually returned, as chat
//         clients do. User turns of 25 to 70 words, some with pasted log or
//         code lines, bring the history to about 2,000 tokens at turn 20.
// Tenants (bearer tokens) have skewed shares (0.4, 0.3, 0.2, 0.1, ...).
// A share of requests is streamed; a few carry Cache-Control: no-cache;
// some streams are abandoned after the first chunk (FAQ streams, and the
// last turn of a conversation, whose answer no later turn needs).
'use strict';
const fs = require('node:fs');

const DEFAULTS = {
  requests: 1500, seed: 1, zipf: 1.0, questions: 3000, tenants: 4,
  faq_share: 0.5, stream_share: 0.33, no_cache_share: 0.03, abort_share: 0.1,
  max_tokens: 24, active: 6, min_turns: 2, max_turns: 20,
};

// mulberry32: a small seeded generator, good enough for sampling.
function rng(seed) {
  let a = (Number(seed) >>> 0) ^ 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = (r, list) => list[Math.floor(r() * list.length)];
const int = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
function shuffle(r, list) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

// ---- FAQ questions -------------------------------------------------------

const ACTIONS = ['reset', 'change', 'cancel', 'update', 'transfer', 'delete', 'recover', 'export',
  'verify', 'renew', 'upgrade', 'downgrade', 'pause', 'share', 'link', 'unlink', 'close', 'reopen',
  'download', 'lock'];
const THINGS = ['password', 'account', 'subscription', 'order', 'invoice', 'billing address',
  'email address', 'phone number', 'payment method', 'profile picture', 'API key',
  'two-factor settings', 'data', 'team workspace', 'shipping address', 'gift card',
  'refund request', 'warranty', 'license', 'device'];
const PLACES = ['the mobile app', 'the website', 'another country', 'a shared computer', 'the desktop app'];
const WHENS = ['after the deadline', 'during a free trial', 'on a weekend', 'twice in one day',
  'before my billing date'];
const TEMPLATES = [
  (a, t) => `How do I ${a} my ${t}?`,
  (a, t) => `Why can't I ${a} my ${t}?`,
  (a, t) => `Is there a fee to ${a} my ${t}?`,
  (a, t) => `How long does it take to ${a} my ${t}?`,
  (a, t, p) => `Can I ${a} my ${t} from ${p}?`,
  (a, t, p, w) => `What happens if I ${a} my ${t} ${w}?`,
];

// `count` distinct questions in a seeded popularity order (index 0 is the
// most popular).
function faqQuestions(r, count) {
  const all = [];
  for (const tpl of TEMPLATES)
    for (const a of ACTIONS)
      for (const t of THINGS) {
        if (tpl.length <= 2) all.push(tpl(a, t));
        else if (tpl.length === 3) for (const p of PLACES) all.push(tpl(a, t, p));
        else for (const w of WHENS) all.push(tpl(a, t, null, w));
      }
  if (count > all.length) throw new Error(`--questions ${count}: at most ${all.length}`);
  return shuffle(r, all).slice(0, count);
}

// Zipf sampler over ranks 0..n-1 with P(rank k) proportional to 1/(k+1)^s.
function zipfSampler(n, s) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) { sum += 1 / Math.pow(k + 1, s); cdf[k] = sum; }
  return (r) => {
    const x = r() * sum;
    let lo = 0, hi = n - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cdf[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
  };
}

// ---- Tenants and conversations ------------------------------------------

const PRODUCTS = ['Acme Cloud', 'Globex Pay', 'Initech Desk', 'Umbrella Health', 'Hooli Mail',
  'Stark Retail', 'Wayne Logistics', 'Tyrell Labs'];

function tenantSystem(product) {
  return `You are the support assistant of ${product}. Answer questions from customers about ` +
    `their accounts, billing, orders and the ${product} apps. Be brief and friendly, and ` +
    'answer in the language of the question. Never ask for a full password or card number. ' +
    'When a request needs a human (refunds over 500 dollars, legal questions, account ' +
    'recovery without the registered email), say so and offer to open a ticket. Use short ' +
    'numbered steps for procedures, and name the menu items exactly as the app shows them.';
}

const LANGS = ['Go', 'Python', 'Rust', 'TypeScript', 'Java', 'C++', 'Kotlin', 'Ruby'];
const SYSTEMS = ['payment service', 'image resizer', 'search indexer', 'login gateway',
  'report generator', 'mobile backend', 'CSV importer', 'notification worker', 'billing cron job'];
const SYMPTOMS = ['times out under load', 'leaks memory after a few hours', 'returns stale data',
  'crashes on startup', 'drops about one request in fifty', 'gets slower every day',
  'deadlocks when two users save at once', 'answers 502 behind the load balancer'];
const FACTS = ['We deploy it on {n} containers behind nginx.', 'It talks to Postgres {v} and Redis.',
  'The problem started after the release on {d}.', 'Traffic is about {n}00 requests per second at peak.',
  'We already tried doubling the connection pool.', 'Restarting the pods helps for roughly {n} hours.',
  'The team suspects the retry logic, but nobody is sure.', 'It only happens in the {r} region.',
  'Our p99 latency went from {n}0 ms to over {n} seconds.', 'The logs show nothing unusual before the failure.'];
const ASKS = ['What would you check first?', 'Could you explain what this error means?',
  'Is there a safer way to write this?', 'How can I reproduce it locally?',
  'What metrics should I add to narrow it down?', 'Does that change your earlier suggestion?',
  'Can you rewrite the function with that fix?', 'What are the trade-offs of that approach?',
  'How would you test this?', 'Should I roll back the release instead?'];
const FOLLOWS = ['Thanks, that helped a bit.', 'I tried your suggestion.', 'Good point.',
  'That did not change anything.', 'Here is more context.', 'We looked into it further.',
  'The same thing happened again this morning.', 'Our lead disagrees with that idea.'];
const REGIONS = ['eu-west', 'us-east', 'ap-south', 'sa-east'];

function fill(r, s) {
  return s.replace(/\{n\}/g, () => String(int(r, 2, 9)))
    .replace(/\{v\}/g, () => String(int(r, 11, 16)))
    .replace(/\{d\}/g, () => `2026-${String(int(r, 1, 11)).padStart(2, '0')}-${String(int(r, 1, 28)).padStart(2, '0')}`)
    .replace(/\{r\}/g, () => pick(r, REGIONS));
}

function logLines(r, k) {
  const out = [];
  for (let i = 0; i < k; i++) {
    out.push(`2026-11-${String(int(r, 1, 28)).padStart(2, '0')}T${String(int(r, 0, 23)).padStart(2, '0')}:` +
      `${String(int(r, 0, 59)).padStart(2, '0')}:${String(int(r, 0, 59)).padStart(2, '0')}Z ` +
      `${pick(r, ['ERROR', 'WARN', 'ERROR', 'INFO'])} worker-${int(r, 1, 16)} ` +
      `${pick(r, ['timeout after', 'retrying in', 'slow query took', 'queue wait'])} ${int(r, 50, 9000)} ms ` +
      `on /api/v${int(r, 1, 3)}/${pick(r, ['orders', 'users', 'invoices', 'search', 'upload'])}`);
  }
  return out.join('\n');
}

// The user message of turn `turn` (1-based) of a conversation about `topic`.
function chatTurn(r, topic, turn) {
  const parts = [];
  if (turn === 1) parts.push(`I maintain a ${topic.lang} ${topic.system} that ${topic.symptom}.`);
  else parts.push(pick(r, FOLLOWS));
  const facts = int(r, 1, 3);
  for (let i = 0; i < facts; i++) parts.push(fill(r, pick(r, FACTS)));
  if (r() < 0.4) parts.push(`Here is what the log says:\n${logLines(r, int(r, 1, 3))}\n`);
  parts.push(pick(r, ASKS));
  return parts.join(' ');
}

// Conversation length: 2 to 20 turns, short ones more likely.
function turnCount(r, lo, hi) { return lo + Math.floor((hi - lo + 1) * Math.pow(r(), 1.6)); }

// ---- The trace -----------------------------------------------------------

function generate(params) {
  const p = Object.assign({}, DEFAULTS, params);
  const r = rng(p.seed);
  const questions = faqQuestions(rng(p.seed + 7919), p.questions);
  const zipf = zipfSampler(p.questions, p.zipf);
  const tenants = [];
  const weights = [];
  for (let t = 0; t < p.tenants; t++) {
    const product = PRODUCTS[t % PRODUCTS.length];
    tenants.push({ token: `tenant-${t + 1}-${product.toLowerCase().replace(/\s+/g, '-')}`, system: tenantSystem(product) });
    weights.push(Math.max(0.1, 0.4 - 0.1 * t));
  }
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const pickTenant = () => {
    let x = r() * weightSum;
    for (let t = 0; t < weights.length; t++) { x -= weights[t]; if (x < 0) return t; }
    return weights.length - 1;
  };

  const requests = [];
  const active = [];  // open conversations: {conv, tenant, turns, next, topic}
  let convCount = 0;
  const openConversation = () => {
    const c = { conv: convCount++, tenant: pickTenant(), turns: turnCount(r, p.min_turns, p.max_turns), next: 1,
                topic: { lang: pick(r, LANGS), system: pick(r, SYSTEMS), symptom: pick(r, SYMPTOMS) } };
    active.push(c);
    return c;
  };
  while (requests.length < p.requests) {
    const stream = r() < p.stream_share;
    const base = { i: requests.length, stream, no_cache: r() < p.no_cache_share, abort: false, max_tokens: p.max_tokens };
    if (r() < p.faq_share) {
      const q = zipf(r);
      base.abort = stream && r() < p.abort_share;
      requests.push(Object.assign(base, { kind: 'faq', tenant: pickTenant(), q, text: questions[q] }));
      continue;
    }
    while (active.length < p.active) openConversation();
    const k = Math.floor(r() * active.length);
    const c = active[k];
    const turn = c.next++;
    if (turn === c.turns) active.splice(k, 1);
    base.abort = stream && turn === c.turns && r() < p.abort_share;
    requests.push(Object.assign(base, { kind: 'chat', tenant: c.tenant, conv: c.conv, turn, turns: c.turns,
                                        text: chatTurn(r, c.topic, turn) }));
  }
  // Conversations cut by the request count end early; their `turns` says so.
  for (const c of active) for (const q of requests) if (q.kind === 'chat' && q.conv === c.conv) q.turns = c.next - 1;
  return { header: { trace: p, tenants }, requests };
}

function toJsonl(trace) {
  return [JSON.stringify(trace.header), ...trace.requests.map((q) => JSON.stringify(q))].join('\n') + '\n';
}

function readTrace(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { header: lines[0], requests: lines.slice(1) };
}

// --flag value, else the FLAG environment variable, else the default.
function cliParams(argv, env) {
  const out = {};
  for (const key of Object.keys(DEFAULTS)) {
    const flag = '--' + key.replace(/_/g, '-');
    const i = argv.indexOf(flag);
    const raw = i >= 0 ? argv[i + 1] : env[key.toUpperCase()];
    if (raw === undefined || raw === '') continue;
    const v = Number(raw);
    if (!Number.isFinite(v)) throw new Error(`${flag}: not a number: ${raw}`);
    out[key] = v;
  }
  return out;
}

module.exports = { generate, toJsonl, readTrace, cliParams, DEFAULTS };

if (require.main === module) {
  const argv = process.argv.slice(2);
  const trace = generate(cliParams(argv, process.env));
  const i = argv.indexOf('--out');
  if (i >= 0) fs.writeFileSync(argv[i + 1], toJsonl(trace));
  else process.stdout.write(toJsonl(trace));
}
