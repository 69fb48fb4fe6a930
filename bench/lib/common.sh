# Shared helpers for bench/run.sh: logging, ports, pinned processes stopped by PID,
# config templates and the results file. Sourced, never run.

note() { printf '[bench] %s\n' "$*" >&2; }

# A free loopback port from the test harness's allocator (below the kernel's ephemeral range),
# never one this run or another run holds: the allocator claims each port with a lock on a file
# of its own (Tests/interop/harness/ports.py) and skips ports claimed already, and the lock lasts
# while a process holds it, so a child of the allocator keeps it until this bench's shell ($$) is
# gone. Each call runs in a subshell of its own, and the claims its predecessors' holders keep are
# what keeps it from handing a port out twice; two runs side by side (helpers counting
# instructions at once, a bench beside pytest) never share one either.
free_port() {
    python3 - "$(dirname "${BASH_SOURCE[0]}")/../../Tests/interop" "$$" <<'PY'
import os, sys, time
sys.path.insert(0, sys.argv[1])
from harness import ports
bench = int(sys.argv[2])
port = ports.free_port()
print(port, flush=True)
if os.fork() == 0:
    # The claim's holder: off the caller's output (so $(free_port) returns now), polling the
    # bench's shell once a second; it ends, and the port's lock with it, once the shell has.
    os.setsid()
    quiet = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(quiet, descriptor)
    while True:
        try:
            os.kill(bench, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        time.sleep(1)
os._exit(0)
PY
}

# wait_port PORT SECONDS: true once something accepts on 127.0.0.1:PORT.
wait_port() {
    local port=$1 deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# Percent of all cores' time spent busy over one second: other work on the machine makes
# every figure unreliable, so the report says so.
cpu_busy_percent() {
    local a b
    read -ra a < <(head -n 1 /proc/stat)
    sleep 1
    read -ra b < <(head -n 1 /proc/stat)
    # fields after "cpu": user nice system idle iowait irq softirq steal
    local total=0 idle i
    for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
    idle=$((b[4] - a[4] + b[5] - a[5]))
    ((total > 0)) && echo $(((total - idle) * 100 / total)) || echo 0
}

# Every process we start, by name; stopped by PID and by nothing broader.
declare -A BENCH_PIDS=()

# start_pinned NAME CORE COMMAND...: run COMMAND on CORE in the background, output in $WORK/NAME.{out,err}.
# nice and taskset exec the command, so the PID recorded is the program's own.
start_pinned() {
    local name=$1 core=$2
    shift 2
    nice -n "$BENCH_NICE" taskset -c "$core" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null &
    BENCH_PIDS[$name]=$!
}

pid_of() { printf '%s' "${BENCH_PIDS[$1]:-}"; }

# cpu_ticks PID: "USER SYSTEM" clock ticks (1/CLK_TCK s) spent by PID, its threads and its
# running descendants (Squid's helpers, for one).
cpu_ticks() { python3 "$BENCH_DIR/proctree.py" cpu-ticks "$1"; }

running() {
    local pid=${BENCH_PIDS[$1]:-}
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

# stop_pinned NAME: SIGTERM, then SIGKILL after 5 s if it is still there.
stop_pinned() {
    local name=$1 pid=${BENCH_PIDS[$1]:-}
    [[ -z $pid ]] && return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        local i
        for ((i = 0; i < 50; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null || true
    unset 'BENCH_PIDS[$name]'
}

stop_all() {
    local name
    for name in "${!BENCH_PIDS[@]}"; do
        stop_pinned "$name"
    done
}

# last_error NAME: the last non-empty line a process wrote to stderr (or stdout), for a failure reason.
last_error() {
    local line
    line=$(grep -v '^[[:space:]]*$' "$WORK/$1.err" 2>/dev/null | tail -n 1)
    [[ -z $line ]] && line=$(grep -v '^[[:space:]]*$' "$WORK/$1.out" 2>/dev/null | tail -n 1)
    printf '%s' "${line:0:200}"
}

# render TEMPLATE OUT: copy TEMPLATE replacing each @NAME@ by the exported variable NAME.
# An unset name is an error, so a typo in a template cannot silently produce a broken config.
render() {
    perl -pe 's/@([A-Z][A-Z0-9_]*)@/defined $ENV{$1} ? $ENV{$1} : die "bench: $ARGV uses \@$1\@, which is not set\n"/ge' \
        "$1" >"$2"
}

# record MEASUREMENT SUBJECT METRIC VALUE [NOTE]: one line of results; an empty VALUE carries the reason in NOTE.
record() {
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" >>"$RESULTS_TSV"
    if [[ -n $4 ]]; then
        note "$1 / $2: $3 = $4${5:+ ($5)}"
    else
        note "$1 / $2: ${5:-no figure}"
    fi
}

# Measurement names enabled by BENCH_ONLY (default: all of the current issue's).
enabled() {
    [[ " $BENCH_ONLY " == *" $1 "* ]]
}
