#!/usr/bin/env node
// Turns the replay records of run_workload.sh into a Markdown report (one
// table per run, a summary table and the playbook's figures beside ours)
// and one SVG chart per run (latency and hit rate over time). Node
// built-ins only; the SVG is written by hand.
//
//   node benchmarks/workload/report.js --meta META.json --md OUT.md
//        --svg-prefix DIR/NAME RUN.json...
//
// META.json: {date, host, cpu, cpus, load, commit, command, shared, runs:
// {NAME: {label, command, chart}}}.
// The runs come in order; the one named "e" (engine, no cache, no KV reuse)
// is the baseline for engine CPU time, and answers are compared against it
// (engine runs) or against run "c" (upstream runs).
// Prints the summary table on stdout.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const meta = JSON.parse(fs.readFileSync(arg('--meta'), 'utf8'));
const mdFile = arg('--md');
const svgPrefix = arg('--svg-prefix');
const runFiles = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(i > 0 && all[i - 1].startsWith('--')));
const runs = runFiles.map((f) => {
  const run = JSON.parse(fs.readFileSync(f, 'utf8'));
  // label, command, chart: from META.json's runs.NAME.
  return Object.assign(run, { upstream_run: Boolean(run.before.upstream) }, (meta.runs || {})[run.name] || {});
});

// ---- Statistics ----------------------------------------------------------

function percentile(values, p) {
  if (!values.length) return null;
  const v = values.slice().sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))];
}
const sum = (list, f) => list.reduce((s, x) => s + (f(x) || 0), 0);
const ratio = (a, b) => (b > 0 ? a / b : null);
const metric = (run, name) => (run.after.metrics[name] || 0) - (run.before.metrics[name] || 0);

function stats(run) {
  const all = run.samples.filter((s) => !s.skipped);
  const ok = all.filter((s) => s.status === 200);
  const by = (list, c) => list.filter((s) => s.cache === c);
  const done = ok.filter((s) => !s.aborted && !s.error);
  const part = (kind) => ok.filter((s) => s.kind === kind);
  // Prompt tokens of the answers that were generated for this request.
  const kvPart = (list) => {
    const gen = list.filter((s) => s.cache === 'miss' && s.prompt_tokens);
    return { prompt: sum(gen, (s) => s.prompt_tokens), cached: sum(gen, (s) => s.cached_tokens), n: gen.length };
  };
  const chatMiss = ok.filter((s) => s.kind === 'chat');
  const longTurns = chatMiss.filter((s) => s.prompt_tokens >= 1000);
  const latencies = (c) => by(done, c).map((s) => s.latency);
  const ttft = (c) => ok.filter((s) => s.stream && s.ttft !== null && (!c || s.cache === c)).map((s) => s.ttft);
  const engineRows = metric(run, 'reprox_engine_batch_rows_total');
  const enginePasses = metric(run, 'reprox_engine_passes_total');
  const up = run.before.upstream && run.after.upstream ? run.after.upstream.total - run.before.upstream.total : null;
  return {
    requests: run.samples.length, sent: all.length, ok: ok.length,
    skipped: run.samples.length - all.length,
    errors: all.filter((s) => s.status !== 200 || s.error).length,
    aborted: ok.filter((s) => s.aborted).length,
    counts: ['hit', 'miss', 'coalesced', 'bypass', 'near-hit'].map((c) => [c, by(ok, c).length]),
    tiers: { memory: ok.filter((s) => s.tier === 'memory').length, redis: ok.filter((s) => s.tier === 'redis').length },
    hitRate: ratio(by(ok, 'hit').length, ok.length),
    faqHitRate: ratio(by(part('faq'), 'hit').length, part('faq').length),
    chatHitRate: ratio(by(part('chat'), 'hit').length, part('chat').length),
    faqN: part('faq').length, chatN: part('chat').length,
    kvFaq: kvPart(part('faq')), kvChat: kvPart(chatMiss), kvLong: kvPart(longTurns),
    kvMetrics: { prompt: metric(run, 'reprox_prompt_tokens_total'), reused: metric(run, 'reprox_kv_reused_tokens_total') },
    maxPrompt: Math.max(0, ...ok.map((s) => s.prompt_tokens || 0)),
    hit: { p50: percentile(latencies('hit'), 50), p99: percentile(latencies('hit'), 99), n: latencies('hit').length },
    miss: { p50: percentile(latencies('miss'), 50), p99: percentile(latencies('miss'), 99), n: latencies('miss').length },
    ttft: { p50: percentile(ttft(), 50), p99: percentile(ttft(), 99), n: ttft().length },
    ttftHit: { p50: percentile(ttft('hit'), 50), p99: percentile(ttft('hit'), 99), n: ttft('hit').length },
    ttftMiss: { p50: percentile(ttft('miss'), 50), p99: percentile(ttft('miss'), 99), n: ttft('miss').length },
    missSeconds: sum(by(done, 'miss'), (s) => s.latency) / 1000,
    cpu: run.after.cpu_s !== null && run.before.cpu_s !== null ? run.after.cpu_s - run.before.cpu_s : null,
    generated: metric(run, 'reprox_generated_tokens_total'),
    passes: enginePasses, meanBatch: ratio(engineRows, enginePasses),
    upstreamCalls: up,
    wall: run.wall_s, truncated: run.truncated,
  };
}

const S = runs.map(stats);
const byName = Object.fromEntries(runs.map((r, k) => [r.name, k]));
const baseline = byName.e !== undefined ? S[byName.e] : null;

// Answers that match the reference run's, request by request.
function sameAnswers(run) {
  const refName = run.upstream_run ? 'c' : 'e';
  if (run.name === refName || byName[refName] === undefined) return null;
  const ref = new Map(runs[byName[refName]].samples.filter((s) => s.hash).map((s) => [s.i, s.hash]));
  let same = 0, compared = 0;
  for (const s of run.samples) if (s.hash && ref.has(s.i)) { compared++; if (ref.get(s.i) === s.hash) same++; }
  return { same, compared, ref: refName };
}

// ---- Formatting ----------------------------------------------------------

const pct = (x) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(1)}%`);
const ms = (x) => (x === null || x === undefined ? '–' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
const pair = (o) => `${ms(o.p50)} / ${ms(o.p99)}`;
const kvFrac = (k) => (k.prompt ? `${pct(k.cached / k.prompt)} (${k.cached.toLocaleString('en')} of ${k.prompt.toLocaleString('en')})` : '–');
const kvShort = (k) => (k.prompt ? pct(k.cached / k.prompt) : '–');

function workSaved(run, s) {
  if (run.upstream_run) {
    if (s.upstreamCalls === null) return '–';
    return `${s.upstreamCalls} upstream calls for ${s.sent} requests (${pct(1 - s.upstreamCalls / s.sent)} saved)`;
  }
  if (s.cpu === null) return '–';
  if (run.name === 'e') return `CPU ${s.cpu.toFixed(1)} s (baseline)`;
  if (!baseline || baseline.cpu === null) return `CPU ${s.cpu.toFixed(1)} s`;
  return `CPU ${s.cpu.toFixed(1)} s (${pct(1 - s.cpu / baseline.cpu)} saved)`;
}

function runTable(run, s) {
  const same = sameAnswers(run);
  const rows = [
    ['requests', `${s.requests}${s.truncated ? ' (cut by the time limit)' : ''}; ${s.ok} answered 200, ${s.errors} errors, ${s.aborted} abandoned streams, ${s.skipped} skipped`],
    ['x-reprox-cache', s.counts.filter(([, n]) => n).map(([c, n]) => `${c} ${n}`).join(', ') +
      (s.tiers.memory + s.tiers.redis ? `; hits by tier: memory ${s.tiers.memory}, redis ${s.tiers.redis}` : '')],
    ['hit rate: all / FAQ / multi-turn', `${pct(s.hitRate)} / ${pct(s.faqHitRate)} (${s.faqN}) / ${pct(s.chatHitRate)} (${s.chatN})`],
    ['KV reused, multi-turn misses', kvFrac(s.kvChat)],
    ['KV reused, turns of 1,000+ prompt tokens', kvFrac(s.kvLong)],
    ['KV reused, FAQ misses (system prompt)', kvFrac(s.kvFaq)],
    ['KV reused, /metrics (whole run)', s.kvMetrics.prompt ? `${pct(s.kvMetrics.reused / s.kvMetrics.prompt)} (${s.kvMetrics.reused.toLocaleString('en')} of ${s.kvMetrics.prompt.toLocaleString('en')})` : '–'],
    ['longest prompt', `${s.maxPrompt} tokens`],
    ['hit latency p50 / p99 (ms)', `${pair(s.hit)} (${s.hit.n})`],
    ['miss latency p50 / p99 (ms)', `${pair(s.miss)} (${s.miss.n})`],
    ['TTFT p50 / p99 (ms), streams: all', `${pair(s.ttft)} (${s.ttft.n})`],
    ['TTFT p50 / p99 (ms), streamed hits; misses', `${pair(s.ttftHit)} (${s.ttftHit.n}); ${pair(s.ttftMiss)} (${s.ttftMiss.n})`],
    ['work', workSaved(run, s)],
    ['sum of miss latencies', `${s.missSeconds.toFixed(1)} s`],
  ];
  if (!run.upstream_run) rows.push(['engine', `${s.passes} passes, mean batch ${s.meanBatch === null ? '–' : s.meanBatch.toFixed(2)}, ${s.generated.toLocaleString('en')} tokens generated`]);
  if (run.upstream_run && s.upstreamCalls !== null) {
    const misses = s.counts.find(([c]) => c === 'miss')[1];
    rows.push(['upstream calls / misses', `${s.upstreamCalls} / ${misses}`]);
  }
  if (same) rows.push([`answers equal to run (${same.ref})`, `${same.same} of ${same.compared} compared`]);
  rows.push(['wall time', `${s.wall.toFixed(1)} s`]);
  return ['| measure | value |', '| --- | --- |', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

function summaryTable() {
  const head = '| run | requests | hit rate (FAQ) | hit p50 / p99 ms | miss p50 / p99 ms | TTFT p50 / p99 ms | KV reused, multi-turn | work | wall s |';
  const rows = runs.map((run, k) => {
    const s = S[k];
    return `| (${run.name}) ${run.label} | ${s.sent}${s.truncated ? '*' : ''} | ${pct(s.hitRate)} (${pct(s.faqHitRate)}) | ${pair(s.hit)} | ${pair(s.miss)} | ` +
      `${pair(s.ttft)} | ${kvShort(s.kvChat)} | ${workSaved(run, s)} | ${s.wall.toFixed(1)} |`;
  });
  return [head, '| --- | --- | --- | --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}

function playbookTable() {
  const ref = byName.a !== undefined ? byName.a : 0;  // the engine with the memory tier, else the first run
  const a = S[ref], an = runs[ref].name;
  const hitP99 = runs.map((r, k) => `${ms(S[k].hit.p99)} ms (${r.name})`).filter((x) => !x.startsWith('–')).join(', ');
  return [
    '| figure | playbook | ours |',
    '| --- | --- | --- |',
    `| hit rate on FAQ-like traffic | 30–50% | ${pct(a.faqHitRate)} on the FAQ part of run (${an}) (${a.faqN} requests; ${pct(a.hitRate)} over the whole trace) |`,
    `| cache query (hit) latency | under 10 ms | hit p99 ${hitP99}; p50 ${ms(a.hit.p50)} ms in (${an}) |`,
    `| prompt compute saved on long conversations by KV reuse | over 70% | ${kvShort(a.kvChat)} of the prompt tokens of multi-turn misses in (${an}), ${kvShort(a.kvLong)} on turns of 1,000+ tokens |`,
  ].join('\n');
}

// ---- SVG -----------------------------------------------------------------

function esc(t) { return String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }

function chart(run, s) {
  const W = 840, H = 520, L = 64, R = 170, T = 40;
  const plotW = W - L - R;
  const top = { y: T, h: 270 }, bot = { y: T + 270 + 50, h: 110 };
  const samples = run.samples.filter((x) => !x.skipped && x.status === 200 && x.end !== undefined);
  const tEnd = Math.max(1, ...samples.map((x) => x.end)) / 1000;
  const buckets = 24;
  const bw = tEnd / buckets;
  const groups = Array.from({ length: buckets }, () => []);
  for (const x of samples) groups[Math.min(buckets - 1, Math.floor(x.end / 1000 / bw))].push(x);
  const X = (t) => L + (t / tEnd) * plotW;
  const lat = samples.filter((x) => x.latency !== null).map((x) => x.latency);
  const yMin = 0.1, yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(10, ...lat))));
  const Y = (v) => top.y + top.h - ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * top.h;
  const P = (f) => bot.y + bot.h - f * bot.h;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="${L}" y="22" font-size="14" font-weight="bold">${esc(`reprox workload replay: (${run.name}) ${run.label}`)}</text>`);
  out.push(`<text x="${L}" y="${T - 4}" fill="#555">${esc(`${meta.date}, ${meta.cpu}, ${s.sent} requests, concurrency ${run.concurrency}; latency per ${bw.toFixed(1)} s window`)}</text>`);
  // Latency panel: grid, then p50 and p99 lines of hits and misses.
  for (let e = Math.log10(yMin); e <= Math.log10(yMax) + 1e-9; e++) {
    const v = Math.pow(10, e), y = Y(v).toFixed(1);
    out.push(`<line x1="${L}" x2="${L + plotW}" y1="${y}" y2="${y}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${L - 6}" y="${(+y + 4).toFixed(1)}" text-anchor="end">${v >= 1000 ? v / 1000 + ' s' : v + ' ms'}</text>`);
  }
  const line = (pts, color, dash) => {
    const d = pts.map(([t, v], k) => `${k ? 'L' : 'M'}${X(t).toFixed(1)} ${v.toFixed(1)}`).join('');
    return d ? `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.6"${dash ? ` stroke-dasharray="${dash}"` : ''}/>` : '';
  };
  const series = [
    ['hit', 50, '#1b7f3b', ''], ['hit', 99, '#1b7f3b', '4 3'],
    ['miss', 50, '#c0392b', ''], ['miss', 99, '#c0392b', '4 3'],
  ];
  for (const [c, p, color, dash] of series) {
    const pts = [];
    groups.forEach((g, k) => {
      const v = g.filter((x) => x.cache === c && x.latency !== null).map((x) => x.latency);
      if (v.length >= 3) pts.push([(k + 0.5) * bw, Y(percentile(v, p))]);
    });
    out.push(line(pts, color, dash));
  }
  out.push(`<rect x="${L}" y="${top.y}" width="${plotW}" height="${top.h}" fill="none" stroke="#999"/>`);
  out.push(`<text transform="translate(16 ${top.y + top.h / 2}) rotate(-90)" text-anchor="middle">latency (log)</text>`);
  // Hit-rate panel: per window, and cumulative.
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<line x1="${L}" x2="${L + plotW}" y1="${P(f).toFixed(1)}" y2="${P(f).toFixed(1)}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${L - 6}" y="${(P(f) + 4).toFixed(1)}" text-anchor="end">${f * 100}%</text>`);
  }
  const win = [], cum = [], faqCum = [];
  let h = 0, n = 0, fh = 0, fn = 0;
  groups.forEach((g, k) => {
    const faq = g.filter((x) => x.kind === 'faq');
    h += g.filter((x) => x.cache === 'hit').length; n += g.length;
    fh += faq.filter((x) => x.cache === 'hit').length; fn += faq.length;
    if (g.length) win.push([(k + 0.5) * bw, P(g.filter((x) => x.cache === 'hit').length / g.length)]);
    if (n) cum.push([(k + 1) * bw, P(h / n)]);
    if (fn) faqCum.push([(k + 1) * bw, P(fh / fn)]);
  });
  out.push(line(win, '#2c6fbb', ''));
  out.push(line(cum, '#555', '4 3'));
  out.push(line(faqCum, '#8e44ad', '4 3'));
  out.push(`<rect x="${L}" y="${bot.y}" width="${plotW}" height="${bot.h}" fill="none" stroke="#999"/>`);
  out.push(`<text transform="translate(16 ${bot.y + bot.h / 2}) rotate(-90)" text-anchor="middle">hit rate</text>`);
  for (let k = 0; k <= 5; k++) {
    const t = (tEnd * k) / 5;
    out.push(`<text x="${X(t).toFixed(1)}" y="${bot.y + bot.h + 15}" text-anchor="middle">${t.toFixed(tEnd < 20 ? 1 : 0)} s</text>`);
  }
  out.push(`<text x="${L + plotW / 2}" y="${bot.y + bot.h + 32}" text-anchor="middle">time since the replay began (answer completed)</text>`);
  // Legend.
  const legend = [['hit p50', '#1b7f3b', ''], ['hit p99', '#1b7f3b', '4 3'], ['miss p50', '#c0392b', ''],
    ['miss p99', '#c0392b', '4 3'], ['', null], ['hit rate, window', '#2c6fbb', ''], ['hit rate, cumulative', '#555', '4 3'],
    ['FAQ hit rate, cumulative', '#8e44ad', '4 3']];
  legend.forEach(([label, color, dash], k) => {
    if (!color) return;
    const y = top.y + 12 + k * 18, x = L + plotW + 12;
    out.push(`<line x1="${x}" x2="${x + 22}" y1="${y}" y2="${y}" stroke="${color}" stroke-width="1.6"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
    out.push(`<text x="${x + 28}" y="${y + 4}">${label}</text>`);
  });
  out.push('</svg>');
  return out.filter(Boolean).join('\n') + '\n';
}

// ---- Output --------------------------------------------------------------

const t = runs[0].trace;
const charts = [];
if (svgPrefix) {
  runs.forEach((run, k) => {
    if (!run.chart) return;
    const file = `${svgPrefix}-${run.name}.svg`;
    fs.writeFileSync(file, chart(run, S[k]));
    charts.push([run, path.basename(file)]);
  });
}

const md = [];
md.push(`# Workload replay, ${meta.date}, ${meta.host}`);
md.push('');
md.push(`\`${meta.command}\`${meta.commit ? ` at ${meta.commit}` : ''}.`);
md.push('');
md.push(`Host: ${meta.cpu}, ${meta.cpus} CPUs${meta.shared ? `, shared with other builds (load average ${meta.load} at the start): read the ratios, not the absolute times` : ''}.`);
md.push('');
md.push(`Trace (\`benchmarks/workload/trace.js\`): ${t.requests} requests, seed ${t.seed}, ${t.tenants} tenants; ` +
  `${pct(t.faq_share)} FAQ questions drawn from a Zipf distribution (exponent ${t.zipf}) over ${t.questions} distinct questions; ` +
  `the rest turns of conversations of ${t.min_turns} to ${t.max_turns} turns (${t.active} open at a time), each turn re-sending the whole conversation with reprox's own answers; ` +
  `${pct(t.stream_share)} streamed, ${pct(t.no_cache_share)} with \`Cache-Control: no-cache\`, ${pct(t.abort_share)} of eligible streams abandoned after the first chunk; ` +
  `max_tokens ${t.max_tokens}. Replayed closed-loop by ${runs[0].concurrency} clients, at most ${runs[0].max_seconds} s per run.`);
md.push('');
md.push('## Summary');
md.push('');
md.push(summaryTable());
md.push('');
md.push('Hit rate: answers with `x-reprox-cache: hit` over all answered requests. Latencies are until the whole answer ' +
  '(abandoned streams left out); TTFT is until the first event of a stream. KV reused: ' +
  '`usage.prompt_tokens_details.cached_tokens` over `prompt_tokens`, summed over the multi-turn requests that were generated (misses). ' +
  'Work: for the engine, the CPU time of the reprox process during the replay (/proc, user + system; the engine is nearly all of it), ' +
  'against run (e), which generates every request with no cache and no KV reuse; for the upstream, the requests the upstream received.');
md.push('');
md.push('## The playbook\'s figures beside ours');
md.push('');
md.push(playbookTable());
md.push('');
runs.forEach((run, k) => {
  md.push(`## (${run.name}) ${run.label}`);
  md.push('');
  md.push(`\`${run.command}\``);
  md.push('');
  md.push(runTable(run, S[k]));
  md.push('');
  const c = charts.find(([r]) => r === run);
  if (c) { md.push(`![latency and hit rate over time, run (${run.name})](${c[1]})`); md.push(''); }
});
fs.writeFileSync(mdFile, md.join('\n'));
process.stdout.write(summaryTable() + '\n\n' + playbookTable() + '\n');
