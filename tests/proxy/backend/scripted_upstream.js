#!/usr/bin/env node
// Scripted upstream: a test double for an OpenAI-compatible server (vLLM,
// llama.cpp, OpenAI). Node built-ins only.
//
//   node tests/proxy/backend/scripted_upstream.js --port N [--host 127.0.0.1]
//   Prints "listening PORT" on stdout once ready (--port 0 picks a free port).
//
// POST /v1/chat/completions (also /chat/completions under any prefix)
//   Answers with deterministic text derived from the request. Choice i of n:
//     "seed=<seed> choice=<i> model=<model> echo: <text of the last message>"
//   (seed is "none" when absent) followed by `words=N` filler words
//   " w1 w2 ...". The text is sent in pieces, one per word with its leading
//   space; max_tokens caps the number of pieces (finish_reason "length",
//   else "stop"). stream:true gives SSE: a role-only chunk per choice, then
//   the pieces round-robin across choices (interleaved), each choice's last
//   piece carrying finish_reason, then a usage chunk when
//   stream_options.include_usage, then "data: [DONE]". stream:false gives
//   one JSON response. logprobs:true adds choices[i].logprobs.content.
//   Every chunk has system_fingerprint "fp_scripted00000" unless overridden.
//
//   Behaviour is scripted by directives, "key=value" or "key" items
//   separated by ';' or ',', taken from the body's `user` field and from
//   "[[scripted: ...]]" anywhere in a message's text (which, unlike `user`,
//   changes a caching proxy's key):
//     delay_first_ms=N   wait N ms before sending the response header
//     delay_chunk_ms=N   wait N ms before each chunk after the first
//     words=N            append N filler words (long streams)
//     pad=N              make each filler word N characters longer (big chunks)
//     cut_after=K        destroy the connection after K chunks (no [DONE])
//     status=N           answer HTTP N with an OpenAI error body
//                        (message=TEXT, param=NAME override its fields;
//                        429 has type "requests", code "rate_limit_exceeded")
//     invalid_json       send "data: {not json" after the first chunk
//     sse_error          send a data: {"error":{...}} chunk after the first chunk
//     nonstream          answer one JSON response even when stream:true
//     tool_calls         stream a tool call (get_weather) instead of text,
//                        finish_reason "tool_calls"
//     multi_choice_chunk put every choice's piece of a round in one chunk
//     no_usage           omit the usage chunk
//     no_done            end the stream without "data: [DONE]"
//     crlf               use CRLF line ends; comments: send ": ping" lines
//     fingerprint=FP     system_fingerprint to report; no_fingerprint omits it
//     nondeterministic   end the text with " call<N>", N the request count
//                        (an upstream that answers the same request differently)
//
// Inspection (these /__ paths are not counted):
//   GET  /__count  -> {"total":N,"by_path":{path:N},"aborted":A,"completed":C}
//                     aborted: streams whose client closed the connection
//                     before the stream ended; completed: streams that ended.
//   GET  /__last   -> {"method","path","headers","body"} of the last counted
//                     request (body parsed when JSON, else a string)
//   POST /__reset  -> zeroes the counters
// Other paths:
//   GET  /v1/models -> {"object":"list","data":[{"id":"scripted-model",...}]}
//   ANY  /echo...   -> 200 {"method","path","headers","body"} (body as a
//                      string), headers x-scripted: echo and
//                      access-control-allow-origin: *; ?delay_ms=N waits
//                      first, ?status=N answers that status.
//   anything else   -> 404 OpenAI error JSON.
'use strict';
const http = require('http');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const port = Number(arg('--port', '0'));
const host = arg('--host', '127.0.0.1');

const stats = { total: 0, by_path: {}, aborted: 0, completed: 0 };
let last = null;

function messageText(m) {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content))
    return m.content.filter(p => p && p.type === 'text').map(p => p.text).join('');
  return '';
}

function parseDirectives(body) {
  const out = {};
  const sources = [];
  if (typeof body.user === 'string') sources.push(body.user);
  for (const m of body.messages || []) {
    const re = /\[\[scripted:([^\]]*)\]\]/g;
    let match;
    while ((match = re.exec(messageText(m))) !== null) sources.push(match[1]);
  }
  for (const src of sources)
    for (const item of src.split(/[;,]/)) {
      const t = item.trim();
      if (!t) continue;
      const eq = t.indexOf('=');
      if (eq < 0) out[t] = true; else out[t.slice(0, eq).trim()] = t.slice(eq + 1).trim();
    }
  return out;
}

function sleep(ms) { return new Promise(r => setTimeout(r, ms)); }

function sendJson(res, status, obj, extraHeaders) {
  const text = JSON.stringify(obj);
  res.writeHead(status, Object.assign({ 'content-type': 'application/json',
                                        'content-length': Buffer.byteLength(text) },
                                      extraHeaders || {}));
  res.end(text);
}

function errorBody(status, d) {
  const defaults = {
    400: ['scripted bad request', 'invalid_request_error', null],
    401: ['scripted: invalid API key', 'invalid_request_error', 'invalid_api_key'],
    404: ['scripted: model not found', 'invalid_request_error', 'model_not_found'],
    429: ['Rate limit reached (scripted)', 'requests', 'rate_limit_exceeded'],
  };
  const [message, type, code] = defaults[status] || ['scripted server error ' + status, 'server_error', null];
  return { error: { message: d.message || message, type, param: d.param || null, code } };
}

// The pieces of each choice's answer and its finish_reason.
function plan(body, d) {
  const n = Number.isInteger(body.n) && body.n > 0 ? body.n : 1;
  const msgs = body.messages || [];
  const seed = body.seed === undefined ? 'none' : String(body.seed);
  const maxTokens = body.max_tokens !== undefined ? body.max_tokens : body.max_completion_tokens;
  const choices = [];
  for (let i = 0; i < n; i++) {
    let text = `seed=${seed} choice=${i} model=${body.model} echo: ${messageText(msgs[msgs.length - 1])}`;
    const pad = 'x'.repeat(Math.min(Number(d.pad || 0), 1 << 20));
    for (let w = 1; w <= Number(d.words || 0); w++) text += ` w${w}${pad}`;
    if (d.nondeterministic) text += ` call${stats.total}`;
    let pieces = text.match(/\s*\S+/g) || [''];
    let finish = 'stop';
    if (d.tool_calls) {
      pieces = [];
      finish = 'tool_calls';
    } else if (Number.isInteger(maxTokens) && pieces.length > maxTokens) {
      pieces = pieces.slice(0, Math.max(maxTokens, 0));
      finish = 'length';
    }
    choices.push({ pieces, finish });
  }
  return choices;
}

function toolCallDeltas(i) {
  return [
    { tool_calls: [{ index: 0, id: `call_${i}`, type: 'function',
                     function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
  ];
}

function logprobsFor(piece) {
  return { content: [{ token: piece, logprob: -0.25, bytes: [...Buffer.from(piece)], top_logprobs: [] }] };
}

async function chat(req, res, body) {
  const d = parseDirectives(body);
  if (d.delay_first_ms) await sleep(Number(d.delay_first_ms));
  if (d.status) return sendJson(res, Number(d.status), errorBody(Number(d.status), d));

  const id = 'chatcmpl-scripted';
  const created = 1700000000;
  const model = body.model || 'scripted-model';
  const fp = d.fingerprint || 'fp_scripted00000';
  const choices = plan(body, d);
  const promptTokens = (body.messages || []).map(messageText).join(' ').split(/\s+/).filter(Boolean).length;
  const completionTokens = choices.reduce((s, c) => s + Math.max(c.pieces.length, d.tool_calls ? 3 : 0), 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens,
                  total_tokens: promptTokens + completionTokens,
                  prompt_tokens_details: { cached_tokens: 0 } };

  if (!body.stream || d.nonstream) {
    const out = {
      id, object: 'chat.completion', created, model, system_fingerprint: fp,
      choices: choices.map((c, i) => {
        const message = { role: 'assistant', content: d.tool_calls ? null : c.pieces.join('') };
        if (d.tool_calls) message.tool_calls = [{ id: `call_${i}`, type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];
        const choice = { index: i, message, finish_reason: c.finish };
        if (body.logprobs) choice.logprobs = { content: c.pieces.map(p => logprobsFor(p).content[0]) };
        return choice;
      }),
      usage,
    };
    stats.completed++;
    return sendJson(res, 200, out);
  }

  // Streaming.
  const eol = d.crlf ? '\r\n' : '\n';
  let ended = false;
  let deliberate = false;
  res.on('close', () => { if (!ended && !deliberate) stats.aborted++; });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });

  const chunks = [];
  const base = (choiceObjs) => Object.assign(
      { id, object: 'chat.completion.chunk', created, model },
      d.no_fingerprint ? {} : { system_fingerprint: fp }, { choices: choiceObjs });
  const rounds = [];
  rounds.push(choices.map((c, i) => ({ index: i, delta: { role: 'assistant', content: '' },
                                       logprobs: null, finish_reason: null })));
  const perChoice = choices.map((c, i) => {
    const deltas = d.tool_calls ? toolCallDeltas(i) : c.pieces.map(p => ({ content: p }));
    const steps = deltas.map(delta => ({ index: i, delta, logprobs: null, finish_reason: null }));
    if (body.logprobs && !d.tool_calls) steps.forEach((s, k) => { s.logprobs = logprobsFor(c.pieces[k]); });
    if (steps.length === 0) steps.push({ index: i, delta: {}, logprobs: null, finish_reason: null });
    steps[steps.length - 1].finish_reason = c.finish;
    return steps;
  });
  const longest = Math.max(...perChoice.map(s => s.length));
  for (let k = 0; k < longest; k++) {
    const round = perChoice.filter(s => k < s.length).map(s => s[k]);
    rounds.push(round);
  }
  for (const round of rounds) {
    if (d.multi_choice_chunk) chunks.push(JSON.stringify(base(round)));
    else for (const c of round) chunks.push(JSON.stringify(base([c])));
  }
  if (d.invalid_json) chunks.splice(1, 0, '{not json');
  if (d.sse_error) chunks.splice(1, 0, JSON.stringify({ error: { message: 'scripted mid-stream failure', type: 'server_error' } }));
  const includeUsage = body.stream_options && body.stream_options.include_usage;
  if (includeUsage && !d.no_usage) chunks.push(JSON.stringify(Object.assign(base([]), { usage })));

  const cutAfter = d.cut_after !== undefined ? Number(d.cut_after) : -1;
  for (let k = 0; k < chunks.length; k++) {
    if (res.destroyed) return;
    if (k === cutAfter) { deliberate = true; req.socket.destroy(); return; }
    if (k > 0 && d.delay_chunk_ms) {
      await sleep(Number(d.delay_chunk_ms));
      if (res.destroyed) return;
    }
    if (d.comments) res.write(': ping' + eol);
    res.write('data: ' + chunks[k] + eol + eol);
  }
  if (cutAfter === chunks.length) { deliberate = true; req.socket.destroy(); return; }
  if (!d.no_done) res.write('data: [DONE]' + eol + eol);
  ended = true;
  stats.completed++;
  res.end();
}

async function echo(req, res, raw, url) {
  const delay = Number(url.searchParams.get('delay_ms') || 0);
  if (delay) await sleep(delay);
  const status = Number(url.searchParams.get('status') || 200);
  sendJson(res, status, { method: req.method, path: req.url, headers: req.headers, body: raw },
           { 'x-scripted': 'echo', 'access-control-allow-origin': '*' });  // as vLLM's default
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', c => parts.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(parts).toString('utf8');
    const url = new URL(req.url, 'http://scripted');
    const path = url.pathname;
    if (path === '/__count') return sendJson(res, 200, stats);
    if (path === '/__last') return sendJson(res, 200, last);
    if (path === '/__reset') {
      stats.total = 0; stats.by_path = {}; stats.aborted = 0; stats.completed = 0; last = null;
      return sendJson(res, 200, { reset: true });
    }
    stats.total++;
    stats.by_path[path] = (stats.by_path[path] || 0) + 1;
    let body = raw;
    try { body = JSON.parse(raw); } catch (e) { /* kept as text */ }
    last = { method: req.method, path: req.url, headers: req.headers, body };

    if (req.method === 'POST' && path.endsWith('/chat/completions')) {
      if (typeof body !== 'object' || body === null)
        return sendJson(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error', param: null, code: null } });
      return chat(req, res, body).catch(e => { res.destroy(); console.error(e); });
    }
    if (req.method === 'GET' && path === '/v1/models')
      return sendJson(res, 200, { object: 'list', data: [{ id: 'scripted-model', object: 'model', created: 0, owned_by: 'scripted' }] });
    if (path.startsWith('/echo')) return echo(req, res, raw, url).catch(() => res.destroy());
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: 'not_found' } });
  });
});
server.keepAliveTimeout = 5000;
server.listen(port, host, () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
