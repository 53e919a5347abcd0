// The shared workload: the same chat messages for both engines, rendered with
// the model's ChatML template (the Qwen3 tokenizer's; bench_reprox.mjs checks
// every rendering against reprox's /apply-template and every token list
// against reprox's /tokenize, so both engines see the same token ids).
//
//   node workload.mjs --gguf FILE --out workload.json [--quick]
//
// It loads only the vocabulary of the GGUF (vocabOnly) to cut texts to exact
// token counts.
import fs from "node:fs";
import {pathToFileURL} from "node:url";
import {getLlama} from "node-llama-cpp";

const WORDS = ("time people year way day thing man world life hand part child eye woman place work week case point " +
  "number group problem fact water room mother area money story month lot right study book job word business issue " +
  "side kind head house service friend father power hour game line end member law car city name team minute idea " +
  "kid body information back parent face others level office door health person art war history party result change " +
  "morning reason research girl guy moment air teacher force education good new first last long great little own " +
  "other old big high different small large next early young important few public bad same able river garden light " +
  "music paper table window market stone bridge letter summer winter field road train ship forest island village")
  .split(" ");

// splitmix32-style PRNG: the workload depends only on the seed.
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
}

function words(seed, n) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    let w = WORDS[Math.floor(r() * WORDS.length)];
    if (i === 0 || out[out.length - 1].endsWith(".")) w = w[0].toUpperCase() + w.slice(1);
    if (i % 12 === 11) w += ".";
    out.push(w);
  }
  return out;
}

export function renderChatML(messages, addGenerationPrompt = true) {
  let s = "";
  for (const m of messages) s += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  if (addGenerationPrompt) s += "<|im_start|>assistant\n";
  return s;
}

// A user message whose rendered prompt is exactly `target` tokens.
function exactPrompt(model, seed, target) {
  const ws = words(seed, target * 2);
  const count = (text) => model.tokenize(renderChatML([{role: "user", content: text}]), true).length;
  let lo = 1, hi = ws.length;
  while (lo < hi) { // largest word count whose prompt is <= target
    const mid = Math.ceil((lo + hi) / 2);
    if (count(ws.slice(0, mid).join(" ")) <= target) lo = mid; else hi = mid - 1;
  }
  let text = ws.slice(0, lo).join(" ");
  for (let guard = 0; count(text) < target && guard < 64; guard++) text += " a";
  const n = count(text);
  if (n !== target) throw new Error(`could not make a ${target}-token prompt (got ${n})`);
  return text;
}

function main() {
  const args = process.argv.slice(2);
  const get = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
  const quick = args.includes("--quick");
  const gguf = get("--gguf"), out = get("--out");
  if (!gguf || !out) {
    console.error("usage: node workload.mjs --gguf FILE --out workload.json [--quick]");
    process.exit(2);
  }
  return (async () => {
    const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
    const model = await llama.loadModel({modelPath: gguf, vocabOnly: true});
    const w = {
      quick,
      prompt_tokens: 512,
      prompt_reps: quick ? 2 : 3,
      decode_tokens: quick ? 32 : 128,
      conversation_turn_tokens: quick ? 4 : 16,
      concurrent: 8,
      concurrent_tokens: quick ? 16 : 64,
      exact_tokens: quick ? 16 : 32,
    };
    // Prompt throughput: distinct 512-token prompts (distinct from their first
    // word, so no engine can reuse a prefix between repetitions).
    w.prompts = [];
    for (let i = 0; i < w.prompt_reps + 1; i++) w.prompts.push([{role: "user", content: exactPrompt(model, 1000 + i, 512)}]);
    // Decode: a short prompt, then decode_tokens greedy tokens.
    w.decode = [{role: "user", content: "Tell me a long story about a " + words(7, 12).join(" ")}];
    // Conversation: 16 earlier turns (user and assistant ~54 words each,
    // fixed texts as a client would resend them) and the 17th user message:
    // about 2,000 tokens of history.
    const conv = [];
    for (let t = 0; t < 17; t++) {
      conv.push({role: "user", content: words(2000 + t, 54).join(" ")});
      if (t < 16) conv.push({role: "assistant", content: words(3000 + t, 54).join(" ")});
    }
    w.conversation = conv;
    w.turns = [];
    for (let t = 1; t <= 17; t++) w.turns.push(conv.slice(0, 2 * t - 1));
    const ids17 = model.tokenize(renderChatML(w.turns[16]), true);
    const ids16 = model.tokenize(renderChatML(w.turns[15].concat([conv[31]]), false), true);
    w.turn17_prompt_tokens = ids17.length;
    w.turn17_history_tokens = ids16.length;
    // Concurrency: 8 distinct short prompts.
    w.concurrent_prompts = [];
    for (let i = 0; i < 8; i++) {
      w.concurrent_prompts.push([{role: "user", content: "Write about the " + words(4000 + i, 10).join(" ")}]);
    }
    // Token ids of every prompt per llama.cpp's tokenizer (bench_reprox.mjs
    // compares them with reprox's).
    const tok = (m) => model.tokenize(renderChatML(m), true);
    w.ids = {
      prompts: w.prompts.map(tok),
      decode: tok(w.decode),
      turns: w.turns.map(tok),
      concurrent_prompts: w.concurrent_prompts.map(tok),
    };
    fs.writeFileSync(out, JSON.stringify(w));
    console.error(`workload: ${w.ids.prompts[0].length}-token prompts, turn 17: ${w.turn17_prompt_tokens} tokens ` +
      `(history ${w.turn17_history_tokens}), decode prompt ${w.ids.decode.length} tokens`);
    await model.dispose();
  })();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
