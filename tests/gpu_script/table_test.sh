#!/usr/bin/env bash
# table_test.sh SOURCE_DIR REPROX BENCH_GPU WORK_DIR
# Runs the GPU benchmark twice on the CPU (processes a and b, as
# run_on_device.sh does), leaves the no-graphs log and the step log out (a
# run cut short), and checks what table.sh makes of it.
set -euo pipefail
src=$1 reprox=$2 bench=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
fail() { echo "FAIL: $*" >&2; echo "--- table:" >&2; cat "$work/out/table.md" >&2; exit 1; }

"$reprox" make-tiny-model --out "$work/tiny" --max-positions 256 >/dev/null
: >"$work/out/host.txt"
echo "model name : a CPU" >>"$work/out/host.txt"
common=(--model "$work/tiny" --device cpu --dtype bfloat16 --threads 1 --tokens 4 --prompt 8 --reps 1
        --digest-set 2 --bandwidth-mib 16)
"$bench" "${common[@]}" --concurrency 1,8 >"$work/out/tiny.a.txt" 2>&1
"$bench" "${common[@]}" --concurrency 1 --compare 4 --compare-batch 2 --compare-tokens 2 >"$work/out/tiny.b.txt" 2>&1
cp "$work/out/tiny.a.txt" "$work/out/tiny.g.txt"
bash "$src/benchmarks/gpu/table.sh" "$work/out" tiny >"$work/out/table.md"

# The cells as the benchmark printed them.
cell() { awk -F'|' -v c="$1" -v col="$(($2 + 1))" '$2 + 0 == c && $2 ~ /[0-9]/ { gsub(/ /, "", $col); print $col; exit }' \
  "$work/out/tiny.a.txt"; }
one="$(cell 1 2)" bound_ratio="$(cell 1 4)" eight="$(cell 8 2)" ttft="$(cell 1 6)"
[[ -n $one && -n $eight && -n $ttft ]] || fail "the benchmark printed no speed table"
row="$(grep '^| tiny |' "$work/out/table.md")" || fail "no row for the model"
IFS='|' read -r -a cells <<<"$row"
trim() { local v=$1; v="${v#"${v%%[! ]*}"}"; echo "${v%"${v##*[! ]}"}"; }
[[ $(trim "${cells[4]}") == "$one" ]] || fail "batch 1 tok/s: '${cells[4]}', the log says $one"
[[ $(trim "${cells[5]}") == "$bound_ratio" ]] || fail "vs bound: '${cells[5]}', the log says $bound_ratio"
[[ $(trim "${cells[6]}") == "$eight" ]] || fail "8 concurrent: '${cells[6]}', the log says $eight"
[[ $(trim "${cells[7]}") == "-" ]] || fail "32 concurrent was not run, yet the table has '${cells[7]}'"
[[ $(trim "${cells[9]}") == "$ttft" ]] || fail "TTFT: '${cells[9]}', the log says $ttft"
weights="$(awk '/^weights/ { print $2; exit }' "$work/out/tiny.a.txt")"
[[ $(trim "${cells[2]}") == "$weights" ]] || fail "weights: '${cells[2]}', the log says $weights"
# Two processes on the same CPU, build and requests: the same bytes.
[[ $(trim "${cells[10]}") == "yes / yes" ]] || fail "digests across processes: '${cells[10]}'"
[[ $(trim "${cells[11]}") =~ ^[0-4]\ of\ 4$ ]] || fail "alone vs in a group: '${cells[11]}'"
# The logs a run cut short never wrote.
grep -q '^| tiny, no CUDA graphs | [^|]* | [^|]* | - |' "$work/out/table.md" || fail "no-graphs row without its log"
grep -q "^| tiny, greedy | [^|]* | [^|]* | $one | " "$work/out/table.md" || fail "the greedy row does not read its log"
grep -q '^(no log)$' "$work/out/table.md" || fail "the missing step log is not named"
grep -q 'recording a CUDA graph failed' "$work/out/table.md" && fail "a graph failure line with no failure"
# A recording failure in a log shows under the table.
echo "reprox: recording a CUDA graph failed; decode steps run eagerly from now on: test" >>"$work/out/tiny.a.txt"
bash "$src/benchmarks/gpu/table.sh" "$work/out" tiny >"$work/out/table.md"
grep -q '^tiny: reprox: recording a CUDA graph failed' "$work/out/table.md" || fail "the graph failure is not shown"
echo "ok"
