-- wrk script: POSTs one fixed chat request, so that after a warm-up every
-- request is a cache hit. The same script drives nginx (which serves the
-- stored answer as a static file) for the side-by-side comparison.
-- The body is read from $REPROX_BENCH_BODY_FILE (default: hit_body.json
-- next to this script when run from the repository root).
local path = os.getenv("REPROX_BENCH_BODY_FILE") or "benchmarks/proxy/hit_body.json"
local f = assert(io.open(path, "rb"))
local body = f:read("*a"):gsub("%s+$", "")
f:close()

wrk.method = "POST"
wrk.path = "/v1/chat/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-key"
wrk.body = body

-- No response() callback: it would make wrk call Lua for every answer and
-- become the bottleneck. wrk itself reports "Non-2xx or 3xx responses".
