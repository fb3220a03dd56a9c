#!/usr/bin/env python3
"""bench/peers/cpu.py -- the CPU seconds a server has used so far.

Usage: cpu.py PID
       cpu.py --run FILE CMD...


Prints the user and system time of process PID and of every child it has
reaped (utime + stime + cutime + cstime in /proc/PID/stat), plus the user
and system time of its children that still run.  For PostgreSQL's
postmaster that is the whole server: backends that end are reaped by the
postmaster, whose cutime and cstime then hold their time.  For a
single-process server (mariadbd, beanstalkd) it is the process, all its
threads included.  Exits 1 when PID does not run.

With --run, runs CMD (its output passes through), then writes into FILE
the user and system seconds CMD and its descendants used: what an
in-process database (SQLite) costs, having no server.  Exits with CMD's
status.
"""
import os
import sys


def fields(pid):
    """The fields of /proc/PID/stat after the command name, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rindex(")") + 2:].split()


def run(out, cmd):
    """Run cmd; write its CPU seconds into the file out; its exit status."""
    import resource
    import subprocess
    rc = subprocess.call(cmd)
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        f.write(f"{r.ru_utime + r.ru_stime:.3f}\n")
    return rc


def main():
    if sys.argv[1] == "--run":
        sys.exit(run(sys.argv[2], sys.argv[3:]))
    root = int(sys.argv[1])
    own = fields(root)
    if own is None:
        sys.exit(f"cpu.py: no process {root}")
    # After the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14).
    ticks = sum(int(x) for x in own[11:15])
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != root:
            f = fields(name)
            if f and int(f[1]) == root:
                ticks += int(f[11]) + int(f[12])
    print(f"{ticks / os.sysconf('SC_CLK_TCK'):.3f}")


main()
