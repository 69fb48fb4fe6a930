# The four measurements of the current issue. Sourced, never run.
# Each measure_* function takes one subject (a proxy kind, or "direct" for no proxy),
# starts what it needs, records its figures or a reason, and stops what it started.

LOAD=(nice -n "$BENCH_NICE" taskset -c "$LOAD_CORE")
WRK_EXTRA=() # extra wrk arguments for one run (a header), reset by the caller
HEY_EXTRA=() # extra hey arguments for one run (-disable-keepalive), reset by the caller
LOAD_REQUESTS=0 # responses completed by the last run_wrk/run_hey, warm-up and timed run together
# The last run's figures (LOAD_RPS empty when it failed). With LOAD_QUIET=1 run_wrk and run_hey only
# set them and record nothing but a failure, for callers that combine several runs into one figure.
LOAD_RPS= LOAD_P99= LOAD_ERRORS=0 LOAD_CPU= LOAD_CPU_SPLIT= LOAD_QUIET=0

# count_load_requests TOOL WARMUP_REPORT TIMED_REQUESTS: sets LOAD_REQUESTS, so that counters read
# before the warm-up and after the timed run can be divided by every request they saw.
count_load_requests() {
    local warmup_summary warmup_requests=0
    if warmup_summary=$(parse_load "$1" <<<"$2"); then
        read -r _ _ _ warmup_requests <<<"$warmup_summary"
    fi
    LOAD_REQUESTS=$((warmup_requests + $3))
}

# smoke_check MODE [PATH]: one request through the running proxy must answer 200 before we time
# it, so a proxy that refuses fast is never reported as fast.
# MODE: forward | reverse | connect | connect-tls | forward-to-tls (http:// to the TLS port) | reverse-tls.
# SMOKE_HTTP_PORT, when set, is the plain origin a forward request goes to (another origin than nginx).
smoke_check() {
    local mode=$1 path=${2:-/1k} code
    local curl_args=(-s -k -o /dev/null -w '%{http_code}' --max-time 5)
    case $mode in
    forward) curl_args+=(-x "http://127.0.0.1:$PROXY_PORT" "http://127.0.0.1:${SMOKE_HTTP_PORT:-$UP_HTTP_PORT}$path") ;;
    reverse) curl_args+=("http://127.0.0.1:$PROXY_PORT$path") ;;
    reverse-tls) curl_args+=("http://127.0.0.1:$PROXY_TLS_PORT$path") ;;
    terminate-tls) curl_args+=("https://127.0.0.1:$PROXY_TERMINATE_PORT$path") ;;
    connect) curl_args+=(-p -x "http://127.0.0.1:$PROXY_PORT" "http://127.0.0.1:$UP_HTTP_PORT$path") ;;
    connect-tls) curl_args+=(-x "http://127.0.0.1:$PROXY_PORT" "https://127.0.0.1:$UP_HTTPS_PORT$path") ;;
    forward-to-tls) curl_args+=(-x "http://127.0.0.1:$PROXY_PORT" "http://127.0.0.1:$UP_HTTPS_PORT$path") ;;
    esac
    code=$(curl "${curl_args[@]}")
    if [[ $code != 200 ]]; then
        START_FAILURE="smoke request ($mode $path) answered ${code:-nothing} instead of 200"
        return 1
    fi
}

# begin SUBJECT MEASUREMENT SMOKE [VARIANT] [PATH]: start the subject's proxy (nothing for
# "direct") and check it; on failure record the reason and return 1. A subject "KIND-noauth" is
# proxy KIND measured on a path without auth, reported in a row of its own.
begin() {
    local subject=$1 measurement=$2 smoke=$3 variant=${4:-} path=${5:-/1k}
    [[ $subject == direct ]] && return 0
    if ! start_proxy "${subject%-noauth}" "$variant"; then
        record "$measurement" "$subject" "" "" "failed ($START_FAILURE)"
        return 1
    fi
    if ! smoke_check "$smoke" "$path"; then
        record "$measurement" "$subject" "" "" "failed ($START_FAILURE)"
        stop_proxy
        return 1
    fi
}

finish() { [[ $1 == direct ]] || stop_proxy; }

# proxy_ticks: "USER SYSTEM" CPU clock ticks the running proxy has used so far; empty when none
# runs ("direct").
proxy_ticks() {
    local pid
    pid=$(pid_of "${PROXY_NAME:-}")
    [[ -n $pid ]] && cpu_ticks "$pid"
}

# cpu_us_per_request TICKS_BEFORE TICKS_AFTER REQUESTS: the proxy's CPU time per request over a
# run, or nothing without a proxy. The client and origin share a core and often set the pace;
# what each proxy spends per request on its own core is then what tells proxies apart.
cpu_us_per_request() {
    [[ -n $1 && -n $2 ]] && (($3 > 0)) || return 0
    local u0 s0 u1 s1
    read -r u0 s0 <<<"$1"
    read -r u1 s1 <<<"$2"
    awk -v t="$((u1 + s1 - u0 - s0))" -v hz="$(getconf CLK_TCK)" -v n="$3" 'BEGIN {printf "%.1f", t * 1e6 / hz / n}'
}

# cpu_split_per_request TICKS_BEFORE TICKS_AFTER REQUESTS: "USER SYSTEM" microseconds per request,
# or nothing without a proxy. Where two proxies make the same system calls per request, the user
# share is what one does that the other does not.
cpu_split_per_request() {
    [[ -n $1 && -n $2 ]] && (($3 > 0)) || return 0
    local u0 s0 u1 s1
    read -r u0 s0 <<<"$1"
    read -r u1 s1 <<<"$2"
    awk -v u="$((u1 - u0))" -v s="$((s1 - s0))" -v hz="$(getconf CLK_TCK)" -v n="$3" \
        'BEGIN {printf "%.1f %.1f", u * 1e6 / hz / n, s * 1e6 / hz / n}'
}

# run_wrk MEASUREMENT SUBJECT URL [absolute]: a warm-up, then the timed run; records req/s and p99.
run_wrk() {
    local measurement=$1 subject=$2 url=$3 form=${4:-}
    local args=(-t1 "-c$BENCH_CONNECTIONS" --latency "${WRK_EXTRA[@]}")
    [[ $form == absolute ]] && args+=(-s "$BENCH_DIR/wrk-absolute-form.lua")
    local connect_url=$url
    if [[ $form == absolute ]]; then
        export BENCH_TARGET_URL=$url
        connect_url="http://127.0.0.1:$PROXY_PORT/"
    fi
    local warmup
    warmup=$("${LOAD[@]}" wrk "${args[@]}" "-d${BENCH_WARMUP_SECONDS}s" "$connect_url" 2>&1)
    local report ticks_before ticks_after
    ticks_before=$(proxy_ticks)
    start_profile "$measurement" "$subject"
    report=$("${LOAD[@]}" wrk "${args[@]}" "-d${BENCH_SECONDS}s" "$connect_url" 2>&1)
    stop_profile
    ticks_after=$(proxy_ticks)
    settle_load wrk "$measurement" "$subject" "$warmup" "$report" "$ticks_before" "$ticks_after"
}

# start_profile MEASUREMENT SUBJECT / stop_profile: with BENCH_PROFILE_DIR set, `perf record` samples the
# proxy (user and kernel, with call graphs) over the timed run into DIR/MEASUREMENT-SUBJECT-N.data, to
# see where the time of a figure goes. Sampling costs the proxy CPU: a profiled run's figures are not
# comparable with an unprofiled one's.
start_profile() {
    PROFILE_PID=
    [[ -n ${BENCH_PROFILE_DIR:-} ]] || return 0
    local pid
    pid=$(pid_of "${PROXY_NAME:-}")
    [[ -n $pid ]] || return 0
    # nginx and Squid work in children of the process started: sample the whole tree.
    pid=$(printf '%s,' "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null))
    pid=${pid%,}
    mkdir -p "$BENCH_PROFILE_DIR"
    local n=1
    while [[ -e $BENCH_PROFILE_DIR/$1-$2-$n.data ]]; do n=$((n + 1)); done
    perf record -q -F 4999 -g -p "$pid" -o "$BENCH_PROFILE_DIR/$1-$2-$n.data" >/dev/null 2>&1 &
    PROFILE_PID=$!
}

stop_profile() {
    [[ -n ${PROFILE_PID:-} ]] || return 0
    kill -INT "$PROFILE_PID" 2>/dev/null
    wait "$PROFILE_PID" 2>/dev/null || true
    PROFILE_PID=
}

# settle_load TOOL MEASUREMENT SUBJECT WARMUP_REPORT REPORT TICKS_BEFORE TICKS_AFTER: keeps the
# report, sets LOAD_* from it and, unless LOAD_QUIET=1, records the figures (or why there are none).
settle_load() {
    local tool=$1 measurement=$2 subject=$3 warmup=$4 report=$5 summary rps p99 errors requests
    printf '%s\n' "$report" >"$WORK/$tool-$measurement-$subject.txt"
    LOAD_REQUESTS=0 LOAD_RPS= LOAD_CPU= LOAD_CPU_SPLIT=
    if ! summary=$(parse_load "$tool" <<<"$report"); then
        record "$measurement" "$subject" "" "" "failed ($tool reported no throughput: $(tail -n 1 <<<"$report"))"
        return
    fi
    read -r rps p99 errors requests <<<"$summary"
    count_load_requests "$tool" "$warmup" "$requests"
    LOAD_RPS=$rps LOAD_P99=$p99 LOAD_ERRORS=$errors LOAD_CPU=$(cpu_us_per_request "$6" "$7" "$requests")
    LOAD_CPU_SPLIT=$(cpu_split_per_request "$6" "$7" "$requests")
    [[ $LOAD_QUIET == 1 ]] && return
    record_load "$measurement" "$subject"
}

# record_load MEASUREMENT SUBJECT: the last run's req/s, p99 and proxy CPU per request.
record_load() {
    local remark=
    ((LOAD_ERRORS > 0)) && remark="$LOAD_ERRORS errors or non-2xx responses: figure not comparable"
    record "$1" "$2" "req/s" "$LOAD_RPS" "$remark"
    record "$1" "$2" "p99 ms" "$LOAD_P99"
    [[ -n $LOAD_CPU ]] && record "$1" "$2" "proxy CPU us/req" "$LOAD_CPU"
    record_split "$1" "$2" "$LOAD_CPU_SPLIT"
    return 0
}

parse_load() { python3 "$BENCH_DIR/parse_load.py" "$@"; }

# measure_in_rounds MEASUREMENT SUBJECT...: BENCH_ROUNDS rounds, each running every subject once
# in turn, with medians reported. Two proxies whose CPU per request lies within this machine's
# run-to-run noise (±15%) are then compared over the same stretch of time, not one run apiece.
measure_in_rounds() {
    local measurement=$1 subject round
    shift
    local -A rps_of=() p99_of=() cpu_of=() split_of=() errors_of=()
    for ((round = 1; round <= BENCH_ROUNDS; round++)); do
        for subject in "$@"; do
            LOAD_RPS=
            LOAD_QUIET=1 "measure_$measurement" "$subject"
            [[ -z $LOAD_RPS ]] && continue # the failure is recorded
            rps_of[$subject]+="$LOAD_RPS " p99_of[$subject]+="$LOAD_P99 " cpu_of[$subject]+="${LOAD_CPU:+$LOAD_CPU }"
            [[ -n $LOAD_CPU_SPLIT ]] && split_of[$subject]+="${LOAD_CPU_SPLIT/ /:} "
            errors_of[$subject]=$((${errors_of[$subject]:-0} + LOAD_ERRORS))
        done
    done
    for subject in "$@"; do
        [[ -n ${rps_of[$subject]:-} ]] || continue
        local rps=(${rps_of[$subject]}) p99=(${p99_of[$subject]}) cpu=(${cpu_of[$subject]:-})
        record_rounds "$measurement" "$subject" "${errors_of[$subject]}" rps p99 cpu
        [[ -n ${split_of[$subject]:-} ]] || continue
        local users=() systems=() pair
        for pair in ${split_of[$subject]}; do users+=("${pair%:*}") systems+=("${pair#*:}"); done
        record_split "$measurement" "$subject" "$(median "${users[@]}") $(median "${systems[@]}")"
    done
}

# record_split MEASUREMENT SUBJECT "USER SYSTEM": the proxy's CPU per request split into user and
# kernel time (nothing when there is no proxy).
record_split() {
    [[ -n $3 ]] || return 0
    record "$1" "$2" "user us/req" "${3% *}"
    record "$1" "$2" "system us/req" "${3#* }"
}

# 1. Plain forward, keep-alive, 1 KiB responses.
measure_plain() {
    local subject=$1 origin="http://127.0.0.1:$UP_HTTP_PORT/1k"
    case $subject in
    direct) run_wrk plain direct "$origin" ;;
    nginx)
        begin nginx plain reverse || return 0
        run_wrk plain nginx "http://127.0.0.1:$PROXY_PORT/1k"
        finish nginx
        ;;
    *)
        begin "$subject" plain forward || return 0
        run_wrk plain "$subject" "$origin" absolute
        finish "$subject"
        ;;
    esac
}

# run_hey MEASUREMENT SUBJECT URL [PROXY_URL]: HTTPS load, through a proxy's CONNECT when given.
run_hey() {
    local measurement=$1 subject=$2 url=$3 proxy=${4:-}
    local args=(-c "$BENCH_CONNECTIONS" "${HEY_EXTRA[@]}")
    [[ -n $proxy ]] && args+=(-x "$proxy")
    local warmup
    warmup=$("${LOAD[@]}" hey "${args[@]}" -z "${BENCH_WARMUP_SECONDS}s" "$url" 2>&1)
    local report ticks_before ticks_after
    ticks_before=$(proxy_ticks)
    report=$("${LOAD[@]}" hey "${args[@]}" -z "${BENCH_SECONDS}s" "$url" 2>&1)
    ticks_after=$(proxy_ticks)
    settle_load hey "$measurement" "$subject" "$warmup" "$report" "$ticks_before" "$ticks_after"
}

# run_curl_parallel MEASUREMENT SUBJECT URL [PROXY_URL]: HTTPS keep-alive load with curl's parallel
# transfers (BENCH_CONNECTIONS at once, each connection and its tunnel reused), through a proxy's
# CONNECT when given: BENCH_TLS_REQUESTS/10 as a warm-up, then BENCH_TLS_REQUESTS timed; records
# req/s over the wall-clock time and p99 of the transfers' own times. Not hey: hey's Go client
# opens a new connection for about one request in five at 50 concurrent (its idle pool churns),
# so it timed TLS handshakes on the origin rather than the tunnel.
run_curl_parallel() {
    local measurement=$1 subject=$2 url=$3 proxy=${4:-}
    local args=(-s -k -Z --parallel-max "$BENCH_CONNECTIONS" --no-progress-meter -w '%{http_code} %{time_total}\n')
    [[ -n $proxy ]] && args+=(-x "$proxy")
    args+=("${CURL_EXTRA[@]}")
    local warmup_list="$WORK/curl-$measurement-warmup.cfg" timed_list="$WORK/curl-$measurement.cfg"
    curl_url_list "$url" "$((BENCH_TLS_REQUESTS / 10))" >"$warmup_list"
    curl_url_list "$url" "$BENCH_TLS_REQUESTS" >"$timed_list"
    local warmup started ended report ticks_before ticks_after
    # parse_load counts a curl report's transfers only with its "elapsed" line.
    warmup=$("${LOAD[@]}" curl "${args[@]}" -K "$warmup_list" 2>&1)$'\n'"elapsed 1"
    ticks_before=$(proxy_ticks)
    started=$(date +%s.%N)
    start_profile "$measurement" "$subject"
    report=$("${LOAD[@]}" curl "${args[@]}" -K "$timed_list" 2>&1)
    stop_profile
    ended=$(date +%s.%N)
    ticks_after=$(proxy_ticks)
    report+=$'\n'"elapsed $(awk -v a="$started" -v b="$ended" 'BEGIN {printf "%.6f", b - a}')"
    settle_load curl "$measurement" "$subject" "$warmup" "$report" "$ticks_before" "$ticks_after"
}

# curl_url_list URL COUNT: a curl config fetching URL COUNT times, bodies discarded.
curl_url_list() {
    local line
    printf -v line 'url = "%s"\noutput = "/dev/null"\n' "$1"
    for ((i = 0; i < $2; i++)); do printf '%s' "$line"; done
}

# 2. HTTPS through a blind CONNECT tunnel, keep-alive (curl -k: the origin is self-signed).
measure_connect() {
    local subject=$1 origin="https://127.0.0.1:$UP_HTTPS_PORT/1k"
    case $subject in
    direct) run_curl_parallel connect direct "$origin" ;;
    nginx) record connect nginx "" "" "n/a (nginx cannot serve CONNECT)" ;;
    *)
        begin "$subject" connect connect-tls || return 0
        run_curl_parallel connect "$subject" "$origin" "http://127.0.0.1:$PROXY_PORT"
        finish "$subject"
        ;;
    esac
}

# 3. Bulk download through a CONNECT tunnel: median MB/s (10^6 bytes) of BENCH_BULK_RUNS fetches.
measure_bulk() {
    local subject=$1 url proxy_args=()
    case $subject in
    nginx)
        record bulk nginx "" "" "n/a (nginx cannot serve CONNECT)"
        return
        ;;
    direct) ;;
    *)
        begin "$subject" bulk connect || return 0
        proxy_args=(-p -x "http://127.0.0.1:$PROXY_PORT")
        ;;
    esac
    if [[ $BENCH_BULK_SCHEME == https ]]; then
        url="https://127.0.0.1:$UP_HTTPS_PORT/big"
    else
        url="http://127.0.0.1:$UP_HTTP_PORT/big"
    fi
    fetch_bulk bulk "$subject" "$url" "over $BENCH_BULK_SCHEME" -k "${proxy_args[@]}"
    finish "$subject"
}

# fetch_bulk MEASUREMENT SUBJECT URL NOTE [curl arguments]: BENCH_BULK_RUNS downloads of the
# BENCH_BULK_MIB file; records the median MB/s and, through a proxy, its CPU time per MiB.
fetch_bulk() {
    local measurement=$1 subject=$2 url=$3 what=$4
    shift 4
    local speeds=() run result failure= before after
    before=$(proxy_ticks)
    for ((run = 0; run < BENCH_BULK_RUNS; run++)); do
        result=$("${LOAD[@]}" curl -s "$@" --max-time "$((BENCH_SECONDS * 3))" -o /dev/null \
            -w '%{http_code} %{size_download} %{speed_download}' "$url")
        read -r code size speed <<<"$result"
        if [[ $code != 200 || $size != $((BENCH_BULK_MIB * 1048576)) ]]; then
            failure="fetch answered ${code:-nothing} with ${size:-0} of $((BENCH_BULK_MIB * 1048576)) bytes"
            break
        fi
        speeds+=("$speed")
    done
    after=$(proxy_ticks)
    if [[ -n $failure ]]; then
        record "$measurement" "$subject" "" "" "failed ($failure)"
        return
    fi
    local median cpu
    median=$(printf '%s\n' "${speeds[@]}" | sort -n | awk '{v[NR]=$1} END {printf "%.0f", v[int((NR+1)/2)] / 1e6}')
    record "$measurement" "$subject" "MB/s" "$median" "median of $BENCH_BULK_RUNS x $BENCH_BULK_MIB MiB $what"
    cpu=$(cpu_us_per_request "$before" "$after" "$((BENCH_BULK_MIB * BENCH_BULK_RUNS))")
    [[ -n $cpu ]] && record "$measurement" "$subject" "proxy CPU us/MiB" "$cpu"
    return 0
}

# 4. Memory per idle CONNECT tunnel, BENCH_TUNNELS of them, on a freshly started proxy.
measure_idle() {
    local subject=$1
    case $subject in
    direct) return ;;
    nginx)
        record idle nginx "" "" "n/a (nginx cannot serve CONNECT)"
        return
        ;;
    esac
    begin "$subject" idle connect || return 0
    run_idle_script idle "$subject" tunnel "$BENCH_TUNNELS" --target "127.0.0.1:$UP_HTTP_PORT"
    finish "$subject"
}

# run_idle_script MEASUREMENT SUBJECT UNIT COUNT [idle_tunnels.py arguments]: COUNT idle connections
# through the running proxy; records the memory growth per connection ("KiB/UNIT RSS" and Pss).
run_idle_script() {
    local measurement=$1 subject=$2 unit=$3 count=$4
    shift 4
    local report
    if report=$("${LOAD[@]}" python3 "$BENCH_DIR/idle_tunnels.py" --proxy-port "$PROXY_PORT" \
        --pid "$(pid_of "$PROXY_NAME")" --count "$count" "$@" 2>&1); then
        printf '%s\n' "$report" >"$WORK/$measurement-$subject.json"
        local rss pss opened alive failure
        read -r rss pss opened alive failure < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print(r["rss_kib_per_tunnel"], r["pss_kib_per_tunnel"], r["opened"], r["alive_at_measurement"], r["first_failure"] or "")
' "$report")
        local remark="$opened ${unit}s"
        [[ $opened != "$count" ]] && remark="only $opened of $count opened: $failure"
        [[ $alive != "$opened" ]] && remark+="; only $alive still open when measured"
        record "$measurement" "$subject" "KiB/$unit RSS" "$rss" "$remark"
        record "$measurement" "$subject" "KiB/$unit Pss" "$pss"
    else
        record "$measurement" "$subject" "" "" "failed ($(tail -n 1 <<<"$report"))"
    fi
}
