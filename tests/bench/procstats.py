"""Memory and CPU time of the processes this benchmark started (Ray's gcs/raylet and workers, the Milvus
server), read from ``/proc``: resident set (RSS) and proportional set (PSS, shared pages split between
sharers, so a sum of PSS does not count the shared Python/numpy pages once per worker), and the CPU seconds
each has used (user + system), summed by role.

Only descendants of the benchmark's own process are counted: other Ray clusters on the machine are not.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")

#: (cmdline prefix, role), first match wins. Ray titles a worker ``ray::<Class>.<method>``, and a named
#: actor's worker ``ray::<name>:<Class>.__init__`` while it is being constructed.
_ROLES = (
    ("ray::UserHost", "user hosts"),
    ("ray::host-pool", "host pool"),
    ("ray::HostPool", "host pool"),
    ("ray::host-", "user hosts"),
    ("ray::UserActor", "user actors"),
    ("ray::user:", "user actors"),
    ("ray::EmbedderActor", "embedder"),
    ("ray::IndexActor", "index"),
    ("ray::ActorDirectory", "directory"),
    ("ray::Serve", "serve"),
    ("ray::ProxyActor", "serve"),
    ("ray::IDLE", "idle workers"),
    ("ray::", "other ray workers"),
)


@dataclass
class RoleMemory:
    processes: int = 0
    rss_mb: float = 0.0
    pss_mb: float = 0.0


def _stat_fields(pid: int | str, tid: int | str | None = None) -> list[str] | None:
    """``/proc/<pid>/stat`` (or a thread's, ``/proc/<pid>/task/<tid>/stat``) from the state on (0: state,
    1: ppid, 11: utime, 12: stime), None once gone. The command name before them is in parentheses and may
    contain spaces: they follow the last ")"."""
    path = _PROC / str(pid) if tid is None else _PROC / str(pid) / "task" / str(tid)
    try:
        stat = (path / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def _cpu_seconds(fields: list[str]) -> float:
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) each live thread of ``pid`` has used."""
    try:
        tids = [int(entry.name) for entry in (_PROC / str(pid) / "task").iterdir()]
    except OSError:
        return {}
    fields = {tid: _stat_fields(pid, tid) for tid in tids}
    return {tid: _cpu_seconds(stat) for tid, stat in fields.items() if stat is not None}


def thread_comm(pid: int, tid: int) -> str:
    """The OS name of a thread (a Python thread keeps its process's name; Ray's and Milvus's name theirs)."""
    try:
        return (_PROC / str(pid) / "task" / str(tid) / "comm").read_text().strip()
    except OSError:
        return "gone"


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in _PROC.iterdir():
        fields = _stat_fields(entry.name) if entry.name.isdigit() else None
        if fields is not None:
            children[int(fields[1])].append(int(entry.name))
    return children


def descendants(root: int) -> list[int]:
    children = _children_map()
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def role(pid: int) -> str:
    try:
        cmdline = (_PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    for prefix, role in _ROLES:
        if cmdline.startswith(prefix):
            return role
    if "milvus-lite" in cmdline or "milvus_lite" in cmdline:
        return "milvus-lite"
    # started by localstack.milvus.MilvusStandaloneServer
    if cmdline.endswith("/milvus run standalone "):
        return "milvus standalone"
    return "ray core"  # gcs_server, raylet, log monitor, dashboard agents


def rollup_kb(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        for line in (_PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def memory_by_role(root: int | None = None) -> dict[str, RoleMemory]:
    """Per role: process count, summed RSS and PSS (MiB) of every descendant of ``root`` (default: us)."""
    roles: dict[str, RoleMemory] = defaultdict(RoleMemory)
    for pid in descendants(root if root is not None else os.getpid()):
        name = role(pid)
        rss, pss = rollup_kb(pid)
        if name == "gone" or rss == 0:
            continue
        entry = roles[name]
        entry.processes += 1
        entry.rss_mb += rss / 1024
        entry.pss_mb += pss / 1024
    return dict(roles)


def cpu_seconds_by_role(root: int) -> dict[str, float]:
    """Per role: CPU seconds (user + system) used so far by ``root`` (as "stack driver") and its descendants.
    The difference of two readings is what a phase cost; a process that ended between them is not counted."""
    roles: dict[str, float] = defaultdict(float)
    for pid in [root, *descendants(root)]:
        fields = _stat_fields(pid)
        name = "stack driver" if pid == root else role(pid)
        if fields is not None and name != "gone":
            roles[name] += _cpu_seconds(fields)
    return dict(roles)


def total(roles: dict[str, RoleMemory]) -> RoleMemory:
    summed = RoleMemory()
    for entry in roles.values():
        summed.processes += entry.processes
        summed.rss_mb += entry.rss_mb
        summed.pss_mb += entry.pss_mb
    return summed


def available_gb() -> float:
    """MemAvailable of the whole machine."""
    for line in (_PROC / "meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024**2
    return float("inf")
