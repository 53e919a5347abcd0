// Prints the table of interleaved decode runs (decode_ab.mjs's JSON lines).
//
//   node report_ab.mjs FILE.jsonl
import fs from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: node report_ab.mjs FILE.jsonl");
  process.exit(2);
}
const rows = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const f = (x, d = 2) => Number(x).toFixed(d);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
console.log("## Decode, interleaved (reprox / llama.cpp per round)\n");
console.log("| model | weights | threads | rounds | llama.cpp tok/s | reprox tok/s | ratio, median | ratio, range | " +
  "reprox CPU while llama.cpp runs | host CPU while reprox runs | same tokens every round (llama.cpp / reprox) |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) {
  console.log(`| ${r.model} | ${r.precision} | ${r.threads} | ${r.rounds} | ${f(r.llama_tps_median)} | ${f(r.reprox_tps_median)} | ` +
    `**${f(r.ratio_median)}** | ${f(r.ratio_min)}–${f(r.ratio_max)} | ${pct(r.reprox_cpu_share_while_llama_runs)} | ` +
    `${pct(r.host_cpu_share_while_reprox_runs)} | ${r.llama_same_tokens_every_round ? "yes" : "no"} / ` +
    `${r.reprox_same_bytes_every_round ? "yes" : "no"} |`);
}
console.log(`\nEach round decodes ${rows[0]?.decode_tokens ?? "?"} greedy tokens on each engine, the order alternating ` +
  "round by round; tok/s are the medians of the rounds. llama.cpp through node-llama-cpp " +
  `${rows[0]?.node_llama_cpp ?? "?"}, in the same process as the client.`);
