"""The CPU a request costs, by process role and by thread, under the mixed load through HTTP (issue 20).

Starts the stack from each source tree given (``hermes-memory up --detach``, as ``bench_hosts.py`` does),
writes a short history for ``--users`` users, then runs the mixed load (16 closed-loop clients, 80 % recall /
20 % write, every query unique) for ``--seconds``, and reads the CPU time of every thread of the stack's
processes from ``/proc/<pid>/task/<tid>/stat`` before and after. Python threads carry the name of their
process at the OS level, so the hosts' and the replica's threads are named by ``py-spy dump`` (installed with
Ray) where it can read them: the embedder thread, the command threads, the outbox thread, the event loop and
Ray's own threads each get their line. Printed: requests/s, then CPU milliseconds per request by role and
thread (lines under 0.05 ms left out), and each role's sum.

    .venv/bin/python tests/bench/bench_threads.py                            # this checkout
    .venv/bin/python tests/bench/bench_threads.py --tree /path/to/base --rounds 2
    .venv/bin/python tests/bench/bench_threads.py --env HERMES_HOSTS=1           # another setting
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench import bench_hosts, loadgen, procstats  # noqa: E402

#: the roles whose Python threads are named (the others' threads are Ray's or Milvus's own, named already)
NAMED_ROLES = ("user hosts", "serve")
Key = tuple[str, str]


def thread_names(root: int) -> dict[int, str]:
    """Thread id → Python thread name (digits folded, so a pool's threads share a line), where py-spy can
    read the process."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    names: dict[int, str] = {}
    for pid in procstats.descendants(root):
        if procstats.role(pid) not in NAMED_ROLES:
            continue
        dump = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True).stdout
        for match in re.finditer(r'^Thread (\d+) \(\w+\): "([^"]+)"', dump, re.M):
            names[int(match.group(1))] = re.sub(r"\d+", "N", match.group(2))
    return names


def thread_cpu(root: int, names: dict[int, str]) -> Counter[Key]:
    """CPU seconds by (role, thread name) of every process under ``root``."""
    seconds: Counter[Key] = Counter()
    for pid in procstats.descendants(root):
        role = procstats.role(pid)
        for tid, cpu in procstats.thread_cpu_seconds(pid).items():
            name = names.get(tid) or re.sub(r"\d+", "N", procstats.thread_comm(pid, tid))
            seconds[(role, name)] += cpu
    return seconds


async def mixed(base_url: str, key: str, root: int, users: int, seconds: float) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:
        req = bench_hosts.Requests(client, key)
        names = [f"mix{n}" for n in range(users)]
        for user in names:
            await asyncio.gather(*(loadgen.timed(req.write(user)) for _ in range(3)))

        def one() -> loadgen.Request:
            return req.mixed(req.rng.choice(names), 0.2)

        await loadgen.closed_loop(one, 16, 5, 10_000, 30)  # warm
        threads = thread_names(root)
        before = thread_cpu(root, threads)
        result = await loadgen.closed_loop(one, 16, seconds, 100_000, 30)
        threads |= thread_names(root)
        after = thread_cpu(root, threads)
    done = max(1, len(result.samples))
    print(f"  {bench_hosts.figures(result)}, load average {os.getloadavg()[0]:.1f}")
    spent = {key: (after[key] - before.get(key, 0.0)) * 1000 / done for key in after}
    by_role: Counter[str] = Counter()
    for (role, name), ms in sorted(spent.items(), key=lambda item: -item[1]):
        by_role[role] += ms
        if ms >= 0.05:
            print(f"  | {role} | {name} | {ms:.2f} |")
    summed = ", ".join(f"{role} {ms:.2f}" for role, ms in by_role.most_common() if ms >= 0.05)
    print(f"  CPU ms per request: {summed}; total {sum(by_role.values()):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tree", type=Path, action="append", help="a source tree (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=1, help="run the trees this many times, alternating")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument(
        "--env", action="append", default=[], metavar="VAR=VALUE", help="run the stacks with this variable"
    )
    args = parser.parse_args()
    env = dict(assignment.split("=", 1) for assignment in args.env)
    for round_number in range(1, args.rounds + 1):
        for tree in args.tree or [REPO]:
            print(f"{tree}, round {round_number}:", flush=True)
            home = Path(tempfile.mkdtemp(prefix="hermes-threads-"))
            with bench_hosts.stack(tree, home, env, print) as (base_url, key, root):
                asyncio.run(mixed(base_url, key, root, args.users, args.seconds))
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
