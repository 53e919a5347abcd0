#!/usr/bin/env bash
# Cache-hit throughput of reprox side by side with nginx serving the same
# answer bytes as a static file, with the same wrk settings in the same run.
#
#   benchmarks/proxy/run_hit_bench.sh [path/to/reprox]
#
# Environment: DURATION (10s), CONNECTIONS (64), ROUNDS (1; alternates
# nginx/reprox each round), SERVER_CPU (0) and WRK_CPU (1) for taskset
# pinning: one core of server each side, wrk on the other core.
# Needs: wrk, nginx, node, curl, taskset.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
reprox="${1:-$repo/build/reprox}"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"
rounds="${ROUNDS:-1}"
server_cpu="${SERVER_CPU:-0}"
wrk_cpu="${WRK_CPU:-1}"
script="$here/hit.lua"

[ -x "$reprox" ] || { echo "reprox binary not found: $reprox" >&2; exit 1; }
reprox="$(cd "$(dirname "$reprox")" && pwd)/$(basename "$reprox")"
for tool in wrk nginx node curl taskset; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }
done

work="$(mktemp -d /tmp/reprox-hit-bench.XXXXXX)"
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

. "$repo/benchmarks/bench_lib.sh"

# 1. The scripted upstream and reprox (one I/O thread, pinned to one core).
node "$repo/tests/proxy/backend/scripted_upstream.js" --port 0 >"$work/upstream.log" 2>&1 &
pids+=($!)
upstream_port="$(wait_for_port "$work/upstream.log" '^listening [0-9]+')"

printf '[server]\nthreads = 1\n' >"$work/reprox.toml"
(cd "$work" && exec taskset -c "$server_cpu" "$reprox" serve --config "$work/reprox.toml" --threads 1 \
   --listen 127.0.0.1:0 --upstream "http://127.0.0.1:$upstream_port") >"$work/reprox.log" 2>&1 &
pids+=($!)
reprox_port="$(wait_for_port "$work/reprox.log" 'reprox listening on [^ ]+:[0-9]+')"

# 2. Warm the cache and keep the exact answer bytes of a hit for nginx.
export REPROX_BENCH_BODY_FILE="$here/hit_body.json"
body="$(cat "$REPROX_BENCH_BODY_FILE")"
curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-key' \
  --data-binary "$body" "http://127.0.0.1:$reprox_port/v1/chat/completions"
curl -sf -D "$work/hit.headers" -o "$work/answer.json" -X POST -H 'Content-Type: application/json' \
  -H 'Authorization: Bearer bench-key' --data-binary "$body" "http://127.0.0.1:$reprox_port/v1/chat/completions"
grep -qi '^x-reprox-cache: hit' "$work/hit.headers" || { echo "warm-up did not give a hit:" >&2; cat "$work/hit.headers" >&2; exit 1; }
chmod 644 "$work/answer.json"

# 3. nginx: one worker, the same bytes as a static file with the same
# content type.
nginx_port="$(free_port)"
nginx_static_conf "$work/nginx" "$nginx_port" "$work/answer.json" 1 >"$work/nginx.conf"
taskset -c "$server_cpu" nginx -p "$work/nginx" -c "$work/nginx.conf" >"$work/nginx.out" 2>&1 &
pids+=($!)
nginx_serves "$work/nginx" "$nginx_port" "$body" "$work/answer.json" || { cat "$work/nginx.out" >&2; exit 1; }

# 4. Benchmark: the same wrk settings for both, after a warm-up each.
to_ms() {  # wrk latency like 512.00us, 1.20ms, 1.01s
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
run_wrk() {  # name port
  taskset -c "$wrk_cpu" wrk -t1 -c"$connections" -d2s -s "$script" "http://127.0.0.1:$2" >/dev/null
  taskset -c "$wrk_cpu" wrk -t1 -c"$connections" -d"$duration" --latency -s "$script" "http://127.0.0.1:$2" >"$work/$1.wrk"
  local rps p50 p99 bad
  rps="$(awk '/^Requests\/sec:/ {print $2}' "$work/$1.wrk")"
  p50="$(to_ms "$(awk '$1 == "50%" {print $2}' "$work/$1.wrk")")"
  p99="$(to_ms "$(awk '$1 == "99%" {print $2}' "$work/$1.wrk")")"
  bad="$(awk '/^  Non-2xx or 3xx responses:/ {print $5}' "$work/$1.wrk")"
  printf '%-7s req/s %10.0f   p50 %7.3f ms   p99 %7.3f ms   non-2xx %s\n' "$1" "$rps" "$p50" "$p99" "${bad:-0}"
  eval "${1}_rps=$rps"
}

echo "answer: $(wc -c <"$work/answer.json") bytes; wrk -t1 -c$connections -d$duration --latency; server on cpu $server_cpu, wrk on cpu $wrk_cpu"
for round in $(seq 1 "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "round $round"
  run_wrk nginx "$nginx_port"
  run_wrk reprox "$reprox_port"
  awk -v r="$reprox_rps" -v n="$nginx_rps" 'BEGIN { printf "ratio reprox/nginx: %.3f\n", r / n }'
done
