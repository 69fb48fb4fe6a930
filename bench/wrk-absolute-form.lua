-- Makes wrk talk to a forward proxy: wrk connects to the proxy given on its command line
-- and sends each request in absolute-form for the origin in BENCH_TARGET_URL, with that
-- origin's Host header, as an HTTP_PROXY client would.
local target = os.getenv("BENCH_TARGET_URL")
if not target then
    error("BENCH_TARGET_URL is not set (e.g. http://127.0.0.1:8080/1k)")
end
wrk.path = target
wrk.headers["Host"] = target:match("^%a+://([^/]+)")

-- BENCH_BODY_BYTES: every request is a PUT with a body of that many bytes (uploads).
local body_bytes = tonumber(os.getenv("BENCH_BODY_BYTES") or "")
if body_bytes then
    wrk.method = "PUT"
    wrk.body = string.rep("b", body_bytes)
    wrk.headers["Content-Type"] = "application/octet-stream"
end

-- BENCH_DELAY_MS: each connection waits that long before its next request, so two runs can be
-- compared at about the same request rate (bench/auth_equal_rate.sh).
local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "")
if delay_ms then
    function delay() return delay_ms end
end
