"""Peak resident memory of a process tree (a server, its workers, their ripgrep children).

Sampled from /proc at a short interval and summed over every live descendant, keeping the
maximum: what a machine running the server actually has to hold at once. Also the CPU time
such a tree has used: on a shared machine, CPU per request varies far less than requests
per second, which swing with whatever else runs.
"""

from __future__ import annotations

import os
import threading
from types import TracebackType


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: fields start after the last ')'
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    return children


def tree_pids(root: int) -> list[int]:
    """`root` and all its live descendants."""
    children = _children_map()
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, ()))
    return pids


def cpu_seconds(root: int) -> float:
    """User plus system CPU time used so far by `root` and its live descendants."""
    total = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _status_bytes(pid: int, field: bytes) -> int:
    """A size field of /proc/<pid>/status (given in kB there), 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def rss_bytes(pid: int) -> int:
    """Resident set size of one process, 0 once it is gone."""
    return _status_bytes(pid, b"VmRSS:")


def peak_rss_bytes(pid: int) -> int:
    """The most one process has ever held resident (the kernel's high-water mark, VmHWM),
    0 once it is gone: a peak no sampling can miss."""
    return _status_bytes(pid, b"VmHWM:")


def holding(root: int, name: str) -> int | None:
    """The first descendant of `root` whose name (comm) or one of whose open files (the
    targets of /proc/<pid>/fd, e.g. a memfd's name) holds `name`."""
    for pid in tree_pids(root)[1:]:
        try:
            with open(f"/proc/{pid}/comm") as f:
                names = [f.read()]
            names += [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:  # gone, or a descriptor closed while read
            continue
        if any(name in one for one in names):
            return pid
    return None


class PeakRss:
    """Context manager: samples the tree under `root` every `interval` seconds while the
    block runs; `.peak` is the largest sum seen, `.processes` the most processes seen,
    `.by_pid` each process's own peak (to tell which one holds the memory)."""

    def __init__(self, root: int, interval: float = 0.002) -> None:
        self.root = root
        self.interval = interval
        self.peak = 0
        self.processes = 0
        self.by_pid: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        sizes = {pid: rss_bytes(pid) for pid in tree_pids(self.root)}
        self.processes = max(self.processes, len(sizes))
        self.peak = max(self.peak, sum(sizes.values()))
        for pid, size in sizes.items():
            self.by_pid[pid] = max(size, self.by_pid.get(pid, 0))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> "PeakRss":
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
