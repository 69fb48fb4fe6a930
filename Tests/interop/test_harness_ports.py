"""The test harness's own promise: two runs side by side (two pytest processes, say) are never
handed the same loopback port, even when they probe the same ports in the same order."""
import subprocess
import time
import sys
from pathlib import Path

from harness import ports

HOLDER = """
import sys
sys.path.insert(0, sys.argv[1])
from harness import ports
ports._cursor = int(sys.argv[2])
print(ports.free_port(), flush=True)
sys.stdin.read()   # holds the port's claim until told to end
"""


def test_a_port_another_run_was_handed_is_never_handed_here():
    start = 7   # both runs probe from the same place in the range
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(Path(__file__).parent), str(start)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        theirs = int(holder.stdout.readline())
        ports._cursor = start
        mine = ports.free_port()
        assert mine != theirs, f"port {mine} was handed to two runs at once"
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)


BENCH_RUN = """
source "$1/bench/lib/common.sh"
port=$(free_port)   # as the bench scripts ask, so the allocator's own process has ended
echo "$port"
read -r   # the bench run goes on until told to end
"""


def test_a_port_a_bench_run_was_handed_stays_claimed_until_that_run_ends():
    # bench/lib/common.sh's free_port runs the allocator in a subshell of its own: the port's
    # claim must outlive that subshell, for as long as the bench's shell does.
    repo = Path(__file__).resolve().parents[2]
    bench = subprocess.Popen(["bash", "-c", BENCH_RUN, "bench", str(repo)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        theirs = int(bench.stdout.readline())
        assert not ports._claim(theirs), f"port {theirs} was free to claim while the bench run that was handed it went on"
    finally:
        bench.stdin.close()
        bench.wait(timeout=10)
    # Once the run has ended its claim goes (its holder looks once a second).
    deadline = time.monotonic() + 10
    while not ports._claim(theirs):
        assert time.monotonic() < deadline, f"port {theirs} stayed claimed after the bench run ended"
        time.sleep(0.1)
