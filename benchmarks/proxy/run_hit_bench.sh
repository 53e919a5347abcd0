#!/usr/bin/env bash
# Cache-hit throughput of reprox side by side with two nginx anchors serving
# the same answer bytes, with the same wrk settings in the same run:
#   nginx-file    the bytes as a static file (open, stat, sendfile)
#   nginx-return  the bytes from memory (`return 200 '...'`), the harder one
# and reprox twice: with no rules, and with hit_rules.toml (eight
# [[cache.rule]] tables none of which matches, and hot keys on).
#
#   benchmarks/proxy/run_hit_bench.sh [path/to/reprox]
#
# Environment: DURATION (10s), CONNECTIONS (64), ROUNDS (1; every server
# once per round, in turn), PIN (1): 1 pins each server to SERVER_CPU (0)
# and wrk to WRK_CPU (1) with taskset; 0 pins nothing (as a new user would
# run them). One nginx worker, one reprox I/O thread either way.
# Needs: wrk, nginx, node, curl, taskset.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
reprox="${1:-$repo/build/reprox}"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"
rounds="${ROUNDS:-1}"
pin="${PIN:-1}"
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

# Servers start as background jobs through this: exec, so that $! is the
# server itself and the cleanup stops it.
on_server_cpu() { if [ "$pin" = 1 ]; then exec taskset -c "$server_cpu" "$@"; else exec "$@"; fi; }
on_wrk_cpu() { if [ "$pin" = 1 ]; then taskset -c "$wrk_cpu" "$@"; else "$@"; fi; }

# 1. The scripted upstream and two reprox instances (one I/O thread each):
# no rules, and the rules of hit_rules.toml.
node "$repo/tests/proxy/backend/scripted_upstream.js" --port 0 >"$work/upstream.log" 2>&1 &
pids+=($!)
upstream_port="$(wait_for_port "$work/upstream.log" '^listening [0-9]+')"

printf '[server]\nthreads = 1\n' >"$work/reprox.toml"
start_reprox() {  # name config; sets port
  (cd "$work" && on_server_cpu "$reprox" serve --config "$2" --threads 1 --listen 127.0.0.1:0 \
     --upstream "http://127.0.0.1:$upstream_port") >"$work/$1.log" 2>&1 &
  pids+=($!)
  port="$(wait_for_port "$work/$1.log" 'reprox listening on [^ ]+:[0-9]+')"
}
start_reprox reprox "$work/reprox.toml"
reprox_port=$port
start_reprox rules "$here/hit_rules.toml"
rules_port=$port

# 2. Warm both caches and keep the exact answer bytes of a hit for nginx.
export REPROX_BENCH_BODY_FILE="$here/hit_body.json"
body="$(cat "$REPROX_BENCH_BODY_FILE")"
warm() {  # port answer-file
  curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-key' \
    --data-binary "$body" "http://127.0.0.1:$1/v1/chat/completions"
  curl -sf -D "$work/hit.headers" -o "$2" -X POST -H 'Content-Type: application/json' \
    -H 'Authorization: Bearer bench-key' --data-binary "$body" "http://127.0.0.1:$1/v1/chat/completions"
  grep -qi '^x-reprox-cache: hit' "$work/hit.headers" || { echo "warm-up did not give a hit:" >&2; cat "$work/hit.headers" >&2; exit 1; }
}
warm "$reprox_port" "$work/answer.json"
warm "$rules_port" "$work/answer-rules.json"
chmod 644 "$work/answer.json"

# 3. nginx, one worker each: the same bytes as a static file, and from
# memory, with the same content type.
start_nginx() {  # name conf-function; sets port
  port="$(free_port)"
  "$2" "$work/$1" "$port" "$work/answer.json" 1 >"$work/$1.conf"
  on_server_cpu nginx -p "$work/$1" -c "$work/$1.conf" >"$work/$1.out" 2>&1 &
  pids+=($!)
  nginx_serves "$work/$1" "$port" "$body" "$work/answer.json" || { cat "$work/$1.out" >&2; exit 1; }
}
start_nginx nginx nginx_static_conf
nginx_port=$port
start_nginx nginx_return nginx_return_conf
nginx_return_port=$port

# 4. Benchmark: the same wrk settings for both, after a warm-up each.
to_ms() {  # wrk latency like 512.00us, 1.20ms, 1.01s
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
run_wrk() {  # name variable port: prints a line, sets ${variable}_rps
  local var=$2
  set -- "$1" "$3"
  on_wrk_cpu wrk -t1 -c"$connections" -d2s -s "$script" "http://127.0.0.1:$2" >/dev/null
  on_wrk_cpu wrk -t1 -c"$connections" -d"$duration" --latency -s "$script" "http://127.0.0.1:$2" >"$work/$1.wrk"
  local rps p50 p99 bad
  rps="$(awk '/^Requests\/sec:/ {print $2}' "$work/$1.wrk")"
  p50="$(to_ms "$(awk '$1 == "50%" {print $2}' "$work/$1.wrk")")"
  p99="$(to_ms "$(awk '$1 == "99%" {print $2}' "$work/$1.wrk")")"
  bad="$(awk '/^  Non-2xx or 3xx responses:/ {print $5}' "$work/$1.wrk")"
  printf '%-13s req/s %10.0f   p50 %7.3f ms   p99 %7.3f ms   non-2xx %s\n' "$1" "$rps" "$p50" "$p99" "${bad:-0}"
  printf -v "${var}_rps" '%s' "$rps"
}

where="unpinned"
[ "$pin" = 1 ] && where="servers on cpu $server_cpu, wrk on cpu $wrk_cpu"
echo "answer: $(wc -c <"$work/answer.json") bytes; wrk -t1 -c$connections -d$duration --latency; $where"
echo "host: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cpus"
# Each round runs the four servers in a rotated order (placement and warmth
# favour no one) and prints its ratios; the medians over rounds close.
servers=("nginx-file nginx_file $nginx_port" "nginx-return nginx_return $nginx_return_port"
         "reprox reprox $reprox_port" "reprox-rules reprox_rules $rules_port")
ratios=()
for round in $(seq 1 "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "round $round"
  for i in 0 1 2 3; do
    # shellcheck disable=SC2086
    run_wrk ${servers[$(( (i + round - 1) % 4 ))]}
  done
  line="$(awk -v r="$reprox_rps" -v rr="$reprox_rules_rps" -v f="$nginx_file_rps" -v m="$nginx_return_rps" \
    'BEGIN { printf "%.3f %.3f %.3f %.3f", r / f, r / m, rr / m, rr / r }')"
  ratios+=("$line")
  read -r a b c d <<<"$line"
  echo "ratio reprox/nginx-file: $a   reprox/nginx-return: $b   reprox-rules/nginx-return: $c   rules/no-rules: $d"
done
if [ "$rounds" -gt 1 ]; then
  printf '%s\n' "${ratios[@]}" | awk '
    { for (i = 1; i <= 4; i++) v[i, NR] = $i }
    END {
      split("reprox/nginx-file reprox/nginx-return reprox-rules/nginx-return rules/no-rules", name, " ")
      printf "median over %d rounds:", NR
      for (i = 1; i <= 4; i++) {
        n = 0
        for (r = 1; r <= NR; r++) a[++n] = v[i, r]
        for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
        m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        printf "   %s %.3f", name[i], m
      }
      printf "\n"
    }'
fi
