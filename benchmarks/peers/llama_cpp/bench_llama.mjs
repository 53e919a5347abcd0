// llama.cpp side of the benchmark, through node-llama-cpp (prebuilt CPU
// binaries, no GPU). Runs the workload of workload.mjs on one GGUF file at one
// thread count and prints one JSON object.
//
//   node bench_llama.mjs --gguf FILE --workload W.json --threads N [--precision NAME]
//
// Every prompt goes in as the token ids of workload.json (llama.cpp's own
// tokenization of the ChatML rendering), greedy (temperature 0), batch 1
// unless said otherwise.
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";
import {generate, reusePrefix} from "./llama_generate.mjs";
import {decodeRate, median, now} from "./reprox_client.mjs";

const args = process.argv.slice(2);
const get = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const gguf = get("--gguf"), wpath = get("--workload");
const threads = Number(get("--threads", "1"));
const precision = get("--precision", "");
if (!gguf || !wpath) {
  console.error("usage: node bench_llama.mjs --gguf FILE --workload W.json --threads N [--precision NAME]");
  process.exit(2);
}
const w = JSON.parse(fs.readFileSync(wpath, "utf8"));
const rssMiB = () => process.memoryUsage().rss / 1048576;
const log = (m) => console.error(`[llama.cpp ${precision} t=${threads}] ${m}`);

const CTX = 4096;
const out = {engine: "llama.cpp", precision, threads, gguf, gguf_bytes: fs.statSync(gguf).size};

const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: threads});
out.llama_cpp_release = llama.llamaCppRelease;
out.rss_base_mib = rssMiB();
let t = now();
const model = await llama.loadModel({modelPath: gguf});
out.load_ms = now() - t;
out.rss_loaded_mib = rssMiB();
const threadOpt = {ideal: threads, min: threads};
const ctx1 = await model.createContext({contextSize: CTX, sequences: 1, threads: threadOpt, batchSize: 512});
const seq = ctx1.getSequence();
out.context_size = seq.contextSize;
out.flash_attention = ctx1.flashAttention;
// warm-up: touches every weight page (mmap) and the compute buffers
await generate(seq, w.ids.prompts[w.prompts.length - 1].slice(0, 64), 2);
await seq.clearHistory();
out.rss_warm_mib = rssMiB();
log(`loaded in ${out.load_ms.toFixed(0)} ms, rss ${out.rss_warm_mib.toFixed(0)} MiB`);

// First-step distribution on the decode prompt (top 20 log-probabilities).
{
  const ids = w.ids.decode;
  const input = ids.map((id, i) => (i === ids.length - 1 ? [id, {generateNext: {probabilities: true, options: {temperature: 0}}}] : id));
  const res = await seq.controlledEvaluate(input);
  const last = res[ids.length - 1];
  const probs = [...last.next.probabilities.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
  out.first_step_top = probs.map(([id, p]) => [id, Math.log(p)]);
  await seq.clearHistory();
}

// Prompt throughput: time to first token of a fresh 512-token prompt.
{
  const ttfts = [];
  for (let i = 0; i < w.prompt_reps; i++) {
    await seq.clearHistory();
    const r = await generate(seq, w.ids.prompts[i], 1);
    ttfts.push(r.ttft);
  }
  await seq.clearHistory();
  out.prompt_tokens = w.ids.prompts[0].length;
  out.prompt_ttft_ms = ttfts;
  out.prompt_tps = out.prompt_tokens / (median(ttfts) / 1000);
  log(`prompt ${out.prompt_tps.toFixed(1)} tok/s`);
}

// Decode: decode_tokens greedy tokens after a short prompt, batch 1.
{
  const r = await generate(seq, w.ids.decode, w.decode_tokens);
  await seq.clearHistory();
  out.decode_tokens = r.tokens;
  out.decode_tps = decodeRate(r);
  log(`decode ${out.decode_tps.toFixed(2)} tok/s`);
}

// Conversation: turns 1..17 on one sequence; each turn keeps the common
// prefix of the cached context (the previous prompt; the generated reply
// differs from the resent assistant text) and evaluates the rest.
{
  const ttfts = [], reused = [];
  for (let k = 0; k < w.turns.length; k++) {
    const ids = w.ids.turns[k];
    const t0 = now();
    const {rest, reused: r} = await reusePrefix(seq, ids);
    const g = await generate(seq, rest, w.conversation_turn_tokens);
    ttfts.push(g.times[0] - t0);
    reused.push(r);
  }
  await seq.clearHistory();
  out.turn_ttft_ms = ttfts;
  out.turn_reused = reused;
  out.turn17_ttft_ms = ttfts.at(-1);
  out.turn17_prompt_tokens = w.ids.turns.at(-1).length;
  log(`turn 17 ttft ${out.turn17_ttft_ms.toFixed(1)} ms (reused ${reused.at(-1)} of ${out.turn17_prompt_tokens})`);
}

// Exactness, batch 1: turn 3 with its prefix reused vs evaluated fresh.
{
  for (let k = 0; k < 2; k++) {
    const {rest} = await reusePrefix(seq, w.ids.turns[k]);
    await generate(seq, rest, w.conversation_turn_tokens);
  }
  const {rest, reused} = await reusePrefix(seq, w.ids.turns[2]);
  const on = await generate(seq, rest, w.exact_tokens);
  await seq.clearHistory();
  const off = await generate(seq, w.ids.turns[2], w.exact_tokens);
  await seq.clearHistory();
  out.exact = {reuse_on: on.tokens, reuse_on_reused: reused, reuse_off: off.tokens};
}
await ctx1.dispose();

// Eight sequences in one context: aggregate decode throughput, then turn 3
// inside a batch of 8 for the exactness row.
{
  let ctx8;
  try {
    ctx8 = await model.createContext({contextSize: CTX, sequences: 8, threads: threadOpt, batchSize: 512});
  } catch (e) {
    out.concurrent_error = String(e.message || e);
  }
  if (ctx8) {
    out.concurrent_sequences = 8;
    const seqs = [];
    for (let i = 0; i < 8; i++) seqs.push(ctx8.getSequence());
    const t0 = now();
    const runs = await Promise.all(seqs.map((s, i) => generate(s, w.ids.concurrent_prompts[i], w.concurrent_tokens)));
    // decode window: from the moment every sequence has its first token to the last token
    const start = Math.max(...runs.map((r) => r.times[0]));
    const end = Math.max(...runs.map((r) => r.times.at(-1)));
    let n = 0;
    for (const r of runs) n += r.times.filter((x) => x > start).length;
    out.concurrent_tps = n / ((end - start) / 1000);
    out.concurrent_wall_tps = runs.reduce((a, r) => a + r.tokens.length, 0) / ((end - t0) / 1000);
    for (const s of seqs) await s.clearHistory();
    log(`8 sequences ${out.concurrent_tps.toFixed(2)} tok/s`);
    const inBatch = await Promise.all(seqs.map((s, i) =>
      generate(s, i === 0 ? w.ids.turns[2] : w.ids.concurrent_prompts[i], w.exact_tokens)));
    out.exact.batch8 = inBatch[0].tokens;
    await ctx8.dispose();
  }
}

await model.dispose();
console.log(JSON.stringify(out));
