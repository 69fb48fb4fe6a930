#!/usr/bin/env bash
# System calls per request, on each leg: strace follows the proxy (every thread) while one client
# makes SYSCALL_REQUESTS (1000) keep-alive requests after SYSCALL_WARMUP (300), the same requests
# bench/instructions.sh counts. Kernel time is what instructions.sh cannot see; a call the kernel
# did not need to be asked is the part of it a proxy can cut.
#
# usage: bench/syscalls.sh [VARIANT ...]   (default: intercept nginx-terminate)
#   intercept        Countersign, countersign-intercept.json: GETs inside one CONNECT, TLS both ways
#   nginx-terminate  nginx terminating the client's TLS itself, the same TLS origin behind its pool
#   forward          Countersign, countersign-forward.json: absolute-form GETs to the HTTP origin
#   nginx-reverse    the bench's nginx reverse proxy on the same requests as forward
# Each call is put on the leg its descriptor belongs to (client: the proxy's listening port;
# upstream: the origin's), epoll_wait on the loop; EAGAIN results are counted apart.
# COUNTERSIGN_BIN as for bench/run.sh; nginx runs one process (master_process off).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
: "${COUNTERSIGN_BIN:=$REPO_DIR/.build/release/countersign}" "${SYSCALL_REQUESTS:=1000}" "${SYSCALL_WARMUP:=300}"
: "${BENCH_BULK_MIB:=1}" "${BENCH_NICE:=0}"
export BENCH_BULK_MIB

source "$BENCH_DIR/lib/common.sh"
source "$BENCH_DIR/lib/servers.sh"
source "$BENCH_DIR/lib/requests.sh"

for tool in strace nginx openssl python3 perl; do
    command -v "$tool" >/dev/null 2>&1 || { note "missing $tool"; exit 1; }
done
(($#)) || set -- intercept nginx-terminate

WORK=$(mktemp -d /tmp/countersign-syscalls.XXXXXX)
export WORK
trap 'stop_all; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

prepare_origin_files
start_origin || { note "cannot measure: $START_FAILURE"; exit 1; }
mkdir -p "$WORK/countersign-ca"

for variant in "$@"; do
    PROXY_PORT=$(free_port) ADMIN_PORT=$(free_port) PROXY_TLS_PORT=$(free_port) PROXY_TERMINATE_PORT=$(free_port)
    export PROXY_PORT ADMIN_PORT PROXY_TLS_PORT PROXY_TERMINATE_PORT ORIGIN_PORT=$UP_HTTP_PORT
    case $variant in
    intercept | forward)
        render "$BENCH_DIR/peers/countersign-$variant.json" "$WORK/countersign.json"
        start_pinned proxy "$PROXY_CORE" "$COUNTERSIGN_BIN" run -c "$WORK/countersign.json"
        ;;
    nginx-terminate | nginx-reverse)
        render "$BENCH_DIR/peers/nginx-reverse.conf" "$WORK/nginx-reverse.conf"
        sed -i 's/^daemon off;/daemon off;\nmaster_process off;/' "$WORK/nginx-reverse.conf"
        start_pinned proxy "$PROXY_CORE" nginx -p "$WORK" -c "$WORK/nginx-reverse.conf"
        ;;
    *)
        note "unknown variant $variant"
        exit 1
        ;;
    esac
    BENCH_START_SECONDS=20 wait_proxy proxy "$PROXY_PORT" || { note "$variant: $START_FAILURE"; exit 1; }
    mode=() client_port=$PROXY_PORT upstream_port=$UP_HTTP_PORT
    case $variant in
    intercept) mode=(intercept) upstream_port=$UP_HTTPS_PORT ;;
    nginx-terminate) mode=(terminate) client_port=$PROXY_TERMINATE_PORT upstream_port=$UP_HTTPS_PORT ;;
    esac
    count_requests "$PROXY_PORT" /1k "$SYSCALL_WARMUP" "${mode[@]}"
    strace -f -qq -yy -o "$WORK/trace.$variant" -p "$(pid_of proxy)" &
    tracer=$!
    sleep 1 # attached to every thread before the first counted request
    count_requests "$PROXY_PORT" /1k "$SYSCALL_REQUESTS" "${mode[@]}"
    kill -INT "$tracer"
    wait "$tracer" || true
    stop_pinned proxy
    python3 "$BENCH_DIR/syscall_legs.py" "$WORK/trace.$variant" "$SYSCALL_REQUESTS" "$client_port" "$upstream_port" "$variant"
done
