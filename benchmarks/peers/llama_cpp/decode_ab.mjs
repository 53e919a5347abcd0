// Interleaved decode: llama.cpp and reprox on the same weights, measured in
// alternating legs so that both see the same state of the host's memory
// bandwidth. Prints one JSON object.
//
//   node decode_ab.mjs --gguf FILE --workload W.json --url http://127.0.0.1:PORT --pid PID
//        --threads N [--rounds R] [--precision NAME] [--model NAME]
//
// Both engines stay loaded for the whole run: llama.cpp in this process,
// reprox as the running server at --url (pid --pid). Each round decodes the
// workload's decode prompt (decode_tokens greedy tokens) once on each engine,
// llama.cpp first in even rounds and reprox first in odd ones, so that a
// steady drift favours neither. A round's ratio is reprox's decode rate over
// llama.cpp's in that round; the result is their median and range.
//
// The idle engine must not take CPU from the busy one: the JSON gives the
// CPU the reprox server used during llama.cpp's legs, and the CPU this
// process (llama.cpp's host and reprox's HTTP client) used during reprox's
// legs, each as a share of the legs' wall time.
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";
import {generate} from "./llama_generate.mjs";
import {chat, cpuSeconds, decodeRate, median, now} from "./reprox_client.mjs";

const args = process.argv.slice(2);
const get = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const gguf = get("--gguf"), wpath = get("--workload"), url = get("--url"), pid = get("--pid");
const threads = Number(get("--threads", "1"));
const rounds = Number(get("--rounds", "6"));
const precision = get("--precision", ""), modelName = get("--model", "");
if (!gguf || !wpath || !url || !pid || !(rounds >= 2)) {
  console.error("usage: node decode_ab.mjs --gguf FILE --workload W.json --url URL --pid PID --threads N [--rounds R>=2] [--precision NAME]");
  process.exit(2);
}
const w = JSON.parse(fs.readFileSync(wpath, "utf8"));
const log = (m) => console.error(`[decode a/b ${precision} t=${threads}] ${m}`);
const ownCpuSeconds = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: threads});
const model = await llama.loadModel({modelPath: gguf});
const ctx = await model.createContext({contextSize: 4096, sequences: 1, threads: {ideal: threads, min: threads}, batchSize: 512});
const seq = ctx.getSequence();

async function llamaLeg() {
  const r = await generate(seq, w.ids.decode, w.decode_tokens);
  await seq.clearHistory();
  return {tps: decodeRate(r), tokens: r.tokens};
}
async function reproxLeg() {
  const r = await chat(url, w.decode, w.decode_tokens, {tenant: "decode-ab"});
  return {tps: decodeRate(r), tokens: r.tokens};
}
// Runs `leg` and measures the CPU that `idleCpu` reports over it.
async function timed(leg, idleCpu) {
  const c0 = idleCpu(), t0 = now();
  const r = await leg();
  const wall = (now() - t0) / 1000;
  return {...r, wall_s: wall, idle_cpu_s: idleCpu() - c0};
}

// Warm-up: every weight page of both engines in memory, both paths taken once.
await llamaLeg();
await reproxLeg();

const legs = {llama: [], reprox: []};
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? ["llama", "reprox"] : ["reprox", "llama"];
  for (const e of order) {
    legs[e].push(e === "llama" ? await timed(llamaLeg, () => cpuSeconds(pid)) : await timed(reproxLeg, ownCpuSeconds));
  }
  log(`round ${i + 1}/${rounds}: llama.cpp ${legs.llama[i].tps.toFixed(2)}, reprox ${legs.reprox[i].tps.toFixed(2)} tok/s ` +
    `(${(legs.reprox[i].tps / legs.llama[i].tps).toFixed(2)})`);
}
await ctx.dispose();
await model.dispose();

const ratios = legs.llama.map((l, i) => legs.reprox[i].tps / l.tps);
const sameEveryRound = (ls) => ls.every((l) => JSON.stringify(l.tokens) === JSON.stringify(ls[0].tokens));
const idleShare = (ls) => ls.reduce((a, l) => a + l.idle_cpu_s, 0) / ls.reduce((a, l) => a + l.wall_s, 0);
const out = {
  model: modelName, precision, threads, rounds, decode_tokens: w.decode_tokens, gguf,
  node_llama_cpp: JSON.parse(fs.readFileSync(new URL("./node_modules/node-llama-cpp/package.json", import.meta.url), "utf8")).version,
  llama_tps: legs.llama.map((l) => l.tps),
  reprox_tps: legs.reprox.map((l) => l.tps),
  ratios,
  ratio_median: median(ratios),
  ratio_min: Math.min(...ratios),
  ratio_max: Math.max(...ratios),
  llama_tps_median: median(legs.llama.map((l) => l.tps)),
  reprox_tps_median: median(legs.reprox.map((l) => l.tps)),
  reprox_cpu_share_while_llama_runs: idleShare(legs.llama),
  host_cpu_share_while_reprox_runs: idleShare(legs.reprox),
  llama_same_tokens_every_round: sameEveryRound(legs.llama),
  reprox_same_bytes_every_round: sameEveryRound(legs.reprox),
};
log(`ratio median ${out.ratio_median.toFixed(2)} (${out.ratio_min.toFixed(2)}–${out.ratio_max.toFixed(2)})`);
console.log(JSON.stringify(out));
