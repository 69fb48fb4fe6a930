# Measurements for later issues (3: upstream TLS, 4: interception, 5: auth), kept apart from the
# first four. Countersign uses the configs in bench/peers/countersign-*.json; the counts that
# only Countersign exposes come from its admin /metrics or from the origin's access log.
# Enable with BENCH_ONLY="upstream_tls intercept intercept_new intercept_idle intercept_bulk auth auth_digest
# auth_ntlm" (or BENCH_ONLY=all).

# countersign_metric NAME: the sum of every sample of NAME (all label sets) on the admin /metrics.
countersign_metric() {
    curl -s --max-time 5 "http://127.0.0.1:$ADMIN_PORT/metrics" |
        awk -v name="$1" 'index($0, name " ") == 1 || index($0, name "{") == 1 {sum += $NF} END {printf "%d\n", sum}'
}

# upstream_tls_counters: "HANDSHAKES RESUMPTIONS CONNECTS" of the running Countersign.
upstream_tls_counters() {
    echo "$(countersign_metric countersign_upstream_tls_handshakes_total)" \
        "$(countersign_metric countersign_upstream_tls_resumptions_total)" \
        "$(countersign_metric countersign_upstream_connects_total)"
}

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
        local before after
        before=$(upstream_tls_counters)
        run_wrk upstream_tls countersign "http://127.0.0.1:$UP_HTTPS_PORT/1k" absolute
        after=$(upstream_tls_counters)
        record_full_handshakes upstream_tls "$before" "$after"
        finish countersign
        ;;
    *) record upstream_tls "$subject" "" "" "n/a (no plain-to-TLS upgrade)" ;;
    esac
}

# record_full_handshakes MEASUREMENT BEFORE AFTER: Countersign's full upstream TLS handshakes
# (handshakes − resumptions) per 10,000 requests over the warm-up and timed run, next to the
# upstream connections opened (the pool).
record_full_handshakes() {
    local measurement=$1 h0 r0 c0 h1 r1 c1
    read -r h0 r0 c0 <<<"$2"
    read -r h1 r1 c1 <<<"$3"
    if ((LOAD_REQUESTS <= 0)); then
        record "$measurement" countersign "full TLS/10k req" "" "no completed requests to count handshakes against"
        return
    fi
    local full=$(((h1 - h0) - (r1 - r0))) resumed=$((r1 - r0))
    record "$measurement" countersign "full TLS/10k req" "$(awk -v f="$full" -v n="$LOAD_REQUESTS" 'BEGIN {printf "%.2f", f * 10000 / n}')" \
        "$full full and $resumed resumed upstream handshakes over $LOAD_REQUESTS requests"
    record "$measurement" countersign "upstream conns" "$((c1 - c0))"
}

# 6. Intercepted HTTPS: the proxy terminates CONNECT with a minted certificate and opens its
#    own TLS upstream. Peers: Squid ssl_bump (CA generated per run), mitmproxy (mitmdump).
#    Reference: curl straight at the HTTPS origin.
measure_intercept() {
    local subject=$1 origin_tls="https://127.0.0.1:$UP_HTTPS_PORT/1k"
    # HTTP/1.1 for every subject: Countersign offers h2 to intercepted clients and curl -Z would
    # then multiplex its transfers over a few connections, where Squid gets 50 HTTP/1.1 ones
    # (HTTP/2 through interception is measured by `h2`, against nghttpx).
    local CURL_EXTRA=(--http1.1)
    case $subject in
    direct) run_curl_parallel intercept direct "$origin_tls" ;;
    countersign)
        begin countersign intercept connect-tls intercept || return 0
        run_curl_parallel intercept countersign "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
        finish countersign
        ;;
    squid)
        begin squid intercept connect-tls bump || return 0
        run_curl_parallel intercept squid "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
        finish squid
        ;;
    nginx)
        # The floor: nginx terminating TLS 1.3 itself, no CONNECT (see intercept_new).
        begin nginx intercept terminate-tls || return 0
        run_curl_parallel intercept nginx "https://127.0.0.1:$PROXY_TERMINATE_PORT/1k"
        finish nginx
        ;;
    mitmproxy)
        begin mitmproxy intercept connect-tls || return 0
        run_curl_parallel intercept mitmproxy "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
        finish mitmproxy
        ;;
    *) record intercept "$subject" "" "" "n/a (cannot intercept TLS)" ;;
    esac
}

# 6c. New intercepted connections whose client resumes its TLS session: issue 24's condition for
#     its connections-per-second goal ("with the minted-leaf cache and session resumption both
#     ways"), which hey cannot meet (Go keeps no session cache unless told to). curl's parallel
#     transfers each ask to close after the response, so every transfer is a new CONNECT and a TLS
#     1.3 handshake resuming a ticket from curl's shared session cache; the upstream side stays
#     pooled. A verbose probe first checks that curl offers its cached sessions (instructions.sh
#     intercept-resumed checks that the proxy accepts them).
measure_intercept_resumed() {
    local subject=$1 origin_tls="https://127.0.0.1:$UP_HTTPS_PORT/1k" proxy=()
    local CURL_EXTRA=(--http1.1 -H "Connection: close") BENCH_TLS_REQUESTS=$BENCH_RESUMED_CONNECTIONS
    case $subject in
    countersign | squid)
        begin "$subject" intercept_resumed connect-tls "$([[ $subject == squid ]] && echo bump || echo intercept)" || return 0
        proxy=(-x "http://127.0.0.1:$PROXY_PORT")
        ;;
    nginx)
        # The floor: nginx terminating TLS 1.3 itself and resuming from its own tickets.
        begin nginx intercept_resumed terminate-tls || return 0
        origin_tls="https://127.0.0.1:$PROXY_TERMINATE_PORT/1k"
        ;;
    *)
        record intercept_resumed "$subject" "" "" "n/a (not measured for new connections)"
        return
        ;;
    esac
    local probe_list="$WORK/curl-resumed-probe.cfg" probe resumed before after
    curl_url_list "$origin_tls" 10 >"$probe_list"
    probe=$(curl -s -k -v "${proxy[@]}" "${CURL_EXTRA[@]}" -K "$probe_list" 2>&1)
    resumed=$(grep -c "SSL re-using session ID" <<<"$probe")
    [[ $subject == countersign ]] && before=$(upstream_tls_counters)
    run_curl_parallel intercept_resumed "$subject" "$origin_tls" "${proxy[1]:-}"
    [[ $subject == countersign ]] && record_full_handshakes intercept_resumed "$before" "$(upstream_tls_counters)"
    [[ -n $LOAD_CPU ]] && record intercept_resumed "$subject" "conn/s per core" "$(awk -v c="$LOAD_CPU" 'BEGIN {printf "%.0f", 1e6 / c}')" \
        "curl offered a cached session on $resumed of a 10-connection probe"
    finish "$subject"
}

# 6b. New intercepted connections per second: hey without keep-alive, so every request is a new
#     CONNECT, a TLS handshake with the proxy's minted certificate and the proxy's own upstream.
measure_intercept_new() {
    local subject=$1 origin_tls="https://127.0.0.1:$UP_HTTPS_PORT/1k" variant=
    case $subject in
    countersign) variant=intercept ;;
    squid) variant=bump ;;
    nginx)
        # The floor: nginx terminating TLS 1.3 itself (no CONNECT, no minted leaf), same origin,
        # same client: what one new TLS connection costs a fast C proxy on this OpenSSL.
        begin nginx intercept_new terminate-tls || return 0
        HEY_EXTRA=(-disable-keepalive)
        run_hey intercept_new nginx "https://127.0.0.1:$PROXY_TERMINATE_PORT/1k"
        HEY_EXTRA=()
        finish nginx
        return
        ;;
    *)
        record intercept_new "$subject" "" "" "n/a (not measured for new connections)"
        return
        ;;
    esac
    begin "$subject" intercept_new connect-tls "$variant" || return 0
    HEY_EXTRA=(-disable-keepalive)
    run_hey intercept_new "$subject" "$origin_tls" "http://127.0.0.1:$PROXY_PORT"
    HEY_EXTRA=()
    finish "$subject"
}

# 6c. Memory per idle intercepted connection: BENCH_INTERCEPTED_IDLE CONNECTs to the intercepted
#     origin, each completing TLS with the proxy (verified against its CA) and one request, then idle.
measure_intercept_idle() {
    local subject=$1 variant ca
    case $subject in
    countersign) variant=intercept ca="$WORK/countersign-ca/ca.pem" ;;
    squid) variant=bump ca="$WORK/bump-ca.pem" ;;
    *)
        record intercept_idle "$subject" "" "" "n/a (not measured for idle intercepted connections)"
        return
        ;;
    esac
    begin "$subject" intercept_idle connect-tls "$variant" || return 0
    run_idle_script intercept_idle "$subject" conn "$BENCH_INTERCEPTED_IDLE" \
        --target "127.0.0.1:$UP_HTTPS_PORT" --tls-ca "$ca"
    finish "$subject"
}

# 6d. Bulk download through interception: every byte is decrypted and encrypted again, moved in
#     steps of the per-direction budget. Proxy CPU per MiB is the figure that compares.
measure_intercept_bulk() {
    local subject=$1 variant url="https://127.0.0.1:$UP_HTTPS_PORT/big"
    case $subject in
    countersign) variant=intercept ;;
    squid) variant=bump ;;
    direct)
        fetch_bulk intercept_bulk direct "$url" "over https" -k
        return
        ;;
    *)
        record intercept_bulk "$subject" "" "" "n/a (cannot intercept TLS)"
        return
        ;;
    esac
    begin "$subject" intercept_bulk connect-tls "$variant" || return 0
    fetch_bulk intercept_bulk "$subject" "$url" "over https, intercepted" -k -x "http://127.0.0.1:$PROXY_PORT"
    finish "$subject"
}

# 7. Authentication overhead against origins that challenge (nginx auth_basic, and a Bearer
#    check). Countersign learns the scheme from the first 401 and then answers preemptively;
#    nginx and Squid add a fixed Authorization header (the best a static peer can do);
#    "direct" is the client sending the header itself. For Countersign the origin's access log
#    gives the upstream requests per client request, and "countersign-noauth" is the same
#    Countersign and origin on /open/, a path without auth.
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
        squid)
            begin squid "$measurement" forward "" "$path" || continue
            run_wrk "$measurement" squid "http://127.0.0.1:$UP_HTTP_PORT$path" absolute
            finish squid
            ;;
        countersign)
            measure_counted_auth "$measurement" auth "$UP_HTTP_PORT" "$WORK/origin-auth.log" "/$scheme/"
            ;;
        *) record "$measurement" "$subject" "" "" "n/a (cannot add upstream credentials)" ;;
        esac
    done
}

# origin_log_counts LOG PREFIX: "REQUESTS UNAUTHORIZED": lines of an origin's "status path" log
# whose path starts with PREFIX, and how many of them were answered 401.
origin_log_counts() {
    awk -v prefix="$2" 'index($2, prefix) == 1 {n++; if ($1 == 401) u++} END {printf "%d %d\n", n, u}' "$1" 2>/dev/null ||
        echo "0 0"
}

# measure_counted_auth MEASUREMENT VARIANT ORIGIN_PORT ORIGIN_LOG PREFIX: BENCH_AUTH_ROUNDS rounds,
# each a fresh Countersign (config VARIANT) on PREFIX1k, counting the origin's log lines under
# PREFIX, then a fresh one on /open/1k of the same origin ("countersign-noauth"). The two are
# compared within 5%, less than this machine's run-to-run noise, so they alternate and the
# medians are reported.
measure_counted_auth() {
    local measurement=$1 variant=$2 port=$3 log=$4 prefix=$5
    local SMOKE_HTTP_PORT=$port LOAD_QUIET=1
    local auth_rps=() auth_p99=() auth_cpu=() open_rps=() open_p99=() open_cpu=() auth_errors=0 open_errors=0
    local upstream=0 unauthorized=0 client=0 round before after n0 u0 n1 u1
    for ((round = 1; round <= BENCH_AUTH_ROUNDS; round++)); do
        begin countersign "$measurement" forward "$variant" "${prefix}1k" || break
        before=$(origin_log_counts "$log" "$prefix")
        run_wrk "$measurement" countersign "http://127.0.0.1:$port${prefix}1k" absolute
        after=$(origin_log_counts "$log" "$prefix")
        finish countersign
        [[ -z $LOAD_RPS ]] && break
        auth_rps+=("$LOAD_RPS") auth_p99+=("$LOAD_P99") auth_cpu+=("$LOAD_CPU")
        auth_errors=$((auth_errors + LOAD_ERRORS))
        read -r n0 u0 <<<"$before"
        read -r n1 u1 <<<"$after"
        upstream=$((upstream + n1 - n0)) unauthorized=$((unauthorized + u1 - u0)) client=$((client + LOAD_REQUESTS))

        begin countersign-noauth "$measurement" forward "$variant" /open/1k || break
        run_wrk "$measurement" countersign-noauth "http://127.0.0.1:$port/open/1k" absolute
        finish countersign-noauth
        [[ -z $LOAD_RPS ]] && break
        open_rps+=("$LOAD_RPS") open_p99+=("$LOAD_P99") open_cpu+=("$LOAD_CPU")
        open_errors=$((open_errors + LOAD_ERRORS))
    done
    record_rounds "$measurement" countersign "$auth_errors" auth_rps auth_p99 auth_cpu
    record_rounds "$measurement" countersign-noauth "$open_errors" open_rps open_p99 open_cpu
    if ((client > 0)); then
        record "$measurement" countersign "upstream/client" "$(awk -v u="$upstream" -v n="$client" 'BEGIN {printf "%.4f", u / n}')" \
            "$upstream upstream requests ($unauthorized answered 401) for $client client requests"
    fi
}

median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }

# record_rounds MEASUREMENT SUBJECT ERRORS RPS_ARRAY P99_ARRAY CPU_ARRAY: the medians of the rounds measured.
record_rounds() {
    local measurement=$1 subject=$2 errors=$3
    local -n rps_of=$4 p99_of=$5 cpu_of=$6
    ((${#rps_of[@]})) || return 0 # nothing measured: the failure is already recorded
    local remark="median of ${#rps_of[@]} runs: ${rps_of[*]} req/s"
    ((${#cpu_of[@]})) && [[ -n ${cpu_of[0]} ]] && remark+=", ${cpu_of[*]} CPU us/req"
    ((errors > 0)) && remark+="; $errors errors or non-2xx responses: figure not comparable"
    record "$measurement" "$subject" "req/s" "$(median "${rps_of[@]}")" "$remark"
    record "$measurement" "$subject" "p99 ms" "$(median "${p99_of[@]}")"
    ((${#cpu_of[@]})) && [[ -n ${cpu_of[0]} ]] && record "$measurement" "$subject" "proxy CPU us/req" "$(median "${cpu_of[@]}")"
    return 0
}

# 7b. Digest against Apache mod_auth_digest, which keeps nonces and checks their counts.
#     Only Countersign: a static peer cannot answer Digest.
measure_auth_digest() {
    local subject=$1
    if [[ $subject != countersign ]]; then
        record auth_digest "$subject" "" "" "n/a (cannot answer Digest)"
        return
    fi
    if ! start_digest_origin; then
        record auth_digest countersign "" "" "failed ($START_FAILURE)"
        return
    fi
    record auth_digest countersign "" "" "Apache AuthDigestNcCheck $BENCH_DIGEST_NC_CHECK"
    measure_counted_auth auth_digest auth-digest "$APACHE_PORT" "$WORK/apache/access.log" /digest/
    stop_pinned apache
}

# 7c. NTLM: handshakes per upstream connection (goal: one, then the connection is reused) over
#     BENCH_NTLM_REQUESTS requests from 10 connections. The origin is Python (pyspnego), far
#     slower than the proxy, so its req/s is context only.
measure_auth_ntlm() {
    local subject=$1
    if [[ $subject != countersign ]]; then
        record auth_ntlm "$subject" "" "" "n/a (cannot answer NTLM)"
        return
    fi
    if ! start_ntlm_origin; then
        record auth_ntlm countersign "" "" "failed ($START_FAILURE)"
        return
    fi
    local SMOKE_HTTP_PORT=$NTLM_PORT
    if begin countersign auth_ntlm forward auth-ntlm /1k; then
        local report summary
        report=$("${LOAD[@]}" hey -n "$BENCH_NTLM_REQUESTS" -c 10 -x "http://127.0.0.1:$PROXY_PORT" \
            "http://127.0.0.1:$NTLM_PORT/1k" 2>&1)
        printf '%s\n' "$report" >"$WORK/hey-auth_ntlm-countersign.txt"
        if summary=$(parse_load hey <<<"$report"); then
            local rps p99 errors requests
            read -r rps p99 errors requests <<<"$summary"
            local remark=
            ((errors > 0)) && remark="$errors errors or non-2xx responses: figure not comparable"
            record auth_ntlm countersign "req/s" "$rps" "$remark"
            record_ntlm_handshakes "$((requests + 1))"
        else
            record auth_ntlm countersign "" "" "failed (hey printed no throughput: $(tail -n 1 <<<"$report"))"
        fi
        finish countersign
    fi
    stop_pinned ntlm-origin
}

# record_ntlm_handshakes CLIENT_REQUESTS: from the NTLM origin's log (smoke request included).
record_ntlm_handshakes() {
    local handshakes connections upstream
    read -r handshakes connections upstream < <(awk '
        $2 == "negotiate" {h++}
        {seen[$1] = 1; n++}
        END {c = 0; for (k in seen) c++; printf "%d %d %d\n", h, c, n}' "$WORK/ntlm-origin.log" 2>/dev/null || echo "0 0 0")
    if ((connections == 0)); then
        record auth_ntlm countersign "handshakes/conn" "" "the NTLM origin logged no request"
        return
    fi
    record auth_ntlm countersign "handshakes/conn" "$(awk -v h="$handshakes" -v c="$connections" 'BEGIN {printf "%.2f", h / c}')" \
        "$handshakes handshakes on $connections upstream connections"
    record auth_ntlm countersign "upstream/client" "$(awk -v u="$upstream" -v n="$1" 'BEGIN {printf "%.4f", u / n}')" \
        "$upstream upstream requests (handshake legs included) for $1 client requests"
}

# 8. RFC 9421 request signing (issue 22): the same Countersign and origin on /1k, the origin listed
#    as a host without `sign` (countersign: the baseline signing is compared with), signed with
#    hmac-sha256 (countersign-sign-hmac) and with Ed25519 (countersign-sign-ed25519), and the
#    origin unlisted (countersign-unlisted: plain forward), in alternating rounds, medians
#    reported. A GET has no body: nothing is held, so the difference is the signature itself.
#    openssl speed's Ed25519 signing time on this machine is recorded beside it (the goal: Ed25519
#    adds at most twice that).
measure_sign() {
    local subject=$1 round variant
    if [[ $subject != countersign ]]; then
        record sign "$subject" "" "" "n/a (cannot sign requests)"
        return 0
    fi
    [[ -f $WORK/sign-ed25519.key ]] || openssl genpkey -algorithm ed25519 -out "$WORK/sign-ed25519.key" 2>/dev/null
    export BENCH_SIG_SECRET=bench-signing-secret-0123456789
    local rps_sign_none=() p99_sign_none=() cpu_sign_none=() rps_sign_hmac=() p99_sign_hmac=() cpu_sign_hmac=()
    local rps_sign_ed25519=() p99_sign_ed25519=() cpu_sign_ed25519=() rps_forward=() p99_forward=() cpu_forward=()
    local errors_sign_none=0 errors_sign_hmac=0 errors_sign_ed25519=0 errors_forward=0
    local LOAD_QUIET=1
    for ((round = 1; round <= BENCH_AUTH_ROUNDS; round++)); do
        for variant in sign-none sign-hmac sign-ed25519 forward; do
            begin countersign sign forward "$variant" /1k || return 0
            run_wrk sign "countersign-$variant" "http://127.0.0.1:$UP_HTTP_PORT/1k" absolute
            finish countersign
            [[ -z $LOAD_RPS ]] && return 0
            local key=${variant//-/_}
            local -n rps_ref="rps_$key" p99_ref="p99_$key" cpu_ref="cpu_$key" errors_ref="errors_$key"
            rps_ref+=("$LOAD_RPS") p99_ref+=("$LOAD_P99") cpu_ref+=("$LOAD_CPU")
            errors_ref=$((errors_ref + LOAD_ERRORS))
            unset -n rps_ref p99_ref cpu_ref errors_ref
        done
    done
    record_rounds sign countersign "$errors_sign_none" rps_sign_none p99_sign_none cpu_sign_none
    record_rounds sign countersign-unlisted "$errors_forward" rps_forward p99_forward cpu_forward
    record_rounds sign countersign-sign-hmac "$errors_sign_hmac" rps_sign_hmac p99_sign_hmac cpu_sign_hmac
    record_rounds sign countersign-sign-ed25519 "$errors_sign_ed25519" rps_sign_ed25519 p99_sign_ed25519 cpu_sign_ed25519
    local signs
    signs=$(taskset -c "$PROXY_CORE" openssl speed -seconds 2 ed25519 2>/dev/null | awk '/Ed25519\)/ && $(NF-1) ~ /^[0-9.]+$/ {print $(NF-1)}' | tail -n 1)
    [[ -n $signs ]] && record sign "openssl-speed" "ed25519 sign us" "$(awk -v s="$signs" 'BEGIN {printf "%.1f", 1e6 / s}')" "$signs signs/s on the proxy's core"
}

# 9. AWS Signature V4 (issue 23): uploads (PUT of a 1 KiB and a 1 MiB body, wrk) to the nginx
#    origin's /sink/ (it reads the whole body, then answers 204), plain forward (countersign-forward) and
#    signed with aws-sigv4 `payload: "unsigned"` (streams, UNSIGNED-PAYLOAD) and `"signed"` (the
#    body held whole and hashed before the head goes), in alternating rounds, medians reported.
#    wrk does not sign: the proxy signs over every end-to-end header. Figures per body size.
measure_sign_aws() {
    local subject=$1 round variant size key
    if [[ $subject != countersign ]]; then
        record sign_aws "$subject" "" "" "n/a (cannot sign requests)"
        return 0
    fi
    export BENCH_AWS_KEY_ID=AKIABENCH00000000000 BENCH_AWS_SECRET=bench-aws-secret-0123456789
    local -A rps=() p99=() cpu=() errors=()
    local LOAD_QUIET=1
    for size in 1024 1048576; do
        for ((round = 1; round <= BENCH_AUTH_ROUNDS; round++)); do
            for variant in forward sign-aws-unsigned sign-aws-signed; do
                begin countersign sign_aws forward "$variant" /1k || return 0
                BENCH_BODY_BYTES=$size run_wrk sign_aws "countersign-$variant-$size" "http://127.0.0.1:$UP_HTTP_PORT/sink/put" absolute
                finish countersign
                [[ -z $LOAD_RPS ]] && return 0
                key="$variant-$size"
                rps[$key]+="$LOAD_RPS " p99[$key]+="$LOAD_P99 " cpu[$key]+="$LOAD_CPU "
                errors[$key]=$((${errors[$key]:-0} + LOAD_ERRORS))
            done
        done
    done
    local label
    for size in 1024 1048576; do
        for variant in forward sign-aws-unsigned sign-aws-signed; do
            key="$variant-$size"
            label="countersign-${variant#sign-}-$((size / 1024))k"
            [[ $variant == forward ]] && label="countersign-$((size / 1024))k"
            # shellcheck disable=SC2206 # word splitting of the collected figures is intended
            local rps_list=(${rps[$key]}) p99_list=(${p99[$key]}) cpu_list=(${cpu[$key]})
            record_rounds sign_aws "$label" "${errors[$key]}" rps_list p99_list cpu_list
        done
    done
}
