# Issue 25: HTTP/2 on the intercepted client leg. Sourced by run.sh, never run.
#
# h2load cannot use a proxy, so a relay (socat, on the load core) stands in for a client's
# CONNECT: for Countersign each h2load connection becomes one CONNECT to the intercepted HTTPS
# origin, and h2load then speaks TLS (ALPN h2) to Countersign's minted certificate, as a
# proxied browser would; :authority names the origin (the relay's port would be misdirected).
# nghttpx, the peer, is a TLS h2 reverse proxy in front of the same origin (TLS, HTTP/1.1): the
# same work on its core (h2 and TLS with the client, HTTP/1.1 and TLS with the origin) minus the
# CONNECT, which Countersign parses once per connection. Its traffic goes through a plain TCP
# relay on the same core so both carry the relay's cost alike. The figure that compares is the
# proxy's CPU per request on its own core; req/s is set by h2load, the relay and the origin on
# the other core.

: "${BENCH_H2_REQUESTS:=100000}" "${BENCH_H2_CONNECTIONS:=10}" "${BENCH_H2_STREAMS:=10}" "${BENCH_H2_IDLE:=500}"

# start_h2_relay SUBJECT: a relay on the load core in front of the running proxy; sets RELAY_PORT.
start_h2_relay() {
    RELAY_PORT=$(free_port)
    local upstream="TCP:127.0.0.1:$PROXY_PORT"
    [[ $1 == countersign ]] && upstream="PROXY:127.0.0.1:127.0.0.1:$UP_HTTPS_PORT,proxyport=$PROXY_PORT"
    start_pinned h2relay "$LOAD_CORE" socat "TCP-LISTEN:$RELAY_PORT,bind=127.0.0.1,reuseaddr,fork" "$upstream"
    wait_port "$RELAY_PORT" 5
}

# run_h2load SUBJECT: warm-up (a tenth of the requests), then the timed run; records req/s and
# the proxy's CPU per request.
run_h2load() {
    local subject=$1 url="https://127.0.0.1:$RELAY_PORT/1k" warmup report ticks_before ticks_after summary
    local args=(-c "$BENCH_H2_CONNECTIONS" -m "$BENCH_H2_STREAMS" -H ":authority: 127.0.0.1:$UP_HTTPS_PORT")
    warmup=$("${LOAD[@]}" h2load -n "$((BENCH_H2_REQUESTS / 10))" "${args[@]}" "$url" 2>&1)
    ticks_before=$(proxy_ticks)
    report=$("${LOAD[@]}" h2load -n "$BENCH_H2_REQUESTS" "${args[@]}" "$url" 2>&1)
    ticks_after=$(proxy_ticks)
    printf '%s\n' "$warmup" "$report" >"$WORK/h2load-h2-$subject.txt"
    if ! summary=$(parse_load h2load <<<"$report"); then
        record h2 "$subject" "" "" "failed (h2load reported no throughput: $(grep -m1 -iE 'error|fail' <<<"$report"))"
        return
    fi
    local rps errors requests remark=
    read -r rps _ errors requests <<<"$summary"
    ((errors > 0)) && remark="$errors failed or non-2xx responses: figure not comparable"
    record h2 "$subject" "req/s" "$rps" "$remark"
    record h2 "$subject" "proxy CPU us/req" "$(cpu_us_per_request "$ticks_before" "$ticks_after" "$requests")"
}

# smoke_check_h2: one HTTP/2 request through the relay answers 200 (curl, ALPN h2 only).
smoke_check_h2() {
    local code
    code=$(curl -s -k --http2 -o /dev/null -w '%{http_code} %{http_version}' --max-time 5 \
        --connect-to "127.0.0.1:$UP_HTTPS_PORT:127.0.0.1:$RELAY_PORT" "https://127.0.0.1:$UP_HTTPS_PORT/1k")
    [[ $code == "200 2" ]] && return 0
    START_FAILURE="smoke request over HTTP/2 answered '${code:-nothing}' instead of '200 2'"
    return 1
}

# 7. HTTP/2 client leg through interception: h2load, BENCH_H2_CONNECTIONS connections with
#    BENCH_H2_STREAMS concurrent streams each, 1 KiB responses; then memory per idle h2 connection.
measure_h2() {
    local subject=$1 variant= ca= direct=() tool
    for tool in h2load socat nghttpx; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            record h2 "$subject" "" "" "failed ($tool missing: run scripts/install-bench-deps.sh)"
            return
        fi
    done
    case $subject in
    countersign) variant=intercept ca="$WORK/countersign-ca/ca.pem" ;;
    nghttpx) ca="$WORK/upstream.pem" direct=(--direct) ;;
    *)
        record h2 "$subject" "" "" "n/a (not an HTTP/2 proxy)"
        return
        ;;
    esac
    if ! start_proxy "$subject" "$variant"; then
        record h2 "$subject" "" "" "failed ($START_FAILURE)"
        return
    fi
    if start_h2_relay "$subject" && smoke_check_h2; then
        run_h2load "$subject"
    else
        record h2 "$subject" "" "" "failed (${START_FAILURE:-relay did not listen: $(last_error h2relay)})"
    fi
    stop_pinned h2relay
    stop_proxy

    # A fresh proxy for the memory figure, so the load run's buffers are not counted.
    start_proxy "$subject" "$variant" || { record h2_idle "$subject" "" "" "failed ($START_FAILURE)"; return; }
    run_idle_script h2_idle "$subject" conn "$BENCH_H2_IDLE" --target "127.0.0.1:$UP_HTTPS_PORT" --tls-ca "$ca" --h2 "${direct[@]}"
    stop_proxy
}
