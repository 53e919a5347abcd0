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

# nginx_conf_head DIR WORKERS: the start of both configs below, up to the
# http block's own directives (foreground, logs and temp files under DIR).
nginx_conf_head() {
  local dir=$1 workers=$2
  mkdir -p "$dir/logs" "$dir/tmp"
  cat <<CONF
worker_processes $workers;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  types { }
  keepalive_requests 1000000;
CONF
}

# nginx_static_conf DIR PORT FILE WORKERS [EXTRA]: prints an nginx config
# (foreground, logs and temp files under DIR) that answers POST and GET of
# /v1/chat/completions on 127.0.0.1:PORT with FILE's bytes as
# application/json. POST to a static file is a 405 in nginx; error_page
# turns it into an internal GET of the same file. EXTRA: more directives for
# the http block. Creates DIR/logs and DIR/tmp.
nginx_static_conf() {
  local dir=$1 port=$2 file=$3 workers=$4 extra=${5:-}
  nginx_conf_head "$dir" "$workers"
  cat <<CONF
  $extra
  server {
    listen 127.0.0.1:$port;
    location = /v1/chat/completions {
      default_type application/json;
      alias $file;
      error_page 405 =200 \$uri;
    }
  }
}
CONF
}

# nginx_return_conf DIR PORT FILE WORKERS: prints an nginx config like
# nginx_static_conf's that answers /v1/chat/completions with FILE's bytes
# from memory (`return 200 '...'`): no file system on the way, the harder
# anchor. '$' in the bytes goes through a variable that holds it.
nginx_return_conf() {
  local dir=$1 port=$2 file=$3 workers=$4
  local text
  text="$(node "$(dirname "${BASH_SOURCE[0]}")/nginx_return_text.js" "$file")"
  nginx_conf_head "$dir" "$workers"
  cat <<CONF
  geo \$dollar { default "\$"; }
  server {
    listen 127.0.0.1:$port;
    location = /v1/chat/completions {
      default_type application/json;
      return 200 '$text';
    }
  }
}
CONF
}

# nginx_serves DIR PORT BODY FILE: waits (up to 5 s) for the nginx started
# with nginx_static_conf DIR ... to answer, then checks that a POST of BODY
# returns FILE's bytes; on a mismatch prints nginx's output and log, fails.
nginx_serves() {
  local dir=$1 port=$2 body=$3 file=$4
  for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/v1/chat/completions" && break; sleep 0.05; done
  curl -sf -o "$dir/answer.got" -X POST --data-binary "$body" "http://127.0.0.1:$port/v1/chat/completions" || true
  cmp -s "$dir/answer.got" "$file" && return 0
  echo "nginx does not serve the answer's bytes:" >&2
  cat "$dir/logs/error.log" >&2 2>/dev/null || true
  return 1
}
