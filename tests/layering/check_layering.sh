#!/usr/bin/env bash
# Checks that dependencies point one way:
#   proxy/ -> {engine/, policies/, conf/} -> common/
# - no file under engine/, policies/, conf/ or common/ includes proxy/;
# - no file under common/ includes torch or Boost;
# - with a target graph (cmake/layering.cmake), no target defined under
#   engine/, policies/, conf/ or common/ depends, directly or not, on a target
#   defined under proxy/, and no common/ target on torch or Boost.
# Usage: check_layering.sh SOURCE_ROOT [TARGET_GRAPH]. Exit 0: clean.
set -uo pipefail
root="$1"
graph="${2:-}"
failures=0

report() {
  echo "layering: $*" >&2
  failures=$((failures + 1))
}

lower=()
for d in engine policies conf common; do [ -d "$root/$d" ] && lower+=("$root/$d"); done
if [ ${#lower[@]} -eq 0 ]; then
  report "no engine/, policies/, conf/ or common/ under $root"
fi
while IFS= read -r hit; do
  [ -n "$hit" ] && report "includes proxy/: ${hit#"$root"/}"
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(\.\./)*proxy/' "${lower[@]}" 2>/dev/null)
if [ -d "$root/common" ]; then
  while IFS= read -r hit; do
    [ -n "$hit" ] && report "common/ includes torch or Boost: ${hit#"$root"/}"
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](torch|ATen|c10|boost)/' "$root/common" 2>/dev/null)
fi

if [ -n "$graph" ]; then
  declare -A dir deps
  while IFS='|' read -r target tdir tdeps; do
    [ -z "$target" ] && continue
    dir[$target]="$tdir"
    deps[$target]="$tdeps"
  done < "$graph"
  [ ${#dir[@]} -gt 0 ] || report "empty target graph $graph"
  for target in "${!dir[@]}"; do
    case "${dir[$target]}" in engine*|policies*|conf*|common*) ;; *) continue ;; esac
    # Breadth-first over the link dependencies.
    declare -A seen=()
    queue=("$target")
    while [ ${#queue[@]} -gt 0 ]; do
      t="${queue[0]}"
      queue=("${queue[@]:1}")
      IFS=',' read -r -a next <<< "${deps[$t]:-}"
      for n in "${next[@]}"; do
        [ -z "$n" ] && continue
        [ -n "${seen[$n]:-}" ] && continue
        seen[$n]=1
        if [ -n "${dir[$n]:-}" ]; then
          case "${dir[$n]}" in proxy*) report "target $target (${dir[$target]}) depends on $n (${dir[$n]})" ;; esac
          queue+=("$n")
        elif [[ "${dir[$target]}" == common* && "$n" =~ [Tt]orch|Boost|boost ]]; then
          report "common target $target depends on $n"
        fi
      done
    done
    unset seen
  done
fi

if [ "$failures" -gt 0 ]; then
  echo "layering: $failures violation(s)" >&2
  exit 1
fi
echo "layering: clean (${#lower[@]} lower folders${graph:+, $(wc -l < "$graph") targets})"
