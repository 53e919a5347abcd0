#!/usr/bin/env bash
# Summarises run_on_device.sh's benchmark logs as one Markdown table.
#   bash benchmarks/gpu/table.sh RESULTS_DIR MODEL...
set -euo pipefail
dir=$1
shift
# row LOG CONCURRENCY COLUMN: a cell of the bench's speed table (2: decode
# tok/s, 3: vs concurrency 1, 4: vs bound, 6: TTFT ms), "-" when absent.
row() {
  awk -F'|' -v c="$2" -v col="$(($3 + 1))" '
    $2 + 0 == c && $2 ~ /[0-9]/ { gsub(/ /, "", $col); print $col; found = 1; exit }
    END { if (!found) print "-" }' "$1" 2>/dev/null || echo "-"
}
field() {  # field LOG PATTERN N: the N-th word of the first line matching PATTERN
  awk -v n="$3" "/$2/ { print \$n; found = 1; exit } END { if (!found) print \"-\" }" "$1" 2>/dev/null || echo "-"
}
same() {  # same A B WHAT: "yes" when both logs print the same digest line
  local x y
  x="$(grep -m1 "^digest $3 " "$1" 2>/dev/null || true)"
  y="$(grep -m1 "^digest $3 " "$2" 2>/dev/null || true)"
  if [[ -z $x || -z $y ]]; then echo "-"; elif [[ $x == "$y" ]]; then echo yes; else echo NO; fi
}
head -n 3 "$dir/host.txt" 2>/dev/null || true
echo
echo "| model | weights MiB | bound tok/s | batch 1 tok/s | vs bound | 8 concurrent tok/s | 32 concurrent tok/s | 32 vs 1 | TTFT ms | same bytes across processes (alone / together) | alone vs in a group |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for m in "$@"; do
  a="$dir/$m.a.txt" b="$dir/$m.b.txt"
  weights="$(field "$a" '^weights' 2)"
  bound="$(sed -n 's/^weights.*(\([0-9.]*\) tok\/s)$/\1/p' "$a" 2>/dev/null | head -n 1 || true)"
  differ="$(awk '/^alone vs in groups/ { print $7 " of " $9; exit }' "$b" 2>/dev/null || true)"
  echo "| $m | $weights | ${bound:--} | $(row "$a" 1 2) | $(row "$a" 1 4) | $(row "$a" 8 2) | $(row "$a" 32 2) |" \
    "$(row "$a" 32 3) | $(row "$a" 1 6) | $(same "$a" "$b" alone) / $(same "$a" "$b" together) | ${differ:--} |"
  c="$dir/$m.c.txt"
  echo "| $m, no CUDA graphs | $weights | ${bound:--} | $(row "$c" 1 2) | $(row "$c" 1 4) | $(row "$c" 8 2) |" \
    "$(row "$c" 32 2) | $(row "$c" 32 3) | $(row "$c" 1 6) | | |"
  g="$dir/$m.g.txt"
  echo "| $m, greedy | $weights | ${bound:--} | $(row "$g" 1 2) | $(row "$g" 1 4) | $(row "$g" 8 2) |" \
    "$(row "$g" 32 2) | $(row "$g" 32 3) | $(row "$g" 1 6) | | |"
done
for m in "$@"; do
  # The engine writes this to stderr when a CUDA graph cannot be recorded.
  failed="$(grep -h -m1 'recording a CUDA graph failed' "$dir/$m.a.txt" "$dir/$m.steps.txt" 2>/dev/null | head -n 1 || true)"
  if [[ -n $failed ]]; then printf '\n%s: %s\n' "$m" "$failed"; fi
done
for m in "$@"; do
  echo
  echo "$m, one decode step:"
  cat "$dir/$m.steps.txt" 2>/dev/null || echo "(no log)"
done
