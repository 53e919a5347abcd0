// reprox side of the benchmark: drives a running `reprox serve` over HTTP on
// loopback, as a client would (OpenAI chat requests, SSE streaming, the
// server's chat template), with the workload of workload.mjs. Prints one JSON
// object.
//
//   node bench_reprox.mjs --url http://127.0.0.1:PORT --pid PID --workload W.json --phase main|noreuse
//
// Every request is greedy (temperature 0), sends `Cache-Control: no-store` so
// the response cache never answers, and asks for logprobs so that each
// streamed token is counted and compared exactly (by its bytes).
// --phase main: a server with KV reuse on; --phase noreuse: one started with
// --kv-budget 0 (turn 3 alone and inside a batch of 8).
import fs from "node:fs";
import {chat as chatAt, decodeRate, median, now, postJSON as postAt, rss} from "./reprox_client.mjs";
import {renderChatML} from "./workload.mjs";

const args = process.argv.slice(2);
const get = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const url = get("--url"), pid = get("--pid"), wpath = get("--workload"), phase = get("--phase", "main");
const label = get("--label", "");
if (!url || !wpath) {
  console.error("usage: node bench_reprox.mjs --url URL --pid PID --workload W.json --phase main|noreuse");
  process.exit(2);
}
const w = JSON.parse(fs.readFileSync(wpath, "utf8"));
const log = (m) => console.error(`[reprox ${label}] ${m}`);
const chat = (messages, maxTokens, opts) => chatAt(url, messages, maxTokens, opts);
const postJSON = (path, body) => postAt(url, path, body);

const out = {engine: "reprox", phase};

if (phase === "main") {
  Object.assign(out, Object.fromEntries(Object.entries(rss(pid)).map(([k, v]) => [k.replace("_mib", "_loaded_mib"), v])));
  // The server's rendering and tokenization must equal the workload's.
  {
    const checks = [["decode", w.decode, w.ids.decode], ["turn17", w.turns[16], w.ids.turns[16]],
      ["prompt0", w.prompts[0], w.ids.prompts[0]]];
    out.template_mismatches = [];
    out.tokenization_mismatches = [];
    for (const [name, msgs, ids] of checks) {
      const tpl = await postJSON("/apply-template", {messages: msgs, add_generation_prompt: true});
      if (tpl.prompt !== renderChatML(msgs)) out.template_mismatches.push(name);
      const tk = await postJSON("/tokenize", {messages: msgs, add_generation_prompt: true});
      if (JSON.stringify(tk.tokens) !== JSON.stringify(ids)) out.tokenization_mismatches.push(name);
    }
    log(`template mismatches: ${out.template_mismatches.length}, tokenization mismatches: ${out.tokenization_mismatches.length}`);
  }
  // warm-up
  await chat([{role: "user", content: w.prompts.at(-1)[0].content.slice(0, 300)}], 2, {tenant: "warmup"});
  Object.assign(out, Object.fromEntries(Object.entries(rss(pid)).map(([k, v]) => [k.replace("_mib", "_warm_mib"), v])));

  // First-step top-20 distribution on the decode prompt.
  {
    const r = await chat(w.decode, 1, {tenant: "top", topLogprobs: 20});
    out.first_step_top = r.top;
  }
  // Prompt throughput: distinct 512-token prompts, time to first token.
  {
    const ttfts = [];
    for (let i = 0; i < w.prompt_reps; i++) {
      const r = await chat(w.prompts[i], 1, {tenant: `prompt-${i}`});
      if (r.usage?.prompt_tokens_details?.cached_tokens) log(`warning: prompt ${i} reused ${r.usage.prompt_tokens_details.cached_tokens} tokens`);
      ttfts.push(r.ttft);
      out.prompt_tokens = r.usage?.prompt_tokens;
    }
    out.prompt_ttft_ms = ttfts;
    out.prompt_tps = out.prompt_tokens / (median(ttfts) / 1000);
    log(`prompt ${out.prompt_tps.toFixed(1)} tok/s`);
  }
  // Decode.
  {
    const r = await chat(w.decode, w.decode_tokens, {tenant: "decode"});
    out.decode_tokens = r.tokens;
    out.decode_finish = r.finish;
    out.decode_tps = decodeRate(r);
    log(`decode ${out.decode_tps.toFixed(2)} tok/s (${r.tokens.length} tokens)`);
  }
  // Conversation: turns 1..17 as successive requests of one client.
  {
    const ttfts = [], reused = [];
    for (const msgs of w.turns) {
      const r = await chat(msgs, w.conversation_turn_tokens, {tenant: "conversation"});
      ttfts.push(r.ttft);
      reused.push(r.usage?.prompt_tokens_details?.cached_tokens ?? null);
      out.turn17_prompt_tokens = r.usage?.prompt_tokens;
    }
    out.turn_ttft_ms = ttfts;
    out.turn_reused = reused;
    out.turn17_ttft_ms = ttfts.at(-1);
    log(`turn 17 ttft ${out.turn17_ttft_ms.toFixed(1)} ms (reused ${reused.at(-1)} of ${out.turn17_prompt_tokens})`);
  }
  // Eight concurrent requests: aggregate decode throughput.
  {
    const t0 = now();
    const runs = await Promise.all(w.concurrent_prompts.map((m, i) => chat(m, w.concurrent_tokens, {tenant: `conc-${i}`})));
    const start = Math.max(...runs.map((r) => r.times[0]));
    const end = Math.max(...runs.map((r) => r.times.at(-1)));
    let n = 0;
    for (const r of runs) n += r.times.filter((x) => x > start).length;
    out.concurrent_sequences = 8;
    out.concurrent_tps = n / ((end - start) / 1000);
    out.concurrent_wall_tps = runs.reduce((a, r) => a + r.tokens.length, 0) / ((end - t0) / 1000);
    log(`8 concurrent ${out.concurrent_tps.toFixed(2)} tok/s`);
  }
  // Exactness, reuse on: turns 1, 2, then 3 of a fresh conversation.
  {
    for (let k = 0; k < 2; k++) await chat(w.turns[k], w.conversation_turn_tokens, {tenant: "exact"});
    const r = await chat(w.turns[2], w.exact_tokens, {tenant: "exact"});
    out.exact = {reuse_on: r.tokens, reuse_on_reused: r.usage?.prompt_tokens_details?.cached_tokens ?? null};
  }
} else {
  // --kv-budget 0: turn 3 alone, then inside a batch of 8.
  const alone = await chat(w.turns[2], w.exact_tokens, {tenant: "exact"});
  const inBatch = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
    chat(i === 0 ? w.turns[2] : w.concurrent_prompts[i], w.exact_tokens, {tenant: `exact-b${i}`})));
  out.exact = {reuse_off: alone.tokens, reuse_off_reused: alone.usage?.prompt_tokens_details?.cached_tokens ?? null,
    batch8: inBatch[0].tokens};
}
console.log(JSON.stringify(out));
