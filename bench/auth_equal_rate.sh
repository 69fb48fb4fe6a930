#!/usr/bin/env bash
# Digest's cost at equal request rates, beside run.sh's auth_digest (which runs each path as
# fast as it goes). Apache is the bottleneck there and answers Digest more slowly than /open/,
# so the proxy is woken for fewer requests at a time on /digest/ and pays more per request for
# reasons that are the origin's pace, not its own work. Here wrk's connections wait
# BENCH_DELAY_MS (default 6) between requests, so both paths run at about the same rate, well
# below Apache's limit, and the proxy's CPU per request compares its own work.
#
# usage: COUNTERSIGN_BIN=.build/release/countersign bench/auth_equal_rate.sh [ROUNDS]
# Prints, per round and path: requests, req/s, proxy CPU µs per request; then the medians.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
: "${COUNTERSIGN_BIN:=$REPO_DIR/.build/release/countersign}" "${BENCH_DELAY_MS:=6}" "${BENCH_SECONDS:=5}" "${BENCH_CONNECTIONS:=50}"
: "${BENCH_START_SECONDS:=30}" "${BENCH_NICE:=0}" "${BENCH_BULK_MIB:=1}" "${BENCH_DIGEST_NC_CHECK:=On}"
export BENCH_BULK_MIB BENCH_DIGEST_NC_CHECK BENCH_DELAY_MS BENCH_TARGET_URL
rounds=${1:-5}
source "$BENCH_DIR/lib/common.sh"
source "$BENCH_DIR/lib/servers.sh"
source "$BENCH_DIR/lib/auth_origins.sh"
[[ -x $COUNTERSIGN_BIN ]] || { note "no binary at $COUNTERSIGN_BIN (swift build -c release)"; exit 1; }
WORK=$(mktemp -d /tmp/countersign-rate.XXXXXX)
export WORK
trap 'stop_all; rm -rf "$WORK"' EXIT
prepare_origin_files
start_origin || { note "cannot measure: $START_FAILURE"; exit 1; }
start_digest_origin || { note "cannot measure: $START_FAILURE"; exit 1; }
PROXY_PORT=$(free_port) ADMIN_PORT=$(free_port) ORIGIN_PORT=$APACHE_PORT
export PROXY_PORT ADMIN_PORT ORIGIN_PORT
mkdir -p "$WORK/countersign-ca"
render "$PEERS/countersign-auth-digest.json" "$WORK/countersign.json"
start_pinned countersign "$PROXY_CORE" "$COUNTERSIGN_BIN" run -c "$WORK/countersign.json"
wait_proxy countersign "$PROXY_PORT" || { note "$START_FAILURE"; exit 1; }
pid=$(pid_of countersign)
hz=$(getconf CLK_TCK)
declare -A cpu
for ((round = 1; round <= rounds; round++)); do
    for path in digest open; do
        BENCH_TARGET_URL="http://127.0.0.1:$APACHE_PORT/$path/1k"
        wrk=(taskset -c "$LOAD_CORE" wrk -t1 "-c$BENCH_CONNECTIONS" -s "$BENCH_DIR/wrk-absolute-form.lua" "http://127.0.0.1:$PROXY_PORT/")
        "${wrk[@]}" -d1s >/dev/null
        before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        report=$("${wrk[@]}" "-d${BENCH_SECONDS}s")
        after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        requests=$(awk '/requests in/ {print $1}' <<<"$report")
        grep -q "Non-2xx" <<<"$report" && note "$path: non-2xx responses in round $round"
        us=$(awk -v t=$((after - before)) -v hz="$hz" -v n="$requests" 'BEGIN {printf "%.1f", t * 1e6 / hz / n}')
        cpu[$path]+="$us "
        printf 'round %d  %-6s %7d requests  %6.0f req/s  %6s µs/req\n' "$round" "$path" "$requests" \
            "$(awk -v n="$requests" -v s="$BENCH_SECONDS" 'BEGIN {print n / s}')" "$us"
    done
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# shellcheck disable=SC2086
d=$(median ${cpu[digest]}) o=$(median ${cpu[open]})
awk -v d="$d" -v o="$o" 'BEGIN {printf "median proxy CPU: /digest/ %.1f, /open/ %.1f µs/req: %+.0f%%\n", d, o, (d / o - 1) * 100}'
