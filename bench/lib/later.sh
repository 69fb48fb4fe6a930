# Measurements for later issues, kept apart from the current four so they plug in without
# touching them. The peer sides are complete; the Countersign side uses the configs in
# bench/peers/countersign-*.json and reports "failed (reason)" until the proxy supports them.
# Enable with BENCH_ONLY="upstream_tls intercept auth" (or BENCH_ONLY=all).

# 5. http:// request → TLS upstream (SPEC: hosts.<h>.upstream_tls), keep-alive, 1 KiB responses.
#    Peer: nginx proxy_pass https with an upstream keepalive pool and proxy_ssl_session_reuse.
#    Reference: wrk straight at the HTTPS origin.
measure_upstream_tls() {
    local subject=$1 origin_tls="https://127.0.0.1:$UP_HTTPS_PORT/1k"
    case $subject in
    direct) run_wrk upstream_tls direct "$origin_tls" ;;
    nginx)
        begin nginx upstream_tls reverse-tls || return 0
        run_wrk upstream_tls nginx "http://127.0.0.1:$PROXY_TLS_PORT/1k"
        finish nginx
        ;;
    countersign)
        begin countersign upstream_tls forward-to-tls upstream-tls || return 0
        run_wrk upstream_tls countersign "http://127.0.0.1:$UP_HTTPS_PORT/1k" absolute
        finish countersign
        ;;
    *) record upstream_tls "$subject" "" "" "n/a (no plain-to-TLS upgrade)" ;;
    esac
}

# 6. Intercepted HTTPS: the proxy terminates CONNECT with a minted certificate and opens its
#    own TLS upstream. Peers: Squid ssl_bump (CA generated per run), mitmproxy (mitmdump).
#    Reference: hey straight at the HTTPS origin.
measure_intercept() {
    local subject=$1 origin_tls="https://127.0.0.1:$UP_HTTPS_PORT/1k"
    case $subject in
    direct) run_hey intercept direct "$origin_tls" ;;
    countersign)
        begin countersign intercept connect-tls intercept || return 0
        run_hey intercept countersign "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
        finish countersign
        ;;
    squid)
        begin squid intercept connect-tls bump || return 0
        run_hey intercept squid "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
        finish squid
        ;;
    mitmproxy)
        begin mitmproxy intercept connect-tls || return 0
        run_hey intercept mitmproxy "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
        finish mitmproxy
        ;;
    *) record intercept "$subject" "" "" "n/a (cannot intercept TLS)" ;;
    esac
}

# 7. Authentication overhead against origins that challenge (nginx auth_basic, and a Bearer
#    check). Countersign learns the scheme from the first 401 and then answers preemptively;
#    nginx and Squid add a fixed Authorization header (the best a static peer can do);
#    "direct" is the client sending the header itself. Digest needs an origin that checks
#    nonce counts (Apache mod_auth_digest): not here yet.
measure_auth() {
    local subject=$1 scheme
    for scheme in basic bearer; do
        local measurement="auth_$scheme" path="/$scheme/1k"
        case $subject in
        direct)
            if [[ $scheme == basic ]]; then
                WRK_EXTRA=(-H "Authorization: Basic $BENCH_BASIC_B64")
            else
                WRK_EXTRA=(-H "Authorization: Bearer $BENCH_BEARER_TOKEN")
            fi
            run_wrk "$measurement" direct "http://127.0.0.1:$UP_HTTP_PORT$path"
            WRK_EXTRA=()
            ;;
        nginx)
            begin nginx "$measurement" reverse "" "$path" || continue
            run_wrk "$measurement" nginx "http://127.0.0.1:$PROXY_PORT$path"
            finish nginx
            ;;
        countersign | squid)
            local variant=
            [[ $subject == countersign ]] && variant=auth
            begin "$subject" "$measurement" forward "$variant" "$path" || continue
            run_wrk "$measurement" "$subject" "http://127.0.0.1:$UP_HTTP_PORT$path" absolute
            finish "$subject"
            ;;
        *) record "$measurement" "$subject" "" "" "n/a (cannot add upstream credentials)" ;;
        esac
    done
}
