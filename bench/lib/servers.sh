# Starting the origin and each proxy from the templates in bench/peers/. Sourced, never run.
# A start function returns non-zero and leaves a sentence in START_FAILURE when the
# process did not come up, so the caller records "failed (reason)" and goes on.

PEERS="$BENCH_DIR/peers"
PROXY_CORE=0
LOAD_CORE=1
START_FAILURE=

# The origin's files, certificate and credentials; made once per run.
prepare_origin_files() {
    mkdir -p "$WORK/www" "$WORK/upstream-tmp" "$WORK/reverse-tmp" "$WORK/squid" "$WORK/mitm"
    head -c 1024 /dev/urandom >"$WORK/www/1k"
    # Sparse: no disk cost to make, and nginx sends it with sendfile. Read once now: the first
    # read of a fresh sparse file fills the page cache and ran ~30% slower, which the first
    # subject measured (Countersign) paid alone.
    truncate -s "${BENCH_BULK_MIB}M" "$WORK/www/big"
    cat "$WORK/www/big" >/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$WORK/upstream.key" -out "$WORK/upstream.pem" 2>/dev/null
    # nginx's own TLS termination (the floor for intercept_new): an ECDSA P-256 leaf, the key type
    # Countersign mints for intercepted hosts, so both sign the same handshake.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$WORK/terminate.key" -out "$WORK/terminate.pem" 2>/dev/null
    # Squid's ssl_bump CA (later issue): generated per run, never kept.
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Countersign bench Squid CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -keyout "$WORK/bump-ca.key" -out "$WORK/bump-ca.pem" 2>/dev/null
    export BENCH_BASIC_PASSWORD BENCH_BEARER_TOKEN BENCH_BASIC_B64
    BENCH_BASIC_PASSWORD=$(openssl rand -hex 12)
    BENCH_BEARER_TOKEN=$(openssl rand -hex 16)
    BENCH_BASIC_B64=$(printf 'bench:%s' "$BENCH_BASIC_PASSWORD" | base64 -w0)
    printf '%s' "$BENCH_BEARER_TOKEN" >"$WORK/bearer-token"
    chmod 600 "$WORK/bearer-token"
    # nginx workers and Squid drop privileges; they must reach the files and write their state.
    chmod 755 "$WORK"
    chmod 644 "$WORK/upstream.pem" "$WORK/upstream.key" "$WORK/terminate.pem" "$WORK/terminate.key"
    chmod 777 "$WORK/squid"
}

start_origin() {
    export UP_HTTP_PORT UP_HTTPS_PORT
    UP_HTTP_PORT=$(free_port)
    UP_HTTPS_PORT=$(free_port)
    render "$PEERS/upstream-nginx.conf" "$WORK/upstream-nginx.conf"
    start_pinned origin "$LOAD_CORE" nginx -p "$WORK" -c "$WORK/upstream-nginx.conf"
    if ! wait_port "$UP_HTTP_PORT" 10 || ! wait_port "$UP_HTTPS_PORT" 5; then
        START_FAILURE="origin nginx did not listen: $(last_error origin) $(tail -n 1 "$WORK/upstream-nginx.log" 2>/dev/null)"
        return 1
    fi
}

# wait_proxy NAME PORT: the process is alive and listening within BENCH_START_SECONDS.
wait_proxy() {
    local name=$1 port=$2 deadline=$((SECONDS + BENCH_START_SECONDS))
    while ((SECONDS < deadline)); do
        if ! running "$name"; then
            START_FAILURE="exited at start: $(last_error "$name")"
            return 1
        fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    START_FAILURE="not listening on 127.0.0.1:$port after ${BENCH_START_SECONDS}s"
    return 1
}

# Makes the Countersign binary available: BENCH_BUILD=1 always builds, "auto" builds only
# when the binary is missing, 0 never builds. Sets COUNTERSIGN_UNAVAILABLE on failure.
COUNTERSIGN_UNAVAILABLE=
prepare_countersign() {
    if [[ $BENCH_BUILD == 1 || ($BENCH_BUILD == auto && ! -x $COUNTERSIGN_BIN) ]]; then
        note "building Countersign (swift build -c release); log in $WORK/swift-build.log"
        if ! (cd "$REPO_DIR" && swift build -c release --product countersign) >"$WORK/swift-build.log" 2>&1; then
            local first_error
            first_error=$(grep -m1 -E 'error:' "$WORK/swift-build.log" | cut -c1-160)
            COUNTERSIGN_UNAVAILABLE="release build failed: ${first_error:-see swift build output}"
            return
        fi
    fi
    if [[ ! -x $COUNTERSIGN_BIN ]]; then
        COUNTERSIGN_UNAVAILABLE="no binary at $COUNTERSIGN_BIN (build with: swift build -c release)"
    fi
}

# start_proxy KIND [VARIANT]: KIND is countersign|tinyproxy|squid|nginx|mitmproxy|nghttpx; VARIANT picks a
# config for the later issues (countersign: forward|upstream-tls|intercept|auth; squid: plain|bump).
# Sets PROXY_PORT (and PROXY_TLS_PORT, PROXY_TERMINATE_PORT for nginx) and the process name PROXY_NAME.
start_proxy() {
    local kind=$1 variant=${2:-}
    export PROXY_PORT PROXY_TLS_PORT PROXY_TERMINATE_PORT ADMIN_PORT
    PROXY_PORT=$(free_port)
    PROXY_TLS_PORT=$(free_port)
    PROXY_TERMINATE_PORT=$(free_port)
    ADMIN_PORT=$(free_port)
    PROXY_NAME=$kind
    START_FAILURE=
    case $kind in
    countersign)
        if [[ -n $COUNTERSIGN_UNAVAILABLE ]]; then
            START_FAILURE=$COUNTERSIGN_UNAVAILABLE
            return 1
        fi
        mkdir -p "$WORK/countersign-ca"
        render "$PEERS/countersign-${variant:-forward}.json" "$WORK/countersign.json"
        start_pinned countersign "$PROXY_CORE" "$COUNTERSIGN_BIN" run -c "$WORK/countersign.json"
        ;;
    tinyproxy)
        render "$PEERS/tinyproxy.conf" "$WORK/tinyproxy.conf"
        start_pinned tinyproxy "$PROXY_CORE" tinyproxy -d -c "$WORK/tinyproxy.conf"
        ;;
    squid)
        local template=squid.conf
        if [[ $variant == bump ]]; then
            template=squid-bump.conf
            rm -rf "$WORK/squid/ssl_db"
            /usr/lib/squid/security_file_certgen -c -s "$WORK/squid/ssl_db" -M 16MB >/dev/null 2>&1
            chown -R proxy:proxy "$WORK/squid/ssl_db" 2>/dev/null || true
            chmod 644 "$WORK/bump-ca.key"
        fi
        render "$PEERS/$template" "$WORK/squid.conf"
        start_pinned squid "$PROXY_CORE" squid -N -f "$WORK/squid.conf"
        ;;
    nginx)
        render "$PEERS/nginx-reverse.conf" "$WORK/nginx-reverse.conf"
        start_pinned nginx "$PROXY_CORE" nginx -p "$WORK" -c "$WORK/nginx-reverse.conf"
        ;;
    nghttpx)
        # TLS h2 in front, TLS HTTP/1.1 to the origin (whose certificate is self-signed), one worker;
        # --conf=/dev/null: never the system's /etc/nghttpx/nghttpx.conf.
        start_pinned nghttpx "$PROXY_CORE" nghttpx --conf=/dev/null -f "127.0.0.1,$PROXY_PORT" \
            -b "127.0.0.1,$UP_HTTPS_PORT;;tls" -n 1 --insecure --no-ocsp --accesslog-file=/dev/null \
            --errorlog-file="$WORK/nghttpx.log" "$WORK/upstream.key" "$WORK/upstream.pem"
        ;;
    mitmproxy)
        if [[ ! -x $MITMDUMP_BIN ]]; then
            START_FAILURE="mitmdump not found (run scripts/install-bench-deps.sh)"
            return 1
        fi
        start_pinned mitmproxy "$PROXY_CORE" "$MITMDUMP_BIN" --listen-host 127.0.0.1 --listen-port "$PROXY_PORT" \
            --set confdir="$WORK/mitm" --ssl-insecure -q
        ;;
    *)
        START_FAILURE="unknown proxy kind $kind"
        return 1
        ;;
    esac
    wait_proxy "$kind" "$PROXY_PORT" || { stop_pinned "$kind"; return 1; }
    [[ $kind == squid ]] && sleep 0.5 # Squid listens a moment before it has finished configuring.
    return 0
}

stop_proxy() { stop_pinned "$PROXY_NAME"; }
