"""The test harness's own promise: two runs side by side (two pytest processes, say) are never
handed the same loopback port, even when they probe the same ports in the same order."""
import subprocess
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
