#!/usr/bin/env node
// The soak samples as an SVG chart, and the CSV reader and least-squares fit
// the soak script shares with it. Node built-ins only.
//
//   node benchmarks/soak/plot.js SAMPLES.csv [OUT.svg]
//
// Five panels over one time axis (minutes since the warm-up began): RSS,
// open file descriptors, threads, memory-tier bytes and KV bytes. The load
// phase is white, warm-up and idle are grey; the Redis outage (from the rows
// noted "redis killed" to "redis restarted") is a red band across every
// panel; the budgets are dashed lines; the RSS panel carries the
// least-squares line over the last half of the load phase, with its slope.
'use strict';
const fs = require('node:fs');

const COLUMNS = ['t_s', 'phase', 'note', 'rss_kib', 'fds', 'threads', 'cache_memory_bytes', 'cache_memory_entries',
                 'cache_budget_bytes', 'kv_bytes', 'kv_budget_bytes', 'requests', 'errors', 'planned_429',
                 'redis', 'healthz'];
const NUMERIC = new Set(['t_s', 'rss_kib', 'fds', 'threads', 'cache_memory_bytes', 'cache_memory_entries',
                         'cache_budget_bytes', 'kv_bytes', 'kv_budget_bytes', 'requests', 'errors', 'planned_429']);

function toCsv(rows) {
  const cell = (v) => (v === null || v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  return `${COLUMNS.join(',')}\n${rows.map((r) => COLUMNS.map((c) => cell(r[c])).join(',')).join('\n')}\n`;
}

// Rows of a CSV written by toCsv (quoted cells allowed).
function readCsv(text) {
  const lines = text.split('\n').filter((l) => l.length > 0);
  const split = (line) => {
    const out = [];
    let cur = '';
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (quoted) {
        if (ch === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (ch === '"') quoted = false; else cur += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === ',') { out.push(cur); cur = ''; } else cur += ch;
    }
    out.push(cur);
    return out;
  };
  const head = split(lines[0]);
  return lines.slice(1).map((line) => {
    const cells = split(line);
    const row = {};
    head.forEach((h, i) => {
      const v = cells[i] === undefined ? '' : cells[i];
      row[h] = NUMERIC.has(h) ? (v === '' ? null : Number(v)) : v;
    });
    return row;
  });
}

// Least-squares line through (x, y): {slope, intercept, n}.
function leastSquares(points) {
  const n = points.length;
  if (n < 2) return { slope: NaN, intercept: NaN, n };
  let sx = 0; let sy = 0;
  for (const [x, y] of points) { sx += x; sy += y; }
  const mx = sx / n; const my = sy / n;
  let sxx = 0; let sxy = 0;
  for (const [x, y] of points) { sxx += (x - mx) * (x - mx); sxy += (x - mx) * (y - my); }
  const slope = sxx > 0 ? sxy / sxx : NaN;
  return { slope, intercept: my - slope * mx, n };
}

// The load phase's time span and the samples of its last half.
function loadSpan(rows) {
  const load = rows.filter((r) => r.phase === 'load');
  if (load.length === 0) return null;
  const start = load[0].t_s;
  const end = load[load.length - 1].t_s;
  const mid = start + (end - start) / 2;
  return { start, end, mid, lastHalf: load.filter((r) => r.t_s >= mid) };
}

// RSS slope over the last half of the load phase, in MiB per 10 minutes.
function rssSlope(rows) {
  const span = loadSpan(rows);
  if (!span) return { slopeMiBPer10Min: NaN, n: 0 };
  const fit = leastSquares(span.lastHalf.map((r) => [r.t_s, r.rss_kib / 1024]));
  return { slopeMiBPer10Min: fit.slope * 600, fit, from: span.mid, to: span.end, n: fit.n };
}

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function niceStep(range, ticks) {
  const raw = range / ticks;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function fmt(v) {
  if (Math.abs(v) >= 100 || Number.isInteger(v)) return String(Math.round(v * 100) / 100);
  return v.toFixed(Math.abs(v) >= 10 ? 1 : 2);
}

// rows: from readCsv. title: one line over the chart.
function renderSvg(rows, { title = 'reprox soak' } = {}) {
  const W = 960; const left = 78; const right = 20; const top = 46; const panelH = 118; const gap = 30;
  const panels = [
    // The RSS axis fits the samples from the end of the warm-up on; the
    // warm-up's climb is clipped, so that a slow growth stays visible.
    { key: 'rss', label: 'RSS (MiB; axis fitted from the end of the warm-up on)', value: (r) => r.rss_kib / 1024,
      color: '#1f77b4', range: (r) => r.phase !== 'warmup' || r.note === 'baseline' },
    { key: 'fds', label: 'open file descriptors', value: (r) => r.fds, color: '#2ca02c', step: true },
    { key: 'threads', label: 'threads', value: (r) => r.threads, color: '#9467bd', step: true },
    { key: 'cache', label: 'memory tier (MiB)', value: (r) => r.cache_memory_bytes / 1048576, color: '#ff7f0e',
      budget: (r) => r.cache_budget_bytes / 1048576 },
    { key: 'kv', label: 'KV kept for reuse (MiB)', value: (r) => r.kv_bytes / 1048576, color: '#8c564b',
      budget: (r) => r.kv_budget_bytes / 1048576 },
  ];
  const H = top + panels.length * (panelH + gap) + 40;
  const t0 = 0;
  const t1 = Math.max(1, ...rows.map((r) => r.t_s));
  const X = (t) => left + ((t - t0) / (t1 - t0)) * (W - left - right);
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
           'font-family="sans-serif" font-size="11">');
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="${left}" y="18" font-size="14" font-weight="bold">${esc(title)}</text>`);

  // Phase and outage spans, in seconds.
  const spans = [];
  let cur = null;
  for (const r of rows) {
    if (!cur || cur.phase !== r.phase) { cur = { phase: r.phase, from: r.t_s, to: r.t_s }; spans.push(cur); } else cur.to = r.t_s;
  }
  for (let i = 0; i + 1 < spans.length; i++) spans[i].to = spans[i + 1].from;
  const outages = [];
  let down = null;
  for (const r of rows) {
    if (r.note === 'redis killed') down = r.t_s;
    if (r.note === 'redis restarted' && down !== null) { outages.push([down, r.t_s]); down = null; }
  }
  if (down !== null) outages.push([down, t1]);
  const legendY = 34;
  out.push(`<rect x="${left}" y="${legendY - 9}" width="12" height="10" fill="#d62728" fill-opacity="0.18"/>` +
           `<text x="${left + 16}" y="${legendY}">Redis down (killed, restarted on the same port)</text>`);
  out.push(`<rect x="${left + 290}" y="${legendY - 9}" width="12" height="10" fill="#000" fill-opacity="0.06"/>` +
           `<text x="${left + 306}" y="${legendY}">warm-up / idle (no load)</text>`);
  out.push(`<line x1="${left + 460}" y1="${legendY - 4}" x2="${left + 480}" y2="${legendY - 4}" stroke="#444" stroke-dasharray="5,3"/>` +
           `<text x="${left + 484}" y="${legendY}">budget</text>`);

  const rss = rssSlope(rows);
  panels.forEach((p, i) => {
    const y0 = top + i * (panelH + gap) + 14;
    const y1 = y0 + panelH;
    const vals = rows.map((r) => [r.t_s, p.value(r)]).filter(([, v]) => Number.isFinite(v));
    const budgets = p.budget ? rows.map(p.budget).filter(Number.isFinite) : [];
    const ranged = p.range && rows.some(p.range) ? rows.filter(p.range).map(p.value).filter(Number.isFinite)
      : vals.map(([, v]) => v);
    let lo = Math.min(...ranged, ...budgets);
    let hi = Math.max(...ranged, ...budgets);
    if (p.key === 'cache' || p.key === 'kv') lo = 0;
    if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
    if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
    const pad = (hi - lo) * 0.08;
    if (p.key !== 'cache' && p.key !== 'kv') lo -= pad;
    hi += pad;
    const Y = (v) => y1 - ((v - lo) / (hi - lo)) * panelH;
    out.push(`<text x="${left}" y="${y0 - 4}" font-weight="bold">${esc(p.label)}</text>`);
    for (const s of spans) {
      if (s.phase === 'load') continue;
      out.push(`<rect x="${X(s.from).toFixed(1)}" y="${y0}" width="${Math.max(0, X(s.to) - X(s.from)).toFixed(1)}" ` +
               `height="${panelH}" fill="#000" fill-opacity="0.06"/>`);
    }
    for (const [a, b] of outages) {
      out.push(`<rect x="${X(a).toFixed(1)}" y="${y0}" width="${Math.max(1, X(b) - X(a)).toFixed(1)}" height="${panelH}" ` +
               'fill="#d62728" fill-opacity="0.18"/>');
    }
    out.push(`<rect x="${left}" y="${y0}" width="${W - left - right}" height="${panelH}" fill="none" stroke="#999"/>`);
    const step = niceStep(hi - lo, 4);
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) {
      if (p.step && !Number.isInteger(Math.round(v * 1e6) / 1e6)) continue;
      const y = Y(v).toFixed(1);
      out.push(`<line x1="${left}" y1="${y}" x2="${W - right}" y2="${y}" stroke="#eee"/>` +
               `<text x="${left - 6}" y="${(Number(y) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`);
    }
    if (p.budget && budgets.length) {
      const b = budgets[budgets.length - 1];
      out.push(`<line x1="${left}" y1="${Y(b).toFixed(1)}" x2="${W - right}" y2="${Y(b).toFixed(1)}" stroke="#444" ` +
               `stroke-dasharray="5,3"/><text x="${W - right - 4}" y="${(Y(b) - 4).toFixed(1)}" text-anchor="end">` +
               `budget ${fmt(b)} MiB</text>`);
    }
    let d = '';
    vals.forEach(([t, v], k) => {
      const x = X(t).toFixed(1); const y = Y(v).toFixed(1);
      if (k === 0) d += `M${x},${y}`;
      else if (p.step) d += `H${x}V${y}`;
      else d += `L${x},${y}`;
    });
    out.push(`<clipPath id="clip-${p.key}"><rect x="${left}" y="${y0}" width="${W - left - right}" height="${panelH}"/></clipPath>`);
    out.push(`<path d="${d}" fill="none" stroke="${p.color}" stroke-width="1.6" clip-path="url(#clip-${p.key})"/>`);
    if (p.key === 'rss' && rss.fit && Number.isFinite(rss.fit.slope)) {
      const f = (t) => rss.fit.intercept + rss.fit.slope * t;
      out.push(`<line x1="${X(rss.from).toFixed(1)}" y1="${Y(f(rss.from)).toFixed(1)}" x2="${X(rss.to).toFixed(1)}" ` +
               `y2="${Y(f(rss.to)).toFixed(1)}" stroke="#d62728" stroke-width="2" stroke-dasharray="6,3"/>`);
      out.push(`<text x="${W - right - 4}" y="${y1 - 6}" text-anchor="end" fill="#d62728">least squares over the last ` +
               `half of the load: ${rss.slopeMiBPer10Min.toFixed(3)} MiB per 10 min</text>`);
    }
  });
  // Time axis under the last panel.
  const yAxis = top + panels.length * (panelH + gap) - gap + 14;
  const tStep = niceStep((t1 - t0) / 60, 10) * 60;
  for (let t = 0; t <= t1 + 1e-9; t += tStep) {
    out.push(`<line x1="${X(t).toFixed(1)}" y1="${yAxis}" x2="${X(t).toFixed(1)}" y2="${yAxis + 4}" stroke="#999"/>` +
             `<text x="${X(t).toFixed(1)}" y="${yAxis + 16}" text-anchor="middle">${fmt(t / 60)}</text>`);
  }
  out.push(`<text x="${(left + W - right) / 2}" y="${yAxis + 32}" text-anchor="middle">minutes since the warm-up began</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { COLUMNS, toCsv, readCsv, leastSquares, loadSpan, rssSlope, renderSvg };

if (require.main === module) {
  const [csv, svg] = process.argv.slice(2);
  if (!csv) {
    console.error('usage: plot.js SAMPLES.csv [OUT.svg]');
    process.exit(2);
  }
  const rows = readCsv(fs.readFileSync(csv, 'utf8'));
  const target = svg || csv.replace(/\.csv$/, '') + '.svg';
  fs.writeFileSync(target, renderSvg(rows, { title: `reprox soak: ${csv.split('/').pop().replace(/\.csv$/, '')}` }));
  console.log(target);
}
