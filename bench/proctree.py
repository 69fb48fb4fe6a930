#!/usr/bin/env python3
"""A process and everything below it, read from /proc: the proxies measured here may run
helpers (Squid's certificate generator, for one) whose memory and CPU are the proxy's too.

usage: proctree.py cpu-ticks PID   prints the user and the system clock ticks of PID's tree
"""
import os
import sys


def _stat_fields(pid):
    """The fields of /proc/PID/stat after the command name (state, ppid, ...), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(pid):
    """pid and every process below it."""
    children_of = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat_fields(entry)
        if fields is not None:
            children_of.setdefault(int(fields[1]), []).append(int(entry))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children_of.get(current, []))
    return found


def cpu_ticks(pid):
    """(utime, stime) in clock ticks of pid (all its threads) and its running descendants."""
    user = system = 0
    for process in descendants(pid):
        fields = _stat_fields(process)
        if fields is not None:
            user += int(fields[11])
            system += int(fields[12])
    return user, system


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "cpu-ticks":
        sys.exit("usage: proctree.py cpu-ticks PID")
    print(*cpu_ticks(int(sys.argv[2])))
