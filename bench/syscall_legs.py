"""Reads an `strace -f -yy` log and prints the system calls per request on each leg (see
bench/syscalls.sh): usage: syscall_legs.py TRACE REQUESTS CLIENT_PORT UPSTREAM_PORT NAME."""
import collections
import re
import sys

CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+)?(?:\d+\s+)?([a-z_0-9]+)\((.*)$")


def leg(descriptor, client_port, upstream_port):
    """The leg a descriptor annotated by -yy belongs to, by the ports of its TCP connection."""
    if re.search(r":%s->" % client_port, descriptor):
        return "client"
    if re.search(r"->[^\]]*:%s\]" % upstream_port, descriptor):
        return "upstream"
    return "other"


def main():
    path, requests, client_port, upstream_port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    counts = collections.Counter()
    with open(path) as trace:
        for line in trace:
            match = CALL.match(line)
            if not match:
                continue   # "<... resumed>" halves: the call was counted where it began
            call, arguments = match.group(1), match.group(2).split(", ")
            if call == "epoll_ctl":
                where = leg(arguments[2] if len(arguments) > 2 else "", client_port, upstream_port)
                call += " " + (arguments[1].replace("EPOLL_CTL_", "") if len(arguments) > 1 else "?")
            elif call.startswith("epoll_wait") or call.startswith("epoll_pwait"):
                where = "loop"
            else:
                where = leg(arguments[0], client_port, upstream_port)
            if "= -1 EAGAIN" in line:
                call += " (EAGAIN)"
            counts[(where, call)] += 1
    total = sum(counts.values())
    print("%s: %.2f system calls per request (%d in %d requests)" % (name, total / requests, total, requests))
    # Calls made once per connection or by timers are listed apart, in a line, with their counts.
    rare = []
    for (where, call), count in sorted(counts.items()):
        if count / requests < 0.05:
            rare.append("%s %s %d" % (where, call, count))
            continue
        print("  %-8s %-24s %6.2f" % (where, call, count / requests))
    if rare:
        print("  not per request: " + ", ".join(rare))


if __name__ == "__main__":
    main()
