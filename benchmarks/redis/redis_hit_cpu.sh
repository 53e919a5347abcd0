#!/usr/bin/env bash
# Where the CPU of a Redis-tier cache hit goes: per-request CPU time of
# reprox, redis-server and wrk while wrk replays cached requests against a
# reprox with --cache-bytes 0 (every hit is read from Redis).
#
#   benchmarks/redis/redis_hit_cpu.sh [REPROX_BIN] [extra reprox serve args...]
#   env: NKEYS (distinct cached requests wrk cycles through, 1), CONNECTIONS (16),
#        DURATION (8s), CACHE_BYTES (the memory tier, 0: every hit is read from
#        Redis; e.g. 268435456 to measure memory hits the same way), WRAP (a command prefix for reprox, e.g.
#        "perf record -g -o /tmp/hit.data"; it gets SIGINT at the end and up to
#        5 s to write its output before it is killed: perf record handles
#        that; a wrapper that waits for reprox to exit, like perf stat or
#        strace, is killed without its output),
#        PIN (1: reprox on CPU 0, redis-server and wrk on CPU 1; with
#        `--threads 1` this takes most of the scheduler's noise out of an
#        A/B comparison of reprox's CPU per request)
#
# Prints req/s and, per request, the process CPU time (user + system, from
# /proc/PID/stat before and after the measured wrk run) of each process,
# then reprox's busy threads.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-$ROOT/build/reprox}")
shift || true
NKEYS=${NKEYS:-1}
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-8s}
WORK=$(mktemp -d /tmp/reprox-hit-cpu-XXXXXX)
. "$ROOT/benchmarks/bench_lib.sh"
PIDS=()
cleanup() {
  # WRAP gets SIGINT and up to 5 s to write its output, then is killed with the rest.
  if [ -n "${WRAP:-}" ] && [ -n "${WRAP_PID:-}" ]; then
    kill -INT "$WRAP_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$WRAP_PID" 2>/dev/null || break; sleep 0.1; done
  fi
  stop_all "$WORK" "${PIDS[@]}"
}
trap cleanup EXIT
ON_REPROX_CPU=(); ON_OTHER_CPU=()
if [ "${PIN:-0}" = 1 ]; then ON_REPROX_CPU=(taskset -c 0); ON_OTHER_CPU=(taskset -c 1); fi

REDIS_PORT=$(free_port)
${ON_OTHER_CPU[@]+"${ON_OTHER_CPU[@]}"} redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!; PIDS+=($REDIS_PID)
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && break; sleep 0.05; done
node "$ROOT/tests/proxy/backend/scripted_upstream.js" --port 0 >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
UP_PORT=$(wait_for_port "$WORK/upstream.log" 'listening [0-9]+')
# shellcheck disable=SC2086
${WRAP:-} ${ON_REPROX_CPU[@]+"${ON_REPROX_CPU[@]}"} "$BIN" serve --upstream "http://127.0.0.1:$UP_PORT" --listen 127.0.0.1:0 \
  --redis "redis://127.0.0.1:$REDIS_PORT" --cache-bytes "${CACHE_BYTES:-0}" "$@" >"$WORK/reprox.log" 2>&1 &
WRAP_PID=$!; PIDS+=($WRAP_PID)
PORT=$(wait_for_port "$WORK/reprox.log" 'reprox listening on [^ ]+:[0-9]+')
REPROX_PID=$WRAP_PID  # without WRAP, reprox itself; with it, the wrapper's child
[ -n "${WRAP:-}" ] && REPROX_PID=$(pgrep -n -P "$WRAP_PID" -f "$BIN serve")

BODY='{"model":"scripted-model","seed":SEED,"messages":[{"role":"user","content":"redis bench [[scripted: words=200]]"}]}'
for i in $(seq 1 "$NKEYS"); do
  curl -s -o /dev/null -H 'content-type: application/json' -H 'authorization: Bearer bench' \
    -d "${BODY/SEED/$i}" "http://127.0.0.1:$PORT/v1/chat/completions"
done
sleep 0.5  # the Redis writes are asynchronous
cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer bench"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, (string.gsub('$BODY', 'SEED', tostring(n % $NKEYS + 1))))
end
LUA
URL="http://127.0.0.1:$PORT/v1/chat/completions"
wrk -t 2 -c "$CONNECTIONS" -d 2s -s "$WORK/post.lua" "$URL" >/dev/null  # warm-up
ticks() { awk '{print $14 + $15}' "$1"; }  # user + system ticks from a stat file
# Per thread of reprox: "tid name ticks" (the I/O threads are named reprox-io,
# the Redis workers redis-worker; the main thread runs I/O context 0).
thread_ticks() {
  for t in /proc/"$REPROX_PID"/task/*; do
    echo "$(basename "$t") $(cat "$t/comm") $(ticks "$t/stat")"
  done 2>/dev/null | sort
}
thread_ticks >"$WORK/threads.before"
R1=$(ticks "/proc/$REPROX_PID/stat"); D1=$(ticks "/proc/$REDIS_PID/stat")
/usr/bin/time -f "%U %S" -o "$WORK/wrk.time" ${ON_OTHER_CPU[@]+"${ON_OTHER_CPU[@]}"} wrk -t 2 -c "$CONNECTIONS" -d "$DURATION" -s "$WORK/post.lua" "$URL" >"$WORK/wrk.out"
R2=$(ticks "/proc/$REPROX_PID/stat"); D2=$(ticks "/proc/$REDIS_PID/stat")
thread_ticks >"$WORK/threads.after"
N=$(grep -oE '[0-9]+ requests in' "$WORK/wrk.out" | grep -oE '^[0-9]+')
RPS=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.out")
read -r WU WS <"$WORK/wrk.time"
TIERS=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^reprox_cache_lookups_total\{.*result="hit"' || true)
awk -v n="$N" -v hz="$(getconf CLK_TCK)" -v r="$((R2 - R1))" -v d="$((D2 - D1))" -v wu="$WU" -v ws="$WS" \
  -v rps="$RPS" -v k="$NKEYS" -v c="$CONNECTIONS" 'BEGIN {
  printf "%d keys, %d connections: %.0f req/s; CPU per request: reprox %.1f us, redis %.1f us, wrk %.1f us\n",
    k, c, rps, r / hz / n * 1e6, d / hz / n * 1e6, (wu + ws) / n * 1e6 }'
echo "$TIERS"
join "$WORK/threads.before" "$WORK/threads.after" |
  awk -v n="$N" -v hz="$(getconf CLK_TCK)" '{ us = ($5 - $3) / hz / n * 1e6; if (us >= 0.5) printf "  reprox thread %s (%s): %.1f us per request\n", $1, $2, us }'
