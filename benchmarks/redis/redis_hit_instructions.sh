#!/usr/bin/env bash
# User-space instructions per cache hit of reprox, counted by callgrind:
# deterministic, so an A/B comparison of a code change does not drown in the
# scheduling noise of a loaded 2-CPU box (where req/s and CPU time per
# request of the same binary vary by 20% from run to run). The kernel's
# share (system calls, wake-ups) is not counted: see redis_hit_cpu.sh.
#
#   benchmarks/redis/redis_hit_instructions.sh [REPROX_BIN] [extra reprox serve args...]
#   env: REQUESTS (measured hits, 2000), CACHE_BYTES (0: every hit is read
#        from Redis; e.g. 268435456 for memory hits), WORDS (answer words, 200),
#        OUT (keep callgrind's output file here, for callgrind_annotate)
#
# One client sends the same request over one keep-alive connection, one at
# a time (no pipelining or batching), after a warm-up. Prints instructions
# (Ir) per request and, per request, the calls of malloc.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-$ROOT/build/reprox}")
shift || true
REQUESTS=${REQUESTS:-2000}
WORDS=${WORDS:-200}
for tool in valgrind callgrind_control redis-server redis-cli node python3 curl; do
  command -v $tool >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/reprox-hit-ir-XXXXXX)
. "$ROOT/benchmarks/bench_lib.sh"
PIDS=()
trap 'stop_all "$WORK" "${PIDS[@]}"' EXIT

REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && break; sleep 0.05; done
node "$ROOT/tests/proxy/backend/scripted_upstream.js" --port 0 >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
UP_PORT=$(wait_for_port "$WORK/upstream.log" 'listening [0-9]+')
# Instrumentation starts off: start-up (libtorch's relocations) runs at
# valgrind's plain speed, and only the measured requests are counted.
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.out" \
  "$BIN" serve --upstream "http://127.0.0.1:$UP_PORT" --listen 127.0.0.1:0 \
  --redis "redis://127.0.0.1:$REDIS_PORT" --cache-bytes "${CACHE_BYTES:-0}" "$@" >"$WORK/reprox.log" 2>&1 &
VG_PID=$!; PIDS+=($VG_PID)
for _ in $(seq 1 60); do grep -q 'reprox listening on' "$WORK/reprox.log" && break; sleep 1; done
PORT=$(wait_for_port "$WORK/reprox.log" 'reprox listening on [^ ]+:[0-9]+')

BODY="{\"model\":\"scripted-model\",\"seed\":1,\"messages\":[{\"role\":\"user\",\"content\":\"redis bench [[scripted: words=$WORDS]]\"}]}"
curl -s -o /dev/null -H 'content-type: application/json' -H 'authorization: Bearer bench' \
  -d "$BODY" "http://127.0.0.1:$PORT/v1/chat/completions"
sleep 1  # the Redis write is asynchronous

# send N: N requests on one keep-alive connection; every answer must be a
# hit from the expected tier.
cat >"$WORK/client.py" <<'PY'
import http.client, sys
port, n, body, tier = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
h = {"content-type": "application/json", "authorization": "Bearer bench"}
for _ in range(n):
    c.request("POST", "/v1/chat/completions", body, h)
    r = c.getresponse()
    r.read()
    if r.status != 200 or r.getheader("x-reprox-cache") != "hit" or r.getheader("x-reprox-tier") != tier:
        sys.exit(f"not a {tier} hit: {r.status} {r.getheader('x-reprox-cache')} {r.getheader('x-reprox-tier')}")
PY
TIER=redis
[ "${CACHE_BYTES:-0}" != 0 ] && TIER=memory
callgrind_control -i on "$VG_PID" >/dev/null 2>&1
python3 "$WORK/client.py" "$PORT" 200 "$BODY" "$TIER"  # warm-up (memos, the first-seen epochs)
callgrind_control -z "$VG_PID" >/dev/null 2>&1
python3 "$WORK/client.py" "$PORT" "$REQUESTS" "$BODY" "$TIER"
callgrind_control -d "$VG_PID" >/dev/null 2>&1
sleep 1
# The dump: "summary:" holds the instructions; "calls=N" after "cfn=(id)"
# counts calls to that function (a "fn=" or "cfn=" line names an id once).
cat >"$WORK/count.py" <<'PY'
import re, sys
ir = mallocs = 0
names, cfn = {}, None
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        if line.startswith(("summary:", "totals:")):
            ir = max(ir, int(line.split()[1]))
        m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3): names[m.group(2)] = m.group(3).strip()
            if m.group(1): cfn = names.get(m.group(2))
        elif line.startswith("calls=") and cfn == "malloc":
            mallocs += int(line[6:].split()[0])
print(ir, mallocs)
PY
read -r IR MALLOCS < <(python3 "$WORK/count.py" "$WORK"/callgrind.out*)
[ -n "${OUT:-}" ] && cp "$(ls -t "$WORK"/callgrind.out* | head -1)" "$OUT"
awk -v ir="$IR" -v m="$MALLOCS" -v n="$REQUESTS" \
  'BEGIN { printf "%d hits: %.0f instructions and %.1f malloc calls per request\n", n, ir / n, m / n }'
