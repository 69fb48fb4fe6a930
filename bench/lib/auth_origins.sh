# The extra origins of the auth measurements (issue 5): Apache mod_auth_digest for Digest and
# bench/ntlm_origin.py for NTLM. Both run on the load core like the nginx origin, are started
# only by the measurement that needs them and stopped by their PID. Sourced, never run.

# start_digest_origin: Apache as one process (-X) with the event MPM's threads; sets APACHE_PORT.
start_digest_origin() {
    export APACHE_PORT
    APACHE_PORT=$(free_port)
    START_FAILURE=
    if ! command -v apache2 >/dev/null 2>&1; then
        START_FAILURE="apache2 not found (apt-get install apache2)"
        return 1
    fi
    mkdir -p "$WORK/apache"
    chmod 777 "$WORK/apache" # Apache drops to www-data as root and writes its runtime files here.
    # htdigest's format: user:realm:MD5(user:realm:password).
    local ha1
    ha1=$(printf 'bench:bench-digest:%s' "$BENCH_BASIC_PASSWORD" | md5sum | cut -c1-32)
    printf 'bench:bench-digest:%s\n' "$ha1" >"$WORK/apache/htdigest"
    chmod 644 "$WORK/apache/htdigest"
    render "$PEERS/apache-digest.conf" "$WORK/apache-digest.conf"
    # Its own session: httpd signals its process group when it stops, which is this script's.
    start_pinned apache "$LOAD_CORE" env APACHE_RUN_DIR="$WORK/apache" APACHE_LOG_DIR="$WORK/apache" \
        setsid apache2 -X -f "$WORK/apache-digest.conf"
    if ! wait_port "$APACHE_PORT" 10 || ! running apache; then
        START_FAILURE="Apache did not listen: $(last_error apache) $(tail -n 1 "$WORK/apache/error.log" 2>/dev/null)"
        stop_pinned apache
        return 1
    fi
}

# start_ntlm_origin: the pyspnego NTLM origin on plain HTTP; sets NTLM_PORT.
start_ntlm_origin() {
    export NTLM_PORT
    NTLM_PORT=$(free_port)
    START_FAILURE=
    if ! python3 -c 'import spnego' 2>/dev/null; then
        START_FAILURE="python module spnego missing (pip install pyspnego)"
        return 1
    fi
    printf 'BENCH:bench:%s\n' "$BENCH_BASIC_PASSWORD" >"$WORK/ntlm-users"
    chmod 600 "$WORK/ntlm-users"
    : >"$WORK/ntlm-origin.log"
    start_pinned ntlm-origin "$LOAD_CORE" env NTLM_USER_FILE="$WORK/ntlm-users" \
        python3 "$BENCH_DIR/ntlm_origin.py" --port "$NTLM_PORT" --log "$WORK/ntlm-origin.log"
    if ! wait_port "$NTLM_PORT" 10 || ! running ntlm-origin; then
        START_FAILURE="the NTLM origin did not listen: $(last_error ntlm-origin)"
        stop_pinned ntlm-origin
        return 1
    fi
}
