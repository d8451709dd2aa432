"""CPU-seconds of a process and all its descendants, read from Linux's ``/proc``.

A trainer may fork workers (a process pool, Ray's raylet and workers, RLCard's
actors), so its cost is the user and system time of every process under it. Each
process's ``/proc/PID/stat`` gives its own times and those of the children it has
waited for; summing both over the live tree counts a finished child once, in its
parent's total, and a running one once, in its own.
"""

from __future__ import annotations

import os

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # the fields after the command's name


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    found += [int(child) for child in handle.read().split()]
            except OSError:
                continue
    except OSError:
        pass
    return found


def tree_cpu_seconds(root: int) -> float:
    """The CPU-seconds (user and system) of ``root`` and every process under it.

    Args:
        root: a process id.

    Returns:
        The seconds, or 0.0 if the process is gone.
    """
    total = 0
    stack = [root]
    seen: set[int] = set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        fields = _stat(pid)
        if fields is None:
            continue
        # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the name
        total += sum(int(v) for v in fields[11:15])
        stack += _children(pid)
    return total / TICKS


class CpuMeter:
    """A never-decreasing count of a process tree's CPU-seconds.

    A child that has exited but is not yet waited for drops out of the tree for a
    moment; the meter keeps the highest count seen, so that it never goes back.

    Args:
        root: the tree's root process id.
    """

    def __init__(self, root: int):
        self.root = root
        self.best = 0.0

    def seconds(self) -> float:
        """The tree's CPU-seconds so far.

        Returns:
            The highest count read so far.
        """
        self.best = max(self.best, tree_cpu_seconds(self.root))
        return self.best
