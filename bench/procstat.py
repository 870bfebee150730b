"""What the benchmarks read from /proc: a process's CPU time and resident memory, the load.

Linux only, like the machines the workshop server runs on.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used (fields 14 and 15 of /proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    """Resident memory of the process in MB (VmRSS of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def loadavg() -> str:
    """The 1-minute load average, as /proc/loadavg says it (2 cores here: 2.0 is full)."""
    return Path("/proc/loadavg").read_text().split()[0]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` percentile (0-100) by nearest rank; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
