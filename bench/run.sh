#!/usr/bin/env bash
# Countersign against peer proxies, on this machine, in one run. See bench/README.md.
#
# Proxies run on core 0 with one worker each; the origin (nginx) and the load generators
# (wrk, hey, curl, the idle-tunnel script) on core 1. Everything listens on 127.0.0.1, lives in
# a temporary directory and is stopped by its PID. A benchmark never fails the build: this
# script exits 0 after printing what it could measure, with a reason for each missing figure.
#
# Settings (environment):
#   BENCH_SECONDS=10          length of each timed load run
#   BENCH_WARMUP_SECONDS=2    untimed run before each timed one
#   BENCH_CONNECTIONS=50      concurrent connections of wrk, hey and curl
#   BENCH_TLS_REQUESTS=50000  requests of each keep-alive HTTPS run through CONNECT (curl --parallel)
#   BENCH_BULK_MIB=1024       size of the bulk file; BENCH_BULK_RUNS=3 fetches, median kept
#   BENCH_BULK_SCHEME=http    http|https inside the CONNECT tunnel
#   BENCH_TUNNELS=2000        idle tunnels opened for the memory figure
#   BENCH_INTERCEPTED_IDLE=500   idle intercepted connections for the later issue's memory figure
#   BENCH_NTLM_REQUESTS=1000  requests of the NTLM handshake count
#   BENCH_AUTH_ROUNDS=3       alternating auth / no-auth runs per scheme; medians reported
#   BENCH_ROUNDS=3            rounds of plain, each subject once per round in turn; medians reported
#   BENCH_RESUMED_CONNECTIONS=20000  new intercepted connections of intercept_resumed (curl --parallel)
#   BENCH_DIGEST_NC_CHECK=On  Apache AuthDigestNcCheck: On rejects a nonce count not above the last one seen
#   BENCH_ONLY="plain connect bulk idle"   measurements to run; "all" adds the later issues'
#                             (upstream_tls intercept intercept_new intercept_resumed intercept_idle intercept_bulk auth auth_digest auth_ntlm sign sign_aws h2)
#   BENCH_H2_REQUESTS=100000  requests of the timed h2load run; BENCH_H2_CONNECTIONS=10 x BENCH_H2_STREAMS=10 streams
#   BENCH_H2_IDLE=500         idle HTTP/2 connections for the memory figure
#   BENCH_SUBJECTS="countersign nginx squid tinyproxy mitmproxy nghttpx direct"   who may be measured
#                             (each measurement takes those of them it applies to)
#   BENCH_BUILD=auto          1: swift build -c release first; auto: only when the binary is missing; 0: never
#   COUNTERSIGN_BIN=.build/release/countersign
#   BENCH_NICE=-10 (root) / 0  scheduling priority of everything measured, so that a compile
#                             running beside the benchmark disturbs it less
#   BENCH_KEEP_WORK=0         1 keeps the temporary directory (configs, raw wrk/hey/curl reports, logs)
#   BENCH_PROFILE_DIR=        when set, each wrk- or curl-timed run of a proxy is sampled with `perf record -g` into
#                             DIR/MEASUREMENT-SUBJECT-N.data (profiled figures are not comparable)
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/.." && pwd)

: "${BENCH_SECONDS:=10}" "${BENCH_WARMUP_SECONDS:=2}" "${BENCH_CONNECTIONS:=50}" "${BENCH_TLS_REQUESTS:=50000}"
: "${BENCH_BULK_MIB:=1024}" "${BENCH_BULK_RUNS:=3}" "${BENCH_BULK_SCHEME:=http}" "${BENCH_TUNNELS:=2000}"
: "${BENCH_INTERCEPTED_IDLE:=500}" "${BENCH_NTLM_REQUESTS:=1000}" "${BENCH_DIGEST_NC_CHECK:=On}" "${BENCH_AUTH_ROUNDS:=3}" "${BENCH_ROUNDS:=3}" "${BENCH_RESUMED_CONNECTIONS:=20000}"
: "${BENCH_ONLY:=plain connect bulk idle}" "${BENCH_SUBJECTS:=countersign nginx squid tinyproxy mitmproxy nghttpx direct}"
: "${BENCH_BUILD:=auto}" "${COUNTERSIGN_BIN:=$REPO_DIR/.build/release/countersign}" "${BENCH_KEEP_WORK:=0}"
: "${BENCH_NICE:=$( (($(id -u) == 0)) && echo -10 || echo 0)}"
: "${BENCH_START_SECONDS:=15}" "${MITMDUMP_BIN:=/opt/countersign-bench/mitmproxy/bin/mitmdump}"
LATER_MEASUREMENTS="upstream_tls intercept intercept_new intercept_resumed intercept_idle intercept_bulk auth auth_digest auth_ntlm sign sign_aws h2"
[[ $BENCH_ONLY == all ]] && BENCH_ONLY="plain connect bulk idle $LATER_MEASUREMENTS"
[[ -x $MITMDUMP_BIN ]] || MITMDUMP_BIN=$(command -v mitmdump || echo "$MITMDUMP_BIN")
export BENCH_BULK_MIB BENCH_DIGEST_NC_CHECK

source "$BENCH_DIR/lib/common.sh"
source "$BENCH_DIR/lib/servers.sh"
source "$BENCH_DIR/lib/measure.sh"
source "$BENCH_DIR/lib/later.sh"
source "$BENCH_DIR/lib/auth_origins.sh"
source "$BENCH_DIR/lib/h2.sh"

missing_tools=()
for tool in wrk hey curl nginx squid tinyproxy taskset openssl perl python3; do
    command -v "$tool" >/dev/null 2>&1 || missing_tools+=("$tool")
done
if ((${#missing_tools[@]})); then
    note "missing: ${missing_tools[*]} — run scripts/install-bench-deps.sh first"
    exit 0
fi
if (($(nproc) < 2)); then
    note "one core only: proxies and load would share it; figures would mean little. Not running."
    exit 0
fi

WORK=$(mktemp -d /tmp/countersign-bench.XXXXXX)
export WORK
RESULTS_TSV="$WORK/results.tsv"
: >"$RESULTS_TSV"
cleanup() {
    stop_all
    if [[ $BENCH_KEEP_WORK == 1 ]]; then
        note "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

BUSY_AT_START=$(cpu_busy_percent)
# 2,000 tunnels need 4,000+ descriptors in the proxy and 2,000 in the client.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
note "work directory $WORK; open-file limit $(ulimit -n)"

prepare_origin_files
if ! start_origin; then
    note "cannot benchmark: $START_FAILURE"
    exit 0
fi
if [[ " $BENCH_SUBJECTS " == *" countersign "* ]]; then
    prepare_countersign
    [[ -n $COUNTERSIGN_UNAVAILABLE ]] && note "countersign: failed ($COUNTERSIGN_UNAVAILABLE)"
fi

# Who takes part in each measurement (those BENCH_SUBJECTS names); "n/a" rows say why a peer cannot.
declare -A SUBJECTS_FOR=(
    [plain]="countersign nginx squid tinyproxy direct"
    [connect]="countersign nginx squid tinyproxy direct"
    [bulk]="countersign nginx squid tinyproxy direct"
    [idle]="countersign nginx squid tinyproxy"
    [upstream_tls]="countersign nginx direct"
    [intercept]="countersign squid mitmproxy nginx direct"
    [intercept_new]="countersign squid nginx"
    [intercept_resumed]="countersign squid nginx"
    [intercept_idle]="countersign squid"
    [intercept_bulk]="countersign squid direct"
    [auth]="countersign nginx squid direct"
    [auth_digest]="countersign"
    [auth_ntlm]="countersign"
    [sign]="countersign"
    [sign_aws]="countersign"
    [h2]="countersign nghttpx"
)
# Measured in alternating rounds: the headline CPU figure, compared with nginx's within the noise.
IN_ROUNDS=" plain "
for measurement in plain connect bulk idle $LATER_MEASUREMENTS; do
    enabled "$measurement" || continue
    note "== $measurement"
    subjects=()
    for subject in ${SUBJECTS_FOR[$measurement]}; do
        [[ " $BENCH_SUBJECTS " == *" $subject "* ]] && subjects+=("$subject")
    done
    if [[ $IN_ROUNDS == *" $measurement "* ]] && ((BENCH_ROUNDS > 1)); then
        measure_in_rounds "$measurement" "${subjects[@]}"
    else
        for subject in "${subjects[@]}"; do "measure_$measurement" "$subject"; done
    fi
done

stop_all

# The header names everything a reader needs to compare two result files.
header="$WORK/header.txt"
{
    echo "Countersign benchmark — $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), $(nproc) cores, $(uname -r)"
    echo "commit $(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO_DIR" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)');" \
        "proxies on core 0, one worker; origin nginx and load on core 1"
    echo "${BENCH_SECONDS}s per run after ${BENCH_WARMUP_SECONDS}s warm-up, $BENCH_CONNECTIONS connections;" \
        "bulk ${BENCH_BULK_MIB} MiB over $BENCH_BULK_SCHEME x$BENCH_BULK_RUNS; $BENCH_TUNNELS idle tunnels"
    echo "versions: $(nginx -v 2>&1 | sed 's/.*: //'), squid $(squid -v | sed -n 's/.*Version //p'), tinyproxy $(tinyproxy -v 2>&1 | awk '{print $2}')," \
        "wrk $(wrk -v 2>&1 | awk 'NR==1{print $2}'), curl $(curl -V | awk 'NR==1{print $2}')"
    echo "CPU busy before the run: ${BUSY_AT_START}% of both cores"
    if ((BUSY_AT_START > 10)); then
        echo "WARNING: other work was using the CPU when the run started; it shares the cores with the proxies, so figures are unreliable"
    fi
} >"$header"

report=$(python3 "$BENCH_DIR/report.py" "$RESULTS_TSV" "$header")
printf '%s\n' "$report"
mkdir -p "$BENCH_DIR/results"
results_file="$BENCH_DIR/results/$(date -u +%Y-%m-%dT%H%M%SZ).txt"
printf '%s\n' "$report" >"$results_file"
note "written to ${results_file#"$REPO_DIR"/}"
exit 0
