#!/usr/bin/env bash
# Replays one synthetic chat trace (trace.js) against five reprox set-ups and
# writes a Markdown report and SVG charts under benchmarks/workload/results/:
#   (a) the embedded engine, memory tier
#   (b) the embedded engine, memory tier + Redis
#   (c) the scripted upstream with realistic latency, memory tier
#   (d) the scripted upstream, memory tier + Redis
#   (e) the embedded engine with no cache and no KV reuse: the baseline for
#       engine time (--cache-bytes 0 --kv-budget 0)
# Each set-up starts fresh (reprox, and its own Redis or upstream) on free
# loopback ports, and is stopped after its replay.
#
#   benchmarks/workload/run_workload.sh [path/to/reprox]
#
# Environment:
#   REQUESTS (1500), CONCURRENCY (8), ZIPF (1.0), SEED (1), MAX_TOKENS (24),
#   and the other trace.js parameters (QUESTIONS, TENANTS, FAQ_SHARE,
#   STREAM_SHARE, NO_CACHE_SHARE, ABORT_SHARE, ACTIVE, MIN_TURNS, MAX_TURNS);
#   MAX_SECONDS (170): no request starts after this long in one set-up;
#   RUNS ("a b c d e"): the set-ups to run, in order;
#   FIRST_MS (300), CHUNK_MS (20): the upstream's delay to the first byte
#   and between chunks (its delay_first_ms and delay_chunk_ms directives,
#   sent in the body's `user` field, which is not part of the key);
#   REDIS_CACHE_BYTES: --cache-bytes for (b) and (d) (default: as (a); 0
#   serves every hit from Redis);
#   CHARTS ("a c"): the set-ups that get an SVG chart;
#   RESULTS (benchmarks/workload/results), NAME (DATE-HOST): output names;
#   SHARED (auto: yes when the load average is 0.5 or more at the start):
#   says in the report that other work shared the cores;
#   RAW (empty): a folder to keep the trace and the per-request records in.
# Needs: node, curl, redis-server and redis-cli (for b and d).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
reprox="${1:-$repo/build/reprox}"
[ -x "$reprox" ] || { echo "reprox binary not found: $reprox" >&2; exit 1; }
reprox="$(cd "$(dirname "$reprox")" && pwd)/$(basename "$reprox")"
runs="${RUNS:-a b c d e}"
concurrency="${CONCURRENCY:-8}"
max_seconds="${MAX_SECONDS:-170}"
first_ms="${FIRST_MS:-300}"
chunk_ms="${CHUNK_MS:-20}"
charts="${CHARTS:-a c}"
results="${RESULTS:-$here/results}"
for tool in node curl; do command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }; done
case " $runs " in *" b "*|*" d "*)
  for tool in redis-server redis-cli; do command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }; done ;;
esac

. "$repo/benchmarks/bench_lib.sh"

work="$(mktemp -d /tmp/reprox-workload.XXXXXX)"
pids=()
stop_pids() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
cleanup() { stop_pids; rm -rf "$work"; }
trap cleanup EXIT
export CLK_TCK="$(getconf CLK_TCK)" OMP_WAIT_POLICY=passive
: >"$work/empty.toml"  # no conf/reprox.toml from the working directory: defaults and flags only

load="$(cut -d' ' -f1 /proc/loadavg)"
shared="${SHARED:-$(awk -v l="$load" 'BEGIN { print (l >= 0.5) ? 1 : 0 }')}"
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
date="$(date +%F)"
host="$(hostname -s)"
name="${NAME:-$date-$host}"
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || true)"
if [ -n "$commit" ] && [ -n "$(git -C "$repo" status --porcelain --untracked-files=no -- . ':!benchmarks/workload' 2>/dev/null)" ]; then
  commit="$commit plus uncommitted changes"
fi

node "$here/trace.js" --out "$work/trace.jsonl"
echo "trace: $(($(wc -l <"$work/trace.jsonl") - 1)) requests; concurrency $concurrency; host: $cpu, $(nproc) cpus, load $load"

start_redis() {  # sets redis_url
  local port
  port="$(free_port)"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis-$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis-cli -p "$port" ping >/dev/null || { cat "$work/redis-$1.log" >&2; exit 1; }
  redis_url="redis://127.0.0.1:$port"
}
start_upstream() {  # sets upstream_url
  node "$repo/tests/proxy/backend/scripted_upstream.js" --port 0 >"$work/upstream-$1.log" 2>&1 &
  pids+=($!)
  upstream_url="http://127.0.0.1:$(wait_for_port "$work/upstream-$1.log" '^listening [0-9]+')"
}
start_reprox() {  # run flags...; sets reprox_pid, reprox_url
  local run=$1
  shift
  mkdir -p "$work/$run"
  (cd "$work/$run" && exec "$reprox" serve --config "$work/empty.toml" --listen 127.0.0.1:0 "$@") >"$work/reprox-$run.log" 2>&1 &
  reprox_pid=$!
  pids+=("$reprox_pid")
  reprox_url="http://127.0.0.1:$(wait_for_port "$work/reprox-$run.log" 'reprox listening on [^ ]+:[0-9]+')"
  for _ in $(seq 1 200); do curl -sf -o /dev/null "$reprox_url/healthz" && return 0; sleep 0.05; done
  echo "reprox did not become healthy:" >&2; cat "$work/reprox-$run.log" >&2; exit 1
}

runs_json=""
for run in $runs; do
  model="" user="" upstream_url="" redis_url="" label="" flags=()
  case "$run" in
    a) label="engine, memory tier" ;;
    b) label="engine, memory tier + Redis" ;;
    c) label="upstream (${first_ms} ms to first byte, ${chunk_ms} ms per chunk), memory tier" ;;
    d) label="upstream (${first_ms} ms to first byte, ${chunk_ms} ms per chunk), memory tier + Redis" ;;
    e) label="engine, no cache, no KV reuse (baseline)"; flags=(--cache-bytes 0 --kv-budget 0) ;;
    *) echo "unknown run: $run (a, b, c, d or e)" >&2; exit 1 ;;
  esac
  case "$run" in b|d)
    start_redis "$run"
    flags+=(--redis "$redis_url")
    if [ -n "${REDIS_CACHE_BYTES:-}" ]; then
      flags+=(--cache-bytes "$REDIS_CACHE_BYTES")
      label="${label/memory tier + Redis/memory tier of $REDIS_CACHE_BYTES bytes + Redis}"
    fi ;;
  esac
  case "$run" in c|d)
    start_upstream "$run"
    flags+=(--upstream "$upstream_url")
    model=scripted-model
    user="delay_first_ms=$first_ms;delay_chunk_ms=$chunk_ms;words=64" ;;
  esac
  start_reprox "$run" "${flags[@]}"
  # One warm-up request from a tenant the trace does not use: first-request
  # costs (engine pages, connection set-up) stay out of the figures.
  curl -sf -o /dev/null "$reprox_url/v1/chat/completions" -H 'Content-Type: application/json' \
    -H 'Authorization: Bearer warm-up' \
    -d "{\"messages\":[{\"role\":\"user\",\"content\":\"warm-up\"}],\"max_tokens\":4${model:+,\"model\":\"$model\"}}"
  echo "($run) $label"
  node "$here/replay.js" --trace "$work/trace.jsonl" --url "$reprox_url" --out "$work/run-$run.json" --name "$run" \
    --concurrency "$concurrency" --max-seconds "$max_seconds" --pid "$reprox_pid" \
    ${model:+--model "$model"} ${user:+--user "$user"} ${upstream_url:+--upstream "$upstream_url"}
  stop_pids
  shown="reprox serve${flags[*]:+ ${flags[*]}}"
  if [ -n "$redis_url" ]; then shown="${shown//$redis_url/redis://127.0.0.1:PORT}"; fi
  if [ -n "$upstream_url" ]; then shown="${shown//$upstream_url/http://127.0.0.1:PORT}"; fi
  chart=false
  case " $charts " in *" $run "*) chart=true ;; esac
  runs_json+="${runs_json:+,}\"$run\":{\"label\":\"$label\",\"command\":\"$shown\",\"chart\":$chart}"
done

mkdir -p "$results"
command_line="$(for v in REQUESTS CONCURRENCY ZIPF SEED MAX_TOKENS QUESTIONS TENANTS FAQ_SHARE STREAM_SHARE \
    NO_CACHE_SHARE ABORT_SHARE ACTIVE MIN_TURNS MAX_TURNS MAX_SECONDS RUNS FIRST_MS CHUNK_MS REDIS_CACHE_BYTES; do
  if [ -n "${!v:-}" ]; then
    case "${!v}" in *[!A-Za-z0-9._-]*) printf "%s='%s' " "$v" "${!v}" ;; *) printf '%s=%s ' "$v" "${!v}" ;; esac
  fi
done)benchmarks/workload/run_workload.sh"
M_DATE="$date" M_HOST="$host" M_CPU="$cpu" M_CPUS="$(nproc)" M_LOAD="$load" M_COMMIT="$commit" M_SHARED="$shared" \
M_COMMAND="$command_line" M_RUNS="{$runs_json}" node -e '
  const e = process.env;
  require("fs").writeFileSync(process.argv[1], JSON.stringify({
    date: e.M_DATE, host: e.M_HOST, cpu: e.M_CPU, cpus: Number(e.M_CPUS), load: e.M_LOAD, commit: e.M_COMMIT,
    shared: e.M_SHARED === "1", command: e.M_COMMAND, runs: JSON.parse(e.M_RUNS) }, null, 1));' "$work/meta.json"
echo
node "$here/report.js" --meta "$work/meta.json" --md "$results/$name.md" --svg-prefix "$results/$name" \
  $(for run in $runs; do echo "$work/run-$run.json"; done)
echo
echo "report: $results/$name.md"
if [ -n "${RAW:-}" ]; then mkdir -p "$RAW"; cp "$work"/trace.jsonl "$work"/run-*.json "$work"/meta.json "$RAW"/; fi
