"""What a broker process costs, read from its own counters in ``/proc`` (Linux only): CPU
seconds (user + system, every thread), resident memory, and which process listens on a port.

    before = cpu_seconds(pid); ...; used = cpu_seconds(pid) - before
"""

from __future__ import annotations

import os
import re
import subprocess

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used so far, all its threads together."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # the command name (field 2) may hold spaces and parentheses: count fields after its end
    fields = stat[stat.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / _TICKS


def rss_bytes(pid: int) -> int:
    """The process's resident set size (VmRSS) in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def listening_pid(bootstrap: str) -> int | None:
    """The pid of the process listening on the first bootstrap address's port, if it runs on
    this machine under a user whose sockets ``ss`` may show us; else None."""
    port = bootstrap.split(",")[0].rsplit(":", 1)[1]
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    pids = {int(p) for p in re.findall(r"pid=(\d+)", out)}
    return pids.pop() if len(pids) == 1 else None


def broker_pid(parser, bootstrap: str, given: int | None) -> int:
    """The pid of the broker at ``bootstrap`` for a bench's CPU and memory figures: ``given``
    (its ``--compare-pid``), or whoever listens on its port; a usage error without one."""
    pid = given or listening_pid(bootstrap)
    if pid is None:
        parser.error(f"no pid for {bootstrap}: give --compare-pid")
    return pid
