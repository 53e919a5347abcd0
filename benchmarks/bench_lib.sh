# Shell helpers the benchmark scripts source.

# A free loopback TCP port.
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# wait_for_port FILE REGEX: waits (up to 10 s) for REGEX in FILE, prints the
# number that ends the first match (e.g. the port in "listening on host:PORT").
wait_for_port() {
  for _ in $(seq 1 200); do
    if m=$(grep -oE "$2" "$1" | head -1) && [ -n "$m" ]; then echo "$m" | grep -oE '[0-9]+$'; return 0; fi
    sleep 0.05
  done
  echo "timed out waiting for /$2/ in $1:" >&2; cat "$1" >&2; return 1
}

# stop_all DIR PID...: kills the processes, reaps them and removes DIR.
stop_all() {
  local dir=$1
  shift
  for p in "$@"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
