// The Grafana dashboard (conf/grafana/reprox-dashboard.json) against a live
// reprox: every metric family a panel queries must be one that GET /metrics
// exports, with the type the query assumes (a histogram behind _bucket,
// counters under rate()/increase(), gauges not) and the labels and label
// values it filters on. Also the dashboard's shape: valid JSON, unique panel
// ids, a Prometheus datasource variable and an instance variable, and every
// panel with a datasource, a unit and at least one target.
//
// reprox runs in front of the scripted upstream with a real redis-server
// (--redis), --audit-every 1 and a one-audit fallback window, and answers a
// few chat requests first, so that the families that only appear with a
// first event (reprox_requests_total, reprox_repro_fallback_active) exist.
//
// Environment (tests/grafana/CMakeLists.txt): REPROX_BIN,
// REPROX_SCRIPTED_UPSTREAM, REDIS_SERVER, REDIS_CLI.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../e2e/harness.js');
const rh = require('../e2e/redis/redis_harness.js');

const DASHBOARD = path.join(h.repoRoot, 'conf/grafana/reprox-dashboard.json');
const PROMETHEUS_YML = path.join(h.repoRoot, 'conf/grafana/prometheus.yml');

// ---- The dashboard ---------------------------------------------------------

function loadDashboard() {
  return JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
}

// Every panel, rows included, and the panels inside collapsed rows.
function allPanels(dashboard) {
  const out = [];
  const walk = (list) => {
    for (const p of list || []) {
      out.push(p);
      if (Array.isArray(p.panels)) walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

const isRow = (p) => p.type === 'row';

// ---- A small PromQL reader -------------------------------------------------
// Enough of PromQL for dashboard expressions: selectors with matchers, range
// and subquery brackets, function calls, aggregations with by/without,
// binary operators and their on/ignoring/group_* modifiers, Grafana
// variables ($x, ${x}, [[x]]), strings, numbers and durations.

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk',
                              'quantile', 'count_values', 'group', 'limitk', 'limit_ratio']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring',
                          'group_left', 'group_right', 'atan2', 'inf', 'nan', 'start', 'end']);
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const RATE_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);

function tokenize(expr) {
  const tokens = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i];
    if (/\s/.test(c)) { ++i; continue; }
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      let value = '';
      while (j < expr.length && expr[j] !== c) {
        if (expr[j] === '\\' && c !== '`') { value += expr[j + 1]; j += 2; } else value += expr[j++];
      }
      if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
      tokens.push({ kind: 'string', value });
      i = j + 1;
      continue;
    }
    if (c === '$') {  // Grafana variable: $name or ${name...}
      const m = expr.slice(i).match(/^\$(\{[^}]*\}|[A-Za-z0-9_]+)/);
      if (!m) throw new Error(`bad variable in ${expr}`);
      tokens.push({ kind: 'variable', value: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === '[') {  // a range, a subquery, or a [[var]] variable: skipped whole
      let depth = 0;
      let j = i;
      for (; j < expr.length; ++j) {
        if (expr[j] === '[') ++depth;
        else if (expr[j] === ']' && --depth === 0) break;
      }
      if (j >= expr.length) throw new Error(`unbalanced [ in ${expr}`);
      tokens.push({ kind: 'range', value: expr.slice(i, j + 1) });
      i = j + 1;
      continue;
    }
    let m = expr.slice(i).match(/^[A-Za-z_:][A-Za-z0-9_:]*/);
    if (m) { tokens.push({ kind: 'ident', value: m[0] }); i += m[0].length; continue; }
    m = expr.slice(i).match(/^(0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?[a-z]*)/);
    if (m && m[0]) { tokens.push({ kind: 'number', value: m[0] }); i += m[0].length; continue; }
    m = expr.slice(i).match(/^(=~|!~|!=|==|>=|<=|[-+*/%^(){},=<>@])/);
    if (m) { tokens.push({ kind: 'punct', value: m[0] }); i += m[0].length; continue; }
    throw new Error(`cannot read ${JSON.stringify(expr.slice(i, i + 20))} in ${expr}`);
  }
  return tokens;
}

// Reads `{label op "value", ...}` from tokens[i] = '{'; returns [matchers, next index].
function readMatchers(tokens, i, expr) {
  const matchers = [];
  ++i;
  while (i < tokens.length && tokens[i].value !== '}') {
    const label = tokens[i];
    const op = tokens[i + 1];
    const value = tokens[i + 2];
    if (!label || label.kind !== 'ident' || !op || !['=', '!=', '=~', '!~'].includes(op.value) ||
        !value || value.kind !== 'string')
      throw new Error(`bad label matcher in ${expr}`);
    matchers.push({ label: label.value, op: op.value, value: value.value });
    i += 3;
    if (tokens[i] && tokens[i].value === ',') ++i;
  }
  if (i >= tokens.length) throw new Error(`unbalanced { in ${expr}`);
  return [matchers, i + 1];
}

// -> {selectors: [{name, matchers, within}], groupLabels: [label]}, where
// `within` is the innermost function whose argument the selector is.
function parsePromQL(expr) {
  const tokens = tokenize(expr);
  const selectors = [];
  const groupLabels = [];
  const calls = [];  // one entry per open '(' : the function name, or null
  for (let i = 0; i < tokens.length; ++i) {
    const t = tokens[i];
    const next = tokens[i + 1];
    if (t.kind === 'punct' && t.value === '(') { calls.push(null); continue; }
    if (t.kind === 'punct' && t.value === ')') {
      if (!calls.length) throw new Error(`unbalanced ) in ${expr}`);
      calls.pop();
      continue;
    }
    if (t.kind === 'punct' && t.value === '{') {  // a selector without a name: {__name__="..."}
      const [matchers, end] = readMatchers(tokens, i, expr);
      const name = matchers.find((m) => m.label === '__name__' && m.op === '=');
      if (!name) throw new Error(`a selector without a metric name in ${expr}`);
      selectors.push({ name: name.value, matchers: matchers.filter((m) => m !== name), within: calls.at(-1) });
      i = end - 1;
      continue;
    }
    if (t.kind !== 'ident') continue;
    if (LABEL_LIST_KEYWORDS.has(t.value)) {
      if (next && next.value === '(') {
        let j = i + 2;
        for (; j < tokens.length && tokens[j].value !== ')'; ++j)
          if (tokens[j].kind === 'ident') groupLabels.push(tokens[j].value);
        if (j >= tokens.length) throw new Error(`unbalanced ( after ${t.value} in ${expr}`);
        i = j;
      }
      continue;
    }
    if (next && next.kind === 'punct' && next.value === '(') {  // a function or an aggregation
      calls.push(t.value);
      ++i;
      continue;
    }
    if (AGGREGATIONS.has(t.value) || KEYWORDS.has(t.value)) continue;
    let matchers = [];
    if (next && next.kind === 'punct' && next.value === '{') {
      let end;
      [matchers, end] = readMatchers(tokens, i + 1, expr);
      i = end - 1;
    }
    selectors.push({ name: t.value, matchers, within: calls.at(-1) });
  }
  if (calls.length) throw new Error(`unbalanced ( in ${expr}`);
  return { selectors, groupLabels };
}

// ---- The exposition --------------------------------------------------------

// -> Map family -> {type, series: [{sample, labels}]}; a histogram's series
// are its _bucket, _sum and _count samples.
function parseExposition(text) {
  const families = new Map();
  const samples = [];
  for (const line of text.split('\n')) {
    const type = line.match(/^# TYPE (\S+) (\S+)/);
    if (type) { families.set(type[1], { type: type[2], series: [] }); continue; }
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+\S+/);
    if (!m) throw new Error(`unreadable /metrics line: ${line}`);
    const labels = {};
    for (const l of (m[3] || '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ sample: m[1], labels });
  }
  for (const s of samples) {
    let family = families.get(s.sample);
    if (!family) {
      const base = s.sample.replace(/_(bucket|sum|count)$/, '');
      family = families.get(base);
    }
    if (family) family.series.push(s);
  }
  return families;
}

// The family a queried name belongs to: itself, or for NAME_bucket,
// NAME_sum, NAME_count the histogram (or summary) NAME.
function resolve(families, name) {
  if (families.has(name)) return { family: name, suffix: '' };
  const m = name.match(/^(.*)_(bucket|sum|count)$/);
  if (m && families.has(m[1])) return { family: m[1], suffix: m[2] };
  return null;
}

// ---- Tests -----------------------------------------------------------------

test('the dashboard: valid JSON, variables, unique panel ids, datasource, unit and targets on every panel', () => {
  const d = loadDashboard();
  assert.equal(typeof d.title, 'string');
  assert.equal(typeof d.uid, 'string');
  assert.ok(Number.isInteger(d.schemaVersion) && d.schemaVersion >= 36, `schemaVersion ${d.schemaVersion}`);
  const vars = (d.templating && d.templating.list) || [];
  const ds = vars.find((v) => v.name === 'datasource');
  assert.ok(ds, 'a ${datasource} variable');
  assert.equal(ds.type, 'datasource');
  assert.equal(ds.query, 'prometheus');
  const instance = vars.find((v) => v.name === 'instance');
  assert.ok(instance, 'an $instance variable');
  assert.equal(instance.type, 'query');
  assert.equal(instance.datasource.uid, '${datasource}');
  const q = typeof instance.query === 'string' ? instance.query : instance.query.query;
  assert.match(q, /^label_values\(\s*reprox_[a-z_]+\s*,\s*instance\s*\)$/);

  const panels = allPanels(d);
  assert.ok(panels.filter((p) => !isRow(p)).length >= 20, 'the dashboard has its panels');
  const ids = panels.map((p) => p.id);
  assert.ok(ids.every(Number.isInteger), 'every panel has an integer id');
  assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'duplicate panel ids');
  for (const p of panels) {
    const where = `panel ${p.id} "${p.title}"`;
    assert.ok(p.title, `${where}: a title`);
    assert.ok(p.gridPos && p.gridPos.x + p.gridPos.w <= 24 && p.gridPos.w > 0 && p.gridPos.h > 0, `${where}: gridPos`);
    if (isRow(p)) continue;
    assert.ok(['timeseries', 'stat', 'gauge', 'bargauge', 'table', 'heatmap'].includes(p.type), `${where}: type ${p.type}`);
    assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, `${where}: datasource`);
    assert.ok(p.fieldConfig && p.fieldConfig.defaults && p.fieldConfig.defaults.unit, `${where}: a unit`);
    assert.ok(Array.isArray(p.targets) && p.targets.length >= 1, `${where}: at least one target`);
    const refIds = p.targets.map((t) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `${where}: unique refIds`);
    for (const t of p.targets) {
      assert.ok(typeof t.expr === 'string' && t.expr.trim(), `${where} ${t.refId}: an expr`);
      if (t.datasource) assert.equal(t.datasource.uid, '${datasource}', `${where} ${t.refId}: datasource`);
      assert.match(t.expr, /instance=~"\$instance"/, `${where} ${t.refId}: filters on $instance`);
      parsePromQL(t.expr);  // throws on what it cannot read
    }
  }
});

test('the Prometheus scrape example', () => {
  const text = fs.readFileSync(PROMETHEUS_YML, 'utf8');
  assert.match(text, /^\s*scrape_interval:\s*15s\s*$/m);
  assert.match(text, /^\s*- job_name:\s*reprox\s*$/m);
  assert.match(text, /^\s*metrics_path:\s*\/metrics\s*$/m);
  assert.match(text, /^\s*- targets:\s*\[\s*'127\.0\.0\.1:8080'\s*\]\s*$/m);
});

test('the PromQL reader', () => {
  const r = parsePromQL('histogram_quantile(0.99, sum by (le, cache) (rate(a_bucket{instance=~"$instance",cache="hit"}[$__rate_interval]))) / max(b) or vector(0)');
  assert.deepEqual(r.selectors.map((s) => [s.name, s.within]), [['a_bucket', 'rate'], ['b', 'max']]);
  assert.deepEqual(r.selectors[0].matchers, [{ label: 'instance', op: '=~', value: '$instance' },
                                              { label: 'cache', op: '=', value: 'hit' }]);
  assert.deepEqual(r.groupLabels, ['le', 'cache']);
  assert.deepEqual(parsePromQL('sum without (x) (c) + on(y) group_left(z) d offset 5m').selectors.map((s) => s.name), ['c', 'd']);
});

test('every metric the dashboard queries is exported by a live reprox, with its type and labels', { timeout: 50000 }, async (t) => {
  // Every queried name, per panel target.
  const uses = [];
  for (const p of allPanels(loadDashboard())) {
    for (const target of p.targets || []) {
      const { selectors, groupLabels } = parsePromQL(target.expr);
      uses.push({ where: `panel ${p.id} "${p.title}" ${target.refId}: ${target.expr}`, selectors, groupLabels });
    }
  }
  const queried = [...new Set(uses.flatMap((u) => u.selectors.map((s) => s.name)))].sort();
  t.diagnostic(`queried names: ${queried.join(' ')}`);

  // reprox with the Redis tier, audits on every hit and a fallback that
  // engages on one mismatch.
  const redis = await rh.startRedis(t);
  const { proxies: [proxy] } = await rh.startInstances(t, redis.url, 1, ['--audit-every', '1'],
                                                        { audit: { fallback_window: 1, fallback_threshold: 0.05 } });
  // A miss, then a hit (audited: a match), streamed and not.
  for (const stream of [false, true]) {
    const body = h.chatBody({ stream, max_tokens: 8 });
    assert.equal((await h.postChat(proxy, body)).cache, 'miss');
    assert.equal((await h.postChat(proxy, body)).cache, 'hit');
  }
  assert.equal((await fetch(`${proxy.base}/healthz`)).status, 200);
  // An upstream that answers differently each time: the audit of its hit
  // mismatches, and with a one-audit window the greedy fallback engages,
  // which creates the reprox_repro_fallback_active{model} series.
  const flaky = h.chatBody({}, `flaky ${process.pid} ${Date.now()} [[scripted: nondeterministic]]`);
  assert.equal((await h.postChat(proxy, flaky)).cache, 'miss');
  assert.equal((await h.postChat(proxy, flaky)).cache, 'hit');
  const engaged = await rh.waitFor(async () => (await rh.metricSum(proxy.base, 'reprox_repro_fallback_active')) >= 1, 15000);
  assert.ok(engaged, 'the greedy fallback engaged after a mismatching audit');
  assert.ok((await rh.metricSum(proxy.base, 'reprox_repro_audits_total', { result: 'match' })) >= 1, 'a matching audit');

  const res = await fetch(`${proxy.base}/metrics`);
  assert.equal(res.status, 200);
  const families = parseExposition(await res.text());
  const failures = [];
  const used = new Set();
  for (const u of uses) {
    const labelsInExpr = new Set(['instance', 'job', 'le']);
    for (const s of u.selectors) {
      const r = resolve(families, s.name);
      if (!r) { failures.push(`${u.where}: ${s.name} is not in GET /metrics`); continue; }
      const f = families.get(r.family);
      used.add(r.family);
      if (r.suffix && f.type !== 'histogram' && !(f.type === 'summary' && r.suffix !== 'bucket'))
        failures.push(`${u.where}: ${s.name} needs ${r.family} to be a histogram, it is a ${f.type}`);
      if (!r.suffix && (f.type === 'histogram' || f.type === 'summary'))
        failures.push(`${u.where}: the ${f.type} ${r.family} is queried without _bucket/_sum/_count`);
      const rated = RATE_FUNCTIONS.has(s.within);
      const cumulative = f.type === 'counter' || r.suffix !== '';
      if (rated && !cumulative) failures.push(`${u.where}: ${s.within}() of the ${f.type} ${s.name}`);
      if (!rated && cumulative) failures.push(`${u.where}: the ${f.type} ${s.name} outside rate()/increase()`);
      const series = f.series.filter((x) => x.sample === s.name);
      if (!series.length) failures.push(`${u.where}: ${s.name} has no series`);
      for (const l of Object.keys(Object.assign({}, ...series.map((x) => x.labels)))) labelsInExpr.add(l);
      for (const m of s.matchers) {
        if (m.label === 'instance' || m.label === 'job') continue;  // added by Prometheus
        const values = series.filter((x) => m.label in x.labels).map((x) => x.labels[m.label]);
        if (!values.length) failures.push(`${u.where}: ${s.name} has no label ${m.label}`);
        else if (m.op === '=' && !m.value.includes('$') && !values.includes(m.value))
          failures.push(`${u.where}: ${s.name} has no series ${m.label}="${m.value}" (has ${[...new Set(values)]})`);
      }
    }
    for (const l of u.groupLabels)
      if (!labelsInExpr.has(l)) failures.push(`${u.where}: groups by ${l}, which no queried series has`);
  }
  const unused = [...families.keys()].filter((f) => f.startsWith('reprox_') && !used.has(f));
  if (unused.length) t.diagnostic(`exported families the dashboard does not show: ${unused.join(' ')}`);
  assert.deepEqual(failures, []);
  // The families the dashboard must show: dropping one from it fails here.
  for (const f of ['reprox_cache_lookups_total', 'reprox_request_duration_seconds', 'reprox_time_to_first_token_seconds',
                   'reprox_cache_bytes', 'reprox_cache_entries', 'reprox_cache_evictions_total',
                   'reprox_kv_reused_tokens_total', 'reprox_prompt_tokens_total', 'reprox_kv_bytes', 'reprox_kv_hits_total',
                   'reprox_kv_lookups_total', 'reprox_generated_tokens_total', 'reprox_engine_running_sequences',
                   'reprox_engine_waiting_sequences', 'reprox_engine_batch_rows_total', 'reprox_engine_passes_total',
                   'reprox_engine_preemptions_total', 'reprox_cache_store_errors_total', 'reprox_repro_audits_total',
                   'reprox_repro_fallback_active', 'reprox_cache_ttl_extensions_total', 'reprox_cache_ttl_remaining_seconds',
                   'reprox_audit_log_lines_total', 'reprox_audit_log_dropped_total', 'reprox_requests_total'])
    assert.ok(used.has(f), `the dashboard shows ${f}`);
});
