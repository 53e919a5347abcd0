// Prints the side-by-side tables from the JSON files that run.sh collects.
//
//   node report.mjs --raw DIR --work DIR [--mode quick|full]
//
// Tokens are compared by their bytes: reprox streams each token's bytes
// (logprobs), llama.cpp's token ids are turned into bytes with the model's
// byte-level BPE vocabulary (tokenizer.json).
import fs from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const get = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const raw = get("--raw"), work = get("--work"), mode = get("--mode", "");

// GPT-2 byte <-> unicode table
const byteOf = new Map();
{
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  bs.forEach((b, i) => byteOf.set(String.fromCodePoint(cs[i]), b));
}
const vocabCache = new Map();
function idToHex(model) {
  if (!vocabCache.has(model)) {
    const tj = JSON.parse(fs.readFileSync(path.join(work, "models", model, "tokenizer.json"), "utf8"));
    const m = new Map();
    for (const [tok, id] of Object.entries(tj.model.vocab)) {
      const bytes = [];
      for (const ch of tok) bytes.push(byteOf.get(ch) ?? 0);
      m.set(id, Buffer.from(bytes).toString("hex"));
    }
    for (const a of tj.added_tokens || []) m.set(a.id, Buffer.from(a.content, "utf8").toString("hex"));
    vocabCache.set(model, m);
  }
  const m = vocabCache.get(model);
  return (ids) => ids.map((id) => m.get(id));
}

const runs = [];
for (const f of fs.readdirSync(raw).sort()) {
  const mm = f.match(/^(llama|reprox)-(.+)-(f32|f16|q8_0)-t(\d+)\.json$/);
  if (!mm) continue;
  const j = JSON.parse(fs.readFileSync(path.join(raw, f), "utf8"));
  j.model = mm[2];
  j.key = {engine: mm[1], model: mm[2], precision: mm[3], threads: Number(mm[4])};
  runs.push(j);
}
const find = (engine, model, precision, threads) => runs.find((r) =>
  r.key.engine === engine && r.key.model === model && r.key.precision === precision && r.key.threads === threads);

const fmt = (x, d = 1) => (x == null || Number.isNaN(x) ? "—" : Number(x).toFixed(d));
const ratio = (a, b) => (a == null || b == null || !b ? "—" : (a / b).toFixed(2));
const leading = (a, b) => { let i = 0; while (i < a.length && i < b.length && a[i] === b[i]) i++; return i; };
const same = (a, b) => (a && b ? (JSON.stringify(a) === JSON.stringify(b) ? "yes" : `no (first ${leading(a, b)}/${Math.min(a.length, b.length)} agree)`) : "—");

const models = [...new Set(runs.map((r) => r.key.model))];
const lines = [];
const say = (s = "") => lines.push(s);
say(`# reprox vs llama.cpp (node-llama-cpp 3.21.1, prebuilt CPU llama.cpp), ${mode} mode`);
say();
say("Ratios are reprox ÷ llama.cpp: above 1 is better for reprox on throughput rows, below 1 on time and memory rows.");
say("Greedy, batch 1 unless said otherwise, the same token ids for both engines, both with the same thread count.");
for (const model of models) {
  const order = ["f32", "f16", "q8_0"];
  const precs = [...new Set(runs.filter((r) => r.key.model === model).map((r) => r.key.precision))]
    .sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const threads = [...new Set(runs.filter((r) => r.key.model === model).map((r) => r.key.threads))].sort();
  const anyL = runs.find((r) => r.key.model === model && r.key.engine === "llama");
  const cfg = JSON.parse(fs.readFileSync(path.join(work, "models", model, "config.json"), "utf8"));
  const stBytes = fs.statSync(path.join(work, "models", model, "model.safetensors")).size;
  say();
  say(`## ${model}: llama, hidden ${cfg.hidden_size}, ${cfg.num_hidden_layers} layers, ${cfg.num_attention_heads} heads / ` +
    `${cfg.num_key_value_heads} kv heads, MLP ${cfg.intermediate_size}, vocab ${cfg.vocab_size}; ` +
    `f32 safetensors ${(stBytes / 1048576).toFixed(0)} MiB`);
  if (anyL) {
    say(`prompt ${anyL.prompt_tokens} tokens; decode ${anyL.decode_tokens.length} tokens; turn 17: ${anyL.turn17_prompt_tokens} prompt tokens`);
  }
  say();
  say("| row | weights | threads | llama.cpp | reprox | reprox ÷ llama.cpp |");
  say("| --- | --- | --- | ---: | ---: | ---: |");
  for (const p of precs) {
    for (const t of threads) {
      const L = find("llama", model, p, t), R = find("reprox", model, p, t);
      if (!L && !R) continue;
      const rn = R && !R.unsupported ? R : null;
      const na = R?.unsupported ? "n/a (not supported by this build)" : "—";
      const rv = (x, d) => (rn ? fmt(x, d) : na);
      const wl = `${p === "q8_0" ? "Q8_0 / q8" : p.toUpperCase() + " / " + p}`;
      const row = (name, lv, rvv, d) => say(`| ${name} | ${wl} | ${t} | ${fmt(lv, d)} | ${rv(rvv, d)} | ${rn ? ratio(rvv, lv) : "—"} |`);
      row(`prompt tok/s (${L?.prompt_tokens ?? 512} tokens)`, L?.prompt_tps, rn?.prompt_tps, 1);
      row(`decode tok/s (${L?.decode_tokens?.length ?? ""} tokens)`, L?.decode_tps, rn?.decode_tps, 2);
      row(`TTFT ms, turn 17 (${L?.turn17_prompt_tokens ?? ""} tokens, reused: llama.cpp ${L?.turn_reused?.at(-1) ?? "—"}, reprox ${rn?.turn_reused?.at(-1) ?? "—"})`,
        L?.turn17_ttft_ms, rn?.turn17_ttft_ms, 0);
      if (L && L.concurrent_tps == null) {
        say(`| decode tok/s, 8 concurrent sequences | ${wl} | ${t} | not available: ${L.concurrent_error} | ${rv(rn?.concurrent_tps, 2)} | — |`);
      } else {
        row("decode tok/s, 8 concurrent sequences (aggregate)", L?.concurrent_tps, rn?.concurrent_tps, 2);
      }
      const wmib = L ? (L.gguf_bytes / 1048576) : null;
      say(`| RSS MiB after load + warm-up (llama.cpp GGUF ${fmt(wmib, 0)} MiB) | ${wl} | ${t} | ${fmt(L?.rss_warm_mib, 0)} | ${rv(rn?.rss_warm_mib, 0)} | ${rn ? ratio(rn.rss_warm_mib, L?.rss_warm_mib) : "—"} |`);
      say(`| exact: turn 3 reuse on = reuse off | ${wl} | ${t} | ${same(L?.exact?.reuse_on, L?.exact?.reuse_off)} | ${rn ? same(rn.exact?.reuse_on, rn.exact?.reuse_off) : na} | |`);
      say(`| exact: turn 3 batch 1 = inside a batch of 8 | ${wl} | ${t} | ${same(L?.exact?.reuse_off, L?.exact?.batch8)} | ${rn ? same(rn.exact?.reuse_off, rn.exact?.batch8) : na} | |`);
    }
  }
  // The ratios alone, one column per weights and thread count.
  {
    const cols = [];
    for (const p of precs) for (const t of threads) cols.push([p, t]);
    const metrics = [
      ["prompt tok/s", (r) => r.prompt_tps],
      ["decode tok/s", (r) => r.decode_tps],
      ["TTFT turn 17", (r) => r.turn17_ttft_ms],
      ["8-sequence decode tok/s", (r) => r.concurrent_tps],
      ["RSS", (r) => r.rss_warm_mib],
    ];
    say();
    say("reprox ÷ llama.cpp:");
    say();
    say(`| row | ${cols.map(([p, t]) => `${p === "q8_0" ? "Q8_0" : p.toUpperCase()} ${t}t`).join(" | ")} |`);
    say(`| --- | ${cols.map(() => "---:").join(" | ")} |`);
    for (const [name, f] of metrics) {
      const cells = cols.map(([p, t]) => {
        const L = find("llama", model, p, t), R = find("reprox", model, p, t);
        if (R?.unsupported) return "n/a";
        return L && R ? ratio(f(R), f(L)) : "—";
      });
      say(`| ${name} | ${cells.join(" | ")} |`);
    }
    const yn = (a, b) => (a && b ? (JSON.stringify(a) === JSON.stringify(b) ? "yes" : "no") : "—");
    for (const [name, x, y] of [["exact, reuse on = off (llama.cpp / reprox)", "reuse_on", "reuse_off"],
      ["exact, batch 1 = batch of 8 (llama.cpp / reprox)", "reuse_off", "batch8"]]) {
      const cells = cols.map(([p, t]) => {
        const L = find("llama", model, p, t), R = find("reprox", model, p, t);
        return `${yn(L?.exact?.[x], L?.exact?.[y])} / ${R?.unsupported ? "n/a" : yn(R?.exact?.[x], R?.exact?.[y])}`;
      });
      say(`| ${name} | ${cells.join(" | ")} |`);
    }
  }
  // Agreement between the engines on the decode tokens and the first step.
  say();
  say("Greedy agreement between the engines (decode prompt, tokens compared by bytes; leading tokens that agree):");
  say();
  say("| llama.cpp weights | threads | vs reprox f32 | vs reprox same weights | first step: top-1 equal, max abs Δ log-prob over the common top-20 |");
  say("| --- | --- | --- | --- | --- |");
  const toHex = idToHex(model);
  for (const p of precs) {
    for (const t of threads) {
      const L = find("llama", model, p, t);
      if (!L) continue;
      const lhex = toHex(L.decode_tokens);
      const R32 = find("reprox", model, "f32", t);
      const Rp = find("reprox", model, p, t);
      const agree = (R) => (R && !R.unsupported && R.decode_tokens ? `${leading(lhex, R.decode_tokens)}/${Math.min(lhex.length, R.decode_tokens.length)}` : "—");
      let first = "—";
      const R = Rp && !Rp.unsupported ? Rp : R32;
      if (R?.first_step_top && L.first_step_top) {
        const lt = new Map(L.first_step_top.map(([id, lp]) => [toHex([id])[0], lp]));
        let maxd = 0, common = 0;
        for (const [hex, lp] of R.first_step_top) if (lt.has(hex)) { common++; maxd = Math.max(maxd, Math.abs(lt.get(hex) - lp)); }
        const top1 = toHex([L.first_step_top[0][0]])[0] === R.first_step_top[0][0];
        first = `${top1 ? "yes" : "no"}, ${maxd.toExponential(2)} (${common} common, vs reprox ${R.precision})`;
      }
      say(`| ${p.toUpperCase()} | ${t} | ${agree(R32)} | ${p === "f32" ? agree(R32) : agree(Rp)} | ${first} |`);
    }
  }
  const R0 = runs.find((r) => r.key.model === model && r.key.engine === "reprox" && !r.unsupported);
  if (R0) {
    say();
    say(`reprox rendering and tokenization vs the workload's: template mismatches ${R0.template_mismatches?.length ?? "—"}, ` +
      `token-id mismatches ${R0.tokenization_mismatches?.length ?? "—"} (of 3 prompts checked).`);
  }
}
console.log(lines.join("\n"));
