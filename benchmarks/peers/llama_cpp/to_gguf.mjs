#!/usr/bin/env node
// Converts a Hugging Face Llama folder (config.json, model.safetensors,
// tokenizer.json, tokenizer_config.json, generation_config.json) into a GGUF
// file for llama.cpp's "llama" architecture, with F32, F16 or Q8_0 weights.
//
//   node to_gguf.mjs --model DIR --out FILE.gguf [--type f32|f16|q8_0]
//
// Layout (GGUF v3, little-endian): header, metadata key/values, tensor infos,
// padding to 32 bytes, tensor data (each tensor aligned to 32 bytes).
// Tensors are streamed one by one, so memory stays near the largest tensor.
//
// Conventions that must match llama.cpp:
// - q_proj/k_proj rows are permuted from the Hugging Face rotate-half rope
//   layout (pairs (i, i + d/2) of a head) to GGML's "normal" rope layout
//   (pairs (2i, 2i + 1)), as convert_hf_to_gguf.py does for Llama.
// - 1-D tensors (the RMSNorm weights) stay F32 at every type.
// - Q8_0: blocks of 32 values; d = max|x| / 127 stored as fp16, q = round(x / d)
//   as int8 (ggml's quantize_row_q8_0_ref: roundf(x * (1/d)), halves away from 0).
// - The tokenizer goes in as byte-level BPE: tokenizer.ggml.model = "gpt2",
//   with tokens, token types, merges and the pre-tokenizer name.
import fs from "node:fs";
import path from "node:path";

// ---------- arguments ----------
function parseArgs(argv) {
  const a = {type: "f32", pre: ""};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === "--model") a.model = v();
    else if (k === "--out") a.out = v();
    else if (k === "--type") a.type = v().toLowerCase();
    else if (k === "--pre") a.pre = v();
    else if (k === "--name") a.name = v();
    else if (k === "-h" || k === "--help") a.help = true;
    else throw new Error(`unknown argument ${k}`);
  }
  return a;
}

// ---------- GGUF constants ----------
const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
const GGUF_VERSION = 3;
const ALIGN = 32;
const VT = {UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9,
  UINT64: 10, INT64: 11, FLOAT64: 12};
const GGML = {F32: 0, F16: 1, Q8_0: 8};
const FILE_TYPE = {f32: 0, f16: 1, q8_0: 7}; // LLAMA_FTYPE_ALL_F32, MOSTLY_F16, MOSTLY_Q8_0
const TOKEN_TYPE = {NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6};
const QK8_0 = 32;

// ---------- little binary writer for the header ----------
class Bytes {
  constructor() { this.chunks = []; this.length = 0; }
  push(buf) { this.chunks.push(buf); this.length += buf.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v | 0); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  bool(v) { this.push(Buffer.from([v ? 1 : 0])); }
  str(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.push(b); }
  concat() { return Buffer.concat(this.chunks, this.length); }
}

function writeKV(w, key, type, value, arrayType) {
  w.str(key);
  w.u32(type);
  switch (type) {
    case VT.UINT32: w.u32(value); break;
    case VT.INT32: w.i32(value); break;
    case VT.FLOAT32: w.f32(value); break;
    case VT.BOOL: w.bool(value); break;
    case VT.STRING: w.str(value); break;
    case VT.ARRAY:
      w.u32(arrayType);
      w.u64(value.length);
      for (const x of value) {
        if (arrayType === VT.STRING) w.str(x);
        else if (arrayType === VT.INT32) w.i32(x);
        else if (arrayType === VT.UINT32) w.u32(x);
        else if (arrayType === VT.FLOAT32) w.f32(x);
        else throw new Error(`array type ${arrayType} not written`);
      }
      break;
    default: throw new Error(`value type ${type} not written`);
  }
}

// ---------- numbers ----------
const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);

// float32 -> IEEE half bits, round to nearest even (as numpy / ggml's F32->F16).
function f32ToF16Bits(val) {
  f32buf[0] = val;
  const x = u32buf[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf / nan
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) { // subnormal half (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++; // may carry into the exponent: still correct
  return sign | h;
}

function f16BitsToF32(h) {
  const s = (h & 0x8000) ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * Math.pow(2, -24);
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * Math.pow(2, e - 15);
}

function roundHalfAway(v) { return v < 0 ? -Math.round(-v) : Math.round(v); }

// ---------- safetensors ----------
function openSafetensors(dir) {
  const single = path.join(dir, "model.safetensors");
  const files = [];
  if (fs.existsSync(single)) files.push(single);
  else {
    const idx = JSON.parse(fs.readFileSync(path.join(dir, "model.safetensors.index.json"), "utf8"));
    for (const f of new Set(Object.values(idx.weight_map))) files.push(path.join(dir, f));
  }
  const tensors = new Map();
  for (const file of files) {
    const fd = fs.openSync(file, "r");
    const lenBuf = Buffer.alloc(8);
    fs.readSync(fd, lenBuf, 0, 8, 0);
    const n = Number(lenBuf.readBigUInt64LE(0));
    const hdr = Buffer.alloc(n);
    fs.readSync(fd, hdr, 0, n, 8);
    const meta = JSON.parse(hdr.toString("utf8"));
    for (const [name, t] of Object.entries(meta)) {
      if (name === "__metadata__") continue;
      tensors.set(name, {fd, dtype: t.dtype, shape: t.shape, begin: 8 + n + t.data_offsets[0],
        bytes: t.data_offsets[1] - t.data_offsets[0]});
    }
  }
  return tensors;
}

function readBig(fd, bytes, pos) {
  const buf = Buffer.allocUnsafe(bytes);
  let off = 0;
  while (off < bytes) {
    const n = fs.readSync(fd, buf, off, Math.min(bytes - off, 1 << 30), pos + off);
    if (n <= 0) throw new Error("short read");
    off += n;
  }
  return buf;
}

function readAsF32(t) {
  const buf = readBig(t.fd, t.bytes, t.begin);
  const count = t.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(count);
  if (t.dtype === "F32") {
    out.set(new Float32Array(buf.buffer, buf.byteOffset, count));
  } else if (t.dtype === "F16") {
    for (let i = 0; i < count; i++) out[i] = f16BitsToF32(buf.readUInt16LE(2 * i));
  } else if (t.dtype === "BF16") {
    const u = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) u[i] = buf.readUInt16LE(2 * i) << 16;
  } else {
    throw new Error(`unsupported safetensors dtype ${t.dtype}`);
  }
  return out;
}

// HF rotate-half rows -> GGML normal-rope rows, per head:
// w.reshape(n_head, 2, hd/2, cols).swapaxes(1, 2).reshape(rows, cols)
function permuteRows(w, rows, cols, nHead) {
  const hd = rows / nHead;
  if (!Number.isInteger(hd) || hd % 2) throw new Error(`cannot permute ${rows} rows over ${nHead} heads`);
  const half = hd / 2;
  const out = new Float32Array(w.length);
  for (let h = 0; h < nHead; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const dst = h * hd + i * 2 + j;
        const src = h * hd + j * half + i;
        out.set(w.subarray(src * cols, (src + 1) * cols), dst * cols);
      }
    }
  }
  return out;
}

function encode(data, ggmlType) {
  if (ggmlType === GGML.F32) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (ggmlType === GGML.F16) {
    const out = Buffer.allocUnsafe(data.length * 2);
    for (let i = 0; i < data.length; i++) out.writeUInt16LE(f32ToF16Bits(data[i]), 2 * i);
    return out;
  }
  if (ggmlType === GGML.Q8_0) {
    if (data.length % QK8_0) throw new Error("Q8_0 needs a multiple of 32 values per row");
    const nb = data.length / QK8_0;
    const out = Buffer.allocUnsafe(nb * (2 + QK8_0));
    for (let b = 0; b < nb; b++) {
      const base = b * QK8_0;
      let amax = 0;
      for (let k = 0; k < QK8_0; k++) amax = Math.max(amax, Math.abs(data[base + k]));
      f32buf[0] = amax / 127; // computed in float like ggml
      const d = f32buf[0];
      f32buf[0] = d ? 1 / d : 0;
      const id = f32buf[0];
      const o = b * (2 + QK8_0);
      out.writeUInt16LE(f32ToF16Bits(d), o);
      for (let k = 0; k < QK8_0; k++) {
        f32buf[0] = data[base + k] * id;
        out.writeInt8(Math.max(-128, Math.min(127, roundHalfAway(f32buf[0]))), o + 2 + k);
      }
    }
    return out;
  }
  throw new Error(`ggml type ${ggmlType}`);
}

function encodedBytes(count, ggmlType) {
  if (ggmlType === GGML.F32) return count * 4;
  if (ggmlType === GGML.F16) return count * 2;
  return (count / QK8_0) * (2 + QK8_0);
}

// ---------- tokenizer ----------
function looksSpecial(t) {
  return (t.startsWith("<|") && t.endsWith("|>")) || ["<pad>", "<mask>", "<unk>", "<s>", "</s>"].includes(t);
}

function buildVocab(dir, vocabSize) {
  const tj = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  if (tj.model.type !== "BPE") throw new Error(`tokenizer model ${tj.model.type}: only byte-level BPE is converted`);
  const tokens = new Array(vocabSize);
  const types = new Array(vocabSize).fill(TOKEN_TYPE.NORMAL);
  for (const [tok, id] of Object.entries(tj.model.vocab)) if (id < vocabSize) tokens[id] = tok;
  for (const a of tj.added_tokens || []) {
    if (a.id >= vocabSize) continue;
    tokens[a.id] = a.content;
    types[a.id] = a.special || looksSpecial(a.content) ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED;
  }
  for (let i = 0; i < vocabSize; i++) {
    if (tokens[i] === undefined) { tokens[i] = `[PAD${i}]`; types[i] = TOKEN_TYPE.UNUSED; }
  }
  const merges = (tj.model.merges || []).map((m) => (Array.isArray(m) ? m.join(" ") : m));
  // The pre-tokenizer regex decides llama.cpp's "pre" name. Qwen2/Qwen3 split
  // digits one by one with \p{N}; GPT-2 uses the classic 's|'t|... pattern.
  const pre = JSON.stringify(tj.pre_tokenizer || {});
  let preName = "gpt2";
  if (pre.includes("\\p{N}") && pre.includes("(?i:'s|'t|'re|'ve|'m|'ll|'d)")) {
    preName = pre.includes("\\p{N}{1,3}") ? "llama-bpe" : "qwen2";
  } else if (pre.includes("\\p{N}{1,3}")) preName = "llama-bpe";
  const idOf = new Map();
  for (let i = 0; i < vocabSize; i++) if (!idOf.has(tokens[i])) idOf.set(tokens[i], i);
  return {tokens, types, merges, preName, idOf, tj};
}

// ---------- main ----------
function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help || !args.model || !args.out) {
    console.error("usage: node to_gguf.mjs --model HF_DIR --out FILE.gguf [--type f32|f16|q8_0] [--pre NAME] [--name NAME]");
    process.exit(args.help ? 0 : 2);
  }
  if (!(args.type in FILE_TYPE)) throw new Error(`--type ${args.type}: f32, f16 or q8_0`);
  const dir = args.model;
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
  const tcfg = fs.existsSync(path.join(dir, "tokenizer_config.json"))
    ? JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")) : {};
  const gcfg = fs.existsSync(path.join(dir, "generation_config.json"))
    ? JSON.parse(fs.readFileSync(path.join(dir, "generation_config.json"), "utf8")) : {};
  if (!["llama", "mistral"].includes(cfg.model_type)) throw new Error(`model_type ${cfg.model_type}: only llama is converted`);
  if (cfg.rope_scaling) throw new Error("rope_scaling is not converted");
  if (cfg.attention_bias || cfg.mlp_bias) throw new Error("biases are not converted");

  const nEmbd = cfg.hidden_size, nHead = cfg.num_attention_heads, nKv = cfg.num_key_value_heads ?? nHead;
  const headDim = cfg.head_dim ?? nEmbd / nHead;
  const nLayer = cfg.num_hidden_layers;
  const st = openSafetensors(dir);
  const vocabSize = st.get("model.embed_tokens.weight").shape[0];
  const tied = !st.has("lm_head.weight");

  const v = buildVocab(dir, vocabSize);
  const preName = args.pre || v.preName;
  const tokId = (x) => (x == null ? undefined : typeof x === "string" ? v.idOf.get(x) : x.content ? v.idOf.get(x.content) : x);
  const firstId = (x) => (Array.isArray(x) ? x[0] : x);
  const eos = tokId(tcfg.eos_token) ?? firstId(gcfg.eos_token_id) ?? firstId(cfg.eos_token_id);
  const bos = tokId(tcfg.bos_token) ?? firstId(gcfg.bos_token_id) ?? cfg.bos_token_id;
  const pad = tokId(tcfg.pad_token);

  // ---- tensor plan ----
  const wt = {f32: GGML.F32, f16: GGML.F16, q8_0: GGML.Q8_0}[args.type];
  const plan = []; // {name, src, shape (HF row-major), type, permuteHeads}
  const add = (name, src, permuteHeads = 0) => {
    const t = st.get(src);
    if (!t) throw new Error(`missing tensor ${src}`);
    const type = t.shape.length === 1 ? GGML.F32 : wt;
    plan.push({name, src, shape: t.shape, type, permuteHeads});
  };
  add("token_embd.weight", "model.embed_tokens.weight");
  for (let i = 0; i < nLayer; i++) {
    const p = `model.layers.${i}.`;
    add(`blk.${i}.attn_norm.weight`, p + "input_layernorm.weight");
    add(`blk.${i}.attn_q.weight`, p + "self_attn.q_proj.weight", nHead);
    add(`blk.${i}.attn_k.weight`, p + "self_attn.k_proj.weight", nKv);
    add(`blk.${i}.attn_v.weight`, p + "self_attn.v_proj.weight");
    add(`blk.${i}.attn_output.weight`, p + "self_attn.o_proj.weight");
    add(`blk.${i}.ffn_norm.weight`, p + "post_attention_layernorm.weight");
    add(`blk.${i}.ffn_gate.weight`, p + "mlp.gate_proj.weight");
    add(`blk.${i}.ffn_up.weight`, p + "mlp.up_proj.weight");
    add(`blk.${i}.ffn_down.weight`, p + "mlp.down_proj.weight");
  }
  add("output_norm.weight", "model.norm.weight");
  if (!tied) add("output.weight", "lm_head.weight");

  // ---- metadata ----
  const w = new Bytes();
  const kvs = [];
  const kv = (key, type, value, arrayType) => kvs.push([key, type, value, arrayType]);
  kv("general.architecture", VT.STRING, "llama");
  kv("general.name", VT.STRING, args.name || path.basename(path.resolve(dir)));
  kv("general.file_type", VT.UINT32, FILE_TYPE[args.type]);
  if (args.type === "q8_0") kv("general.quantization_version", VT.UINT32, 2);
  kv("llama.context_length", VT.UINT32, cfg.max_position_embeddings);
  kv("llama.embedding_length", VT.UINT32, nEmbd);
  kv("llama.block_count", VT.UINT32, nLayer);
  kv("llama.feed_forward_length", VT.UINT32, cfg.intermediate_size);
  kv("llama.rope.dimension_count", VT.UINT32, headDim);
  kv("llama.attention.head_count", VT.UINT32, nHead);
  kv("llama.attention.head_count_kv", VT.UINT32, nKv);
  kv("llama.attention.key_length", VT.UINT32, headDim);
  kv("llama.attention.value_length", VT.UINT32, headDim);
  kv("llama.attention.layer_norm_rms_epsilon", VT.FLOAT32, cfg.rms_norm_eps);
  kv("llama.rope.freq_base", VT.FLOAT32, cfg.rope_theta ?? 10000);
  kv("llama.vocab_size", VT.UINT32, vocabSize);
  kv("tokenizer.ggml.model", VT.STRING, "gpt2");
  kv("tokenizer.ggml.pre", VT.STRING, preName);
  kv("tokenizer.ggml.tokens", VT.ARRAY, v.tokens, VT.STRING);
  kv("tokenizer.ggml.token_type", VT.ARRAY, v.types, VT.INT32);
  kv("tokenizer.ggml.merges", VT.ARRAY, v.merges, VT.STRING);
  if (bos != null) kv("tokenizer.ggml.bos_token_id", VT.UINT32, bos);
  if (eos != null) kv("tokenizer.ggml.eos_token_id", VT.UINT32, eos);
  if (pad != null) kv("tokenizer.ggml.padding_token_id", VT.UINT32, pad);
  kv("tokenizer.ggml.add_bos_token", VT.BOOL, tcfg.add_bos_token === true);
  kv("tokenizer.ggml.add_eos_token", VT.BOOL, tcfg.add_eos_token === true);
  if (typeof tcfg.chat_template === "string") kv("tokenizer.chat_template", VT.STRING, tcfg.chat_template);

  w.u32(GGUF_MAGIC);
  w.u32(GGUF_VERSION);
  w.u64(plan.length);
  w.u64(kvs.length);
  for (const [k, t, val, at] of kvs) writeKV(w, k, t, val, at);

  let offset = 0;
  for (const p of plan) {
    const count = p.shape.reduce((a, b) => a * b, 1);
    p.bytes = encodedBytes(count, p.type);
    p.offset = offset;
    offset += Math.ceil(p.bytes / ALIGN) * ALIGN;
    w.str(p.name);
    w.u32(p.shape.length);
    for (const d of [...p.shape].reverse()) w.u64(d); // ggml ne[0] is the innermost (row) size
    w.u32(p.type);
    w.u64(p.offset);
  }
  const header = w.concat();
  const pad0 = (ALIGN - (header.length % ALIGN)) % ALIGN;

  const tmp = args.out + ".part";
  const fd = fs.openSync(tmp, "w");
  const writeAll = (buf) => {
    let off = 0;
    while (off < buf.length) off += fs.writeSync(fd, buf, off, Math.min(buf.length - off, 1 << 30));
  };
  writeAll(header);
  writeAll(Buffer.alloc(pad0));
  let weightBytes = 0;
  const t0 = Date.now();
  for (const p of plan) {
    const t = st.get(p.src);
    let data = readAsF32(t);
    if (p.permuteHeads) data = permuteRows(data, p.shape[0], p.shape[1], p.permuteHeads);
    const enc = encode(data, p.type);
    if (enc.length !== p.bytes) throw new Error(`size mismatch for ${p.name}`);
    writeAll(enc);
    writeAll(Buffer.alloc(Math.ceil(p.bytes / ALIGN) * ALIGN - p.bytes));
    weightBytes += p.bytes;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, args.out);
  const info = {out: args.out, type: args.type, tensors: plan.length, weight_bytes: weightBytes,
    file_bytes: fs.statSync(args.out).size, vocab: vocabSize, pre: preName, bos, eos, tied, seconds: (Date.now() - t0) / 1000};
  console.log(JSON.stringify(info));
}

try {
  main();
} catch (e) {
  console.error(`to_gguf: ${e.message}`);
  process.exit(1);
}
