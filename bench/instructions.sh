#!/usr/bin/env bash
# Instructions per request of Countersign under callgrind, one configuration variant after
# another against the bench's nginx origin. Wall-clock CPU on this VM moves ±15% between runs,
# more than the auth and signing goals; an instruction count does not move with the machine's
# load, so a cut of a few hundred instructions per request can be seen (and kept) while other
# work runs. It counts user space only (kernel time and SHA-NI, which valgrind does not run,
# are bench/run.sh's to measure).
#
# usage: bench/instructions.sh [VARIANT[:PATH] ...]
#   VARIANT names bench/peers/countersign-VARIANT.json; PATH is what is fetched from the origin
#   (default /1k). Default variants: forward sign-none sign-hmac auth:/basic/1k auth:/bearer/1k.
#   A variant whose name begins with "intercept" is fetched inside one CONNECT to the HTTPS origin,
#   over TLS with the certificate the proxy mints (checked against the CA it makes on first start).
#   The variant "nginx-reverse" counts the bench's nginx reverse proxy (bench/peers/nginx-reverse.conf)
#   on the same requests as "forward": the peer the plain-forward goal is measured against.
#   The variant "intercept-new" runs countersign-intercept.json with every request on a new CONNECT
#   and a full TLS handshake (no session resumed), as the bench's intercept_new measurement does:
#   its figure is instructions per new intercepted connection.
#   The variant "intercept-resumed" is "intercept-new" with a client that offers the session it was
#   last given, so every new connection resumes (TLS 1.3 PSK with a fresh key share), as curl's
#   session cache does in the bench's intercept_resumed; it fails unless all but the first resume.
#   The variants "nginx-terminate", "nginx-terminate-new" and "nginx-terminate-resumed" count nginx
#   terminating TLS 1.3 itself (bench/peers/nginx-reverse.conf, an ECDSA P-256 leaf like the minted
#   one, the same TLS origin behind its pool, no CONNECT) on the same requests as "intercept",
#   "intercept-new" and "intercept-resumed": the floor an intercepted request and a new intercepted
#   connection are measured against.
#   The variant "h2" runs countersign-intercept.json under h2load over HTTP/2, as the bench's h2
#   measurement does (a socat relay makes the CONNECT; 10 connections, 10 streams each).
#   A variant whose configuration names @APACHE_PORT@ (auth-digest) is measured against Apache
#   mod_auth_digest (bench/lib/auth_origins.sh), started once when first needed; its paths are
#   /digest/1k (answered) and /open/1k (the same file, no auth):
#     bench/instructions.sh auth-digest:/open/1k auth-digest:/digest/1k
#   INSTR_REQUESTS (3000) keep-alive requests are counted after INSTR_WARMUP (300), from one
#   client; COUNTERSIGN_BIN as for bench/run.sh (a release build; a copy with its debug info
#   stripped is what runs, since valgrind 3.19 cannot read Swift's DWARF 5).
# INSTR_DUMPS=DIR keeps each variant's callgrind dump there (callgrind.VARIANT_PATH.out, the
# path's slashes as underscores) for callgrind_annotate.
# Prints each variant's instructions per request and its difference from the first one.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
: "${COUNTERSIGN_BIN:=$REPO_DIR/.build/release/countersign}" "${INSTR_REQUESTS:=3000}" "${INSTR_WARMUP:=300}"
: "${BENCH_BULK_MIB:=1}" "${BENCH_NICE:=0}"
export BENCH_BULK_MIB

source "$BENCH_DIR/lib/common.sh"
source "$BENCH_DIR/lib/servers.sh"
source "$BENCH_DIR/lib/auth_origins.sh"
source "$BENCH_DIR/lib/requests.sh"
: "${BENCH_DIGEST_NC_CHECK:=On}"
export BENCH_DIGEST_NC_CHECK

for tool in valgrind callgrind_annotate callgrind_control nginx openssl python3 perl; do
    command -v "$tool" >/dev/null 2>&1 || { note "missing $tool (scripts/install-bench-deps.sh installs it)"; exit 1; }
done
[[ -x $COUNTERSIGN_BIN ]] || { note "no binary at $COUNTERSIGN_BIN (swift build -c release)"; exit 1; }
(($#)) || set -- forward sign-none sign-hmac auth:/basic/1k auth:/bearer/1k

WORK=$(mktemp -d /tmp/countersign-instr.XXXXXX)
export WORK
trap 'stop_all; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

prepare_origin_files
start_origin || { note "cannot measure: $START_FAILURE"; exit 1; }
export BENCH_SIG_SECRET=bench-signing-secret-0123456789
mkdir -p "$WORK/countersign-ca"
cp "$COUNTERSIGN_BIN" "$WORK/countersign"
strip --strip-debug "$WORK/countersign"

# count_h2_requests RELAY_PORT PATH N: N HTTP/2 GETs through the relay, each a 2xx.
count_h2_requests() {
    local report
    report=$(h2load -n "$3" -c 10 -m 10 -H ":authority: 127.0.0.1:$UP_HTTPS_PORT" "https://127.0.0.1:$1$2" 2>&1)
    grep -q "status codes: $3 2xx" <<<"$report" || { note "h2load: $(grep -m1 -E 'status codes|requests:' <<<"$report")"; exit 1; }
}

baseline=
printf '%-28s %14s %12s\n' "variant" "instr/request" "vs first"
for spec in "$@"; do
    variant=${spec%%:*} path=/1k
    [[ $spec == *:* ]] && path=${spec#*:}
    PROXY_PORT=$(free_port) ADMIN_PORT=$(free_port)
    export PROXY_PORT ADMIN_PORT
    config=$variant
    [[ $variant == h2 || $variant == intercept-new || $variant == intercept-resumed ]] && config=intercept
    ORIGIN_PORT=$UP_HTTP_PORT
    if [[ -f $PEERS/countersign-$config.json ]] && grep -q @APACHE_PORT@ "$PEERS/countersign-$config.json"; then
        if [[ -z ${APACHE_PORT:-} ]]; then
            start_digest_origin || { note "cannot measure $variant: $START_FAILURE"; exit 1; }
        fi
        ORIGIN_PORT=$APACHE_PORT
    fi
    export ORIGIN_PORT
    out="$WORK/callgrind.$variant.out"
    cg=(valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no)
    if [[ $variant == nginx-* ]]; then
        # The bench's peer for plain forwarding, counted the same way (one process: the worker).
        PROXY_TLS_PORT=$(free_port) PROXY_TERMINATE_PORT=$(free_port)
        export PROXY_TLS_PORT PROXY_TERMINATE_PORT
        render "$PEERS/nginx-reverse.conf" "$WORK/nginx-reverse.conf"
        sed -i 's/^daemon off;/daemon off;\nmaster_process off;/' "$WORK/nginx-reverse.conf"
        start_pinned countersign "$PROXY_CORE" "${cg[@]}" nginx -p "$WORK" -c "$WORK/nginx-reverse.conf"
        wait_port "$PROXY_PORT" 120 || { note "$variant: nginx did not start (see $WORK/nginx-reverse.log)"; exit 1; }
    else
        render "$PEERS/countersign-$config.json" "$WORK/countersign.json"
        start_pinned countersign "$PROXY_CORE" "${cg[@]}" "$WORK/countersign" run -c "$WORK/countersign.json"
        # valgrind starts the proxy some 50 times slower than it runs natively.
        BENCH_START_SECONDS=120 wait_proxy countersign "$PROXY_PORT" || { note "$variant: $START_FAILURE"; exit 1; }
    fi
    pid=$(pid_of countersign)
    if [[ $variant == h2 ]]; then
        for tool in h2load socat; do
            command -v "$tool" >/dev/null 2>&1 || { note "missing $tool (scripts/install-bench-deps.sh installs it)"; exit 1; }
        done
        RELAY_PORT=$(free_port)
        start_pinned h2relay "$LOAD_CORE" socat "TCP-LISTEN:$RELAY_PORT,bind=127.0.0.1,reuseaddr,fork" \
            "PROXY:127.0.0.1:127.0.0.1:$UP_HTTPS_PORT,proxyport=$PROXY_PORT"
        wait_port "$RELAY_PORT" 5
        count_h2_requests "$RELAY_PORT" "$path" "$INSTR_WARMUP"
        callgrind_control -z "$pid" >/dev/null 2>&1
        count_h2_requests "$RELAY_PORT" "$path" "$INSTR_REQUESTS"
        callgrind_control -d "$pid" >/dev/null 2>&1
        stop_pinned h2relay
    else
        mode=()
        [[ $variant == intercept* ]] && mode=(intercept)
        [[ $variant == intercept-new || $variant == intercept-resumed ]] && mode=("$variant")
        [[ $variant == nginx-terminate* ]] && mode=("${variant#nginx-}")
        count_requests "$PROXY_PORT" "$path" "$INSTR_WARMUP" "${mode[@]}"
        callgrind_control -z "$pid" >/dev/null 2>&1
        count_requests "$PROXY_PORT" "$path" "$INSTR_REQUESTS" "${mode[@]}"
        callgrind_control -d "$pid" >/dev/null 2>&1
    fi
    stop_pinned countersign
    dump=$(ls -t "$out".* | head -n 1)
    [[ -n ${INSTR_DUMPS:-} ]] && cp "$dump" "$INSTR_DUMPS/callgrind.$variant${path//\//_}.out"
    total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    per=$((total / INSTR_REQUESTS))
    [[ -z $baseline ]] && baseline=$per
    printf '%-28s %14d %+12d\n' "$variant $path" "$per" "$((per - baseline))"
done
