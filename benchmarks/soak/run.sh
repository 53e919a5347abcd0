#!/usr/bin/env bash
# The soak benchmark: a mixed, bounded load on one reprox with a Redis tier
# for N minutes, sampled every 10 s, with PASS/FAIL gates at the end (see
# README.md). Loopback only; every child is killed on exit.
#
#   bash benchmarks/soak/run.sh [--minutes N] [--quick] [--reprox BIN] [--out DIR] [--name NAME]
#
#   --minutes N   minutes of load (default 60; 30 to 60 is the intended range)
#   --quick       3 minutes of load, shorter warm-up, purges and bursts more often
#   --reprox BIN  the binary (default build/reprox; copied, so a rebuild during
#                 the run does not touch the process)
#   --out DIR     where NAME.csv, NAME.svg and NAME.txt go (default benchmarks/soak/results)
#   --name NAME   file name (default DATE-HOST-Nmin)
#   --cache-bytes SIZE, --kv-budget SIZE, --sample-s N, --loops LIST: see README.md
#
# Exit status: 0 when every gate passes, 1 when one fails, 2 when the set-up
# failed or the hard deadline passed. Needs node (20+) and redis-server.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
reprox="$repo/build/reprox"
minutes=""
quick=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --reprox) reprox="$2"; shift 2 ;;
    --out|--name|--cache-bytes|--kv-budget|--sample-s|--loops) extra+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$minutes" ]; then
  if [ "$quick" = 1 ]; then minutes=3; else minutes=60; fi
fi
case "$minutes" in ''|*[!0-9.]*) echo "--minutes takes a number: $minutes" >&2; exit 2 ;; esac
for tool in node redis-server; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 2; }
done
[ -x "$reprox" ] || { echo "reprox binary not found: $reprox (bash conf/setup.sh builds it)" >&2; exit 2; }

work="$(mktemp -d /tmp/reprox-soak.XXXXXX)"
pidfile="$work/pids"
: >"$pidfile"
node_pid=""
cleanup() {
  local rc=$?
  if [ -n "$node_pid" ]; then kill "$node_pid" 2>/dev/null || true; fi
  # Whatever the Node script started and did not reap (it was killed, say).
  while read -r pid; do
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  done <"$pidfile"
  if [ "$rc" = 0 ] || [ -n "${SOAK_CLEAN:-}" ]; then rm -rf "$work"; else echo "logs kept in $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

cp "$reprox" "$work/reprox"
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ "$commit" != unknown ] && \
   [ -n "$(git -C "$repo" --no-optional-locks status --porcelain --untracked-files=no -- . ':!benchmarks/soak' 2>/dev/null)" ]; then
  commit="$commit plus uncommitted changes"
fi
shown="bash benchmarks/soak/run.sh --minutes $minutes${extra[*]:+ ${extra[*]}}"
if [ "$quick" = 1 ]; then shown="bash benchmarks/soak/run.sh --quick${extra[*]:+ ${extra[*]}}"; fi
quick_flag=()
if [ "$quick" = 1 ]; then quick_flag=(--quick); fi

# The hard deadline: the Node script keeps its own (load + warm-up + idle +
# 3 minutes); this one is a backstop a minute later.
hard="$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 300 }')"
timeout -k 10 "$hard" node "$here/soak.js" --reprox "$work/reprox" --work "$work" --minutes "$minutes" \
  --pidfile "$pidfile" --commit "$commit" --command "$shown" ${quick_flag[@]+"${quick_flag[@]}"} \
  ${extra[@]+"${extra[@]}"} &
node_pid=$!
set +e
wait "$node_pid"
rc=$?
set -e
node_pid=""
exit "$rc"
