#!/usr/bin/env bash
# Cache-hit throughput through the Redis tier, against Redis itself.
#
#   benchmarks/redis/run_redis_bench.sh [REPROX_BIN]
#   env: CONNECTIONS (16), DURATION (10s), THREADS (wrk threads, 1: one client
#        thread, as redis-benchmark has), ROUNDS (3),
#        WORDS (filler words per answer, 200), REPROX_THREADS (reprox I/O threads; default: reprox's),
#        REDIS_UNIX (1: reprox and redis-benchmark both reach Redis over its unix
#        socket instead of loopback TCP; wrk still speaks HTTP over TCP),
#        REPROX_ARGS (more `reprox serve` arguments for both instances, e.g.
#        "--config off.toml" with `[redis] io_lookups = false`)
#
# Starts one redis-server (free port, no persistence), the scripted upstream
# and two reprox instances with --redis: "L2 only" with --cache-bytes 0 (the
# memory tier stores nothing, so every hit is read from Redis) and "L1+L2"
# (default memory tier). One request is stored, then wrk replays it (all
# hits) against each instance; redis-benchmark GETs a value of the stored
# entry's size with the same concurrency on the same server. Prints, per
# round, req/s, p50/p99 and the ratios reprox(L2 only)/redis GET and
# reprox(L1+L2)/redis GET, then the median ratios over the rounds.
# A second anchor shows the floor that HTTP itself sets on this box: nginx
# (NGINX_WORKERS workers, default: reprox's I/O threads, i.e. the CPUs)
# serving the same answer bytes from a file to the same wrk client; nginx
# does no lookup at all, so nginx/redis GET bounds what any HTTP front end
# of Redis can reach here.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPROX_BIN=$(realpath "${1:-${REPROX_BIN:-$ROOT/build/reprox}}")
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
WORDS=${WORDS:-200}
for tool in redis-server redis-cli redis-benchmark wrk node curl nginx; do
  command -v $tool >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
[ -x "$REPROX_BIN" ] || { echo "reprox binary not found: $REPROX_BIN (pass it as the first argument)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/reprox-redis-bench-XXXXXX)
. "$ROOT/benchmarks/bench_lib.sh"
PIDS=()
cleanup() {
  # start_reprox runs in a command substitution (a subshell): its pids are in files.
  for f in "$WORK"/*.pid; do [ -f "$f" ] && PIDS+=("$(cat "$f")"); done
  # nginx's master stops its workers on TERM (a kill -9 would orphan them).
  if [ -n "${NGINX_PID:-}" ]; then
    kill -TERM "$NGINX_PID" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.05; done
  fi
  stop_all "$WORK" "${PIDS[@]}"
}
trap cleanup EXIT

REDIS_PORT=$(free_port)
REDIS_SOCK="$WORK/redis.sock"
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
RB_TARGET=(-p "$REDIS_PORT")
if [ "${REDIS_UNIX:-0}" = 1 ]; then REDIS_URL="unix://$REDIS_SOCK"; RB_TARGET=(-s "$REDIS_SOCK"); fi
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --unixsocket "$REDIS_SOCK" --save '' --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && break; sleep 0.05; done

node "$ROOT/tests/proxy/backend/scripted_upstream.js" --port 0 >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
UP_PORT=$(wait_for_port "$WORK/upstream.log" 'listening [0-9]+')

start_reprox() {  # name extra-args...
  local name=$1; shift
  local extra=()
  [ -n "${REPROX_THREADS:-}" ] && extra+=(--threads "$REPROX_THREADS")
  # shellcheck disable=SC2206 # word splitting intended
  [ -n "${REPROX_ARGS:-}" ] && extra+=(${REPROX_ARGS})
  (cd "$WORK" && exec "$REPROX_BIN" serve --upstream "http://127.0.0.1:$UP_PORT" --listen 127.0.0.1:0 \
     --redis "$REDIS_URL" "${extra[@]}" "$@" >"$WORK/$name.log" 2>&1) &
  echo $! >"$WORK/$name.pid"
  wait_for_port "$WORK/$name.log" 'reprox listening on [^ ]+:[0-9]+'
}
L2_PORT=$(start_reprox l2only --cache-bytes 0)
L1_PORT=$(start_reprox l1l2)

BODY="{\"model\":\"scripted-model\",\"seed\":1,\"messages\":[{\"role\":\"user\",\"content\":\"redis bench [[scripted: words=$WORDS]]\"}]}"
curl -s -o "$WORK/first.json" -D "$WORK/first.h" -H 'content-type: application/json' -H 'authorization: Bearer bench' \
  -d "$BODY" "http://127.0.0.1:$L2_PORT/v1/chat/completions"
KEY=$(grep -i '^x-reprox-key:' "$WORK/first.h" | awk '{print $2}' | tr -d '\r')
for _ in $(seq 1 100); do [ "$(redis-cli -p "$REDIS_PORT" EXISTS "reprox:v1:$KEY")" = 1 ] && break; sleep 0.02; done
VALUE_BYTES=$(redis-cli -p "$REDIS_PORT" STRLEN "reprox:v1:$KEY")
RESPONSE_BYTES=$(wc -c <"$WORK/first.json")
# Both instances must answer hits from the tier they are meant to measure.
tier_of() { curl -s -o /dev/null -D - -H 'content-type: application/json' -H 'authorization: Bearer bench' \
              -d "$BODY" "http://127.0.0.1:$1/v1/chat/completions" | grep -i '^x-reprox-tier:' | awk '{print $2}' | tr -d '\r'; }
T1=$(tier_of "$L2_PORT"); T2=$(tier_of "$L2_PORT")
[ "$T1" = redis ] && [ "$T2" = redis ] || { echo "L2-only instance answered from tier '$T1','$T2', not redis" >&2; exit 1; }
tier_of "$L1_PORT" >/dev/null
T3=$(tier_of "$L1_PORT")
[ "$T3" = memory ] || { echo "L1+L2 instance answered from tier '$T3', not memory" >&2; exit 1; }

# nginx serving the same answer bytes, with no open()/close() per request.
cp "$WORK/first.json" "$WORK/answer.json"; chmod 644 "$WORK/answer.json"; chmod 755 "$WORK"  # nginx workers run as nobody
NGINX_PORT=$(free_port)
nginx_static_conf "$WORK/nginx" "$NGINX_PORT" "$WORK/answer.json" "${NGINX_WORKERS:-${REPROX_THREADS:-$(nproc)}}" \
  "open_file_cache max=16;" >"$WORK/nginx.conf"
nginx -p "$WORK/nginx" -c "$WORK/nginx.conf" >"$WORK/nginx.out" 2>&1 &
NGINX_PID=$!
nginx_serves "$WORK/nginx" "$NGINX_PORT" "$BODY" "$WORK/answer.json" || { cat "$WORK/nginx.out" >&2; exit 1; }

cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer bench"
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.3f %.3f %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests))
end
LUA

run_wrk() {  # port -> "rps p50 p99 errors requests"
  wrk -t "$THREADS" -c "$CONNECTIONS" -d 2s -s "$WORK/post.lua" "http://127.0.0.1:$1/v1/chat/completions" >/dev/null
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" -s "$WORK/post.lua" "http://127.0.0.1:$1/v1/chat/completions" |
    awk '/^RESULT/ {print $2, $3, $4, $5, $6}'
}
run_rb() {  # -> "rps p50 p99": GET of a value of the entry's size, same concurrency
  redis-benchmark "${RB_TARGET[@]}" -t get -d "$VALUE_BYTES" -c "$CONNECTIONS" -n "$1" --csv >"$WORK/rb.csv"
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  awk -F, '/"GET"/ { gsub(/"/, ""); print $2, $5, $7 }' "$WORK/rb.csv"
}

echo "reprox Redis-tier benchmark: $CONNECTIONS connections, wrk $THREADS threads, $DURATION per run, $ROUNDS rounds; $(nproc) CPUs; Redis at $REDIS_URL"
echo "entry in Redis: $VALUE_BYTES bytes; response body: $RESPONSE_BYTES bytes"
printf '%-6s %-32s %12s %10s %10s %8s\n' "round" "" "req/s" "p50 ms" "p99 ms" "errors"
# Each round measures all three back to back, so a ratio compares runs made
# under the same load on the box; the summary is the median round.
: >"$WORK/ratios"
for round in $(seq 1 "$ROUNDS"); do
  read -r L2_RPS L2_P50 L2_P99 L2_ERR L2_N < <(run_wrk "$L2_PORT")
  read -r L1_RPS L1_P50 L1_P99 L1_ERR L1_N < <(run_wrk "$L1_PORT")
  read -r NG_RPS NG_P50 NG_P99 NG_ERR NG_N < <(run_wrk "$NGINX_PORT")
  REQUESTS=$(awk -v r="$L2_RPS" -v d="${DURATION%s}" 'BEGIN { n = int(r * 3 * d); if (n < 100000) n = 100000; print n }')
  read -r RB_RPS RB_P50 RB_P99 < <(run_rb "$REQUESTS")
  printf '%-6s %-32s %12.1f %10.3f %10.3f %8s\n' "$round" "reprox hit, L2 only (redis)" "$L2_RPS" "$L2_P50" "$L2_P99" "$L2_ERR"
  printf '%-6s %-32s %12.1f %10.3f %10.3f %8s\n' "$round" "reprox hit, L1+L2 (memory)" "$L1_RPS" "$L1_P50" "$L1_P99" "$L1_ERR"
  printf '%-6s %-32s %12.1f %10.3f %10.3f %8s\n' "$round" "nginx, the same bytes from a file" "$NG_RPS" "$NG_P50" "$NG_P99" "$NG_ERR"
  printf '%-6s %-32s %12.1f %10.3f %10.3f %8s\n' "$round" "redis-benchmark GET -d $VALUE_BYTES" "$RB_RPS" "$RB_P50" "$RB_P99" "-"
  read -r L2_RATIO L1_RATIO NG_RATIO L2_NG < <(awk -v a="$L2_RPS" -v b="$L1_RPS" -v g="$NG_RPS" -v r="$RB_RPS" \
    'BEGIN { printf "%.4f %.4f %.4f %.4f\n", a / r, b / r, g / r, a / g }')
  printf '%-6s ratio L2-only / redis GET %.2f, L1+L2 / redis GET %.2f, nginx / redis GET %.2f, L2-only / nginx %.2f\n' \
    "$round" "$L2_RATIO" "$L1_RATIO" "$NG_RATIO" "$L2_NG"
  echo "$L2_RATIO $L1_RATIO $NG_RATIO $L2_NG" >>"$WORK/ratios"
done
HITS_FROM_REDIS=$(curl -s "http://127.0.0.1:$L2_PORT/metrics" | awk '/^reprox_cache_lookups_total\{.*result="hit"/ {print $2}')
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
L2_MED=$(awk '{print $1}' "$WORK/ratios" | median)
L1_MED=$(awk '{print $2}' "$WORK/ratios" | median)
printf 'median ratio reprox L2-only / redis GET: %.2f (goal >= 0.5); rounds: %s\n' "$L2_MED" "$(awk '{printf "%.2f ", $1}' "$WORK/ratios")"
printf 'median ratio reprox L1+L2  / redis GET: %.2f; rounds: %s\n' "$L1_MED" "$(awk '{printf "%.2f ", $2}' "$WORK/ratios")"
printf 'median ratio nginx (no lookup) / redis GET: %.2f; rounds: %s\n' "$(awk '{print $3}' "$WORK/ratios" | median)" \
  "$(awk '{printf "%.2f ", $3}' "$WORK/ratios")"
printf 'median ratio reprox L2-only / nginx: %.2f; rounds: %s\n' "$(awk '{print $4}' "$WORK/ratios" | median)" \
  "$(awk '{printf "%.2f ", $4}' "$WORK/ratios")"
echo "hits counted by the L2-only instance (warm-ups + measured): $HITS_FROM_REDIS"
