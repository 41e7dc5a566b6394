"""Latency by user popularity under the churn load, through HTTP (issue 20).

Under Zipf(1.1) popularity over 10,000 users the most popular user gets ~15 % of all requests: their calls
queue behind each other (one user's calls run one at a time, in order), so their latency shows how fast a
busy user's queue drains. Starts the stack from each source tree given (``hermes-memory up --detach``, as
``bench_hosts.py`` does), warms it with ``--warm-seconds`` of the load, then runs ``--seconds`` of 16
closed-loop clients, 80 % recall / 20 % write, every query unique, and prints requests/s and the p50 / p95
of recalls and writes for the users ranked 1, 2-5, 6-50 and below 50. ``--rounds N`` alternates the trees.

    .venv/bin/python tests/bench/bench_hot_users.py --tree . --tree /tmp/base --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench import loadgen  # noqa: E402
from tests.bench.bench_hosts import Requests, stack  # noqa: E402

BANDS = {"rank 1": (0, 1), "ranks 2-5": (1, 5), "ranks 6-50": (5, 50), "below 50": (50, 10**9)}


async def churn(base: str, key: str, seconds: float, users: int, zipf: float, clients: int) -> list:
    """(rank, op, ms, status) of every request of ``seconds`` of the churn load."""
    limits = httpx.Limits(max_connections=clients * 2)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        req = Requests(client, key)
        names = [f"c{n}" for n in range(users)]
        weights = list(itertools.accumulate(loadgen.zipf_weights(users, zipf)))
        rows: list = []
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < deadline:
                rank = req.rng.choices(range(users), cum_weights=weights)[0]
                op, send = req.mixed(names[rank], 0.2)
                sample = await loadgen.timed((op, send))
                rows.append((rank, op, sample.seconds * 1000, sample.status))

        await asyncio.gather(*(worker() for _ in range(clients)))
    return rows


def summary(rows: list, seconds: float) -> dict:
    out: dict = {"req/s": round(len(rows) / seconds, 1), "errors": sum(1 for r in rows if r[3] != 200)}
    for band, (low, high) in BANDS.items():
        for op in ("recall", "write"):
            ms = [r[2] for r in rows if low <= r[0] < high and r[1] == op and r[3] == 200]
            out[f"{band} {op}"] = (loadgen.percentile(ms, 0.5), loadgen.percentile(ms, 0.95), len(ms))
    ms = [r[2] for r in rows if r[1] == "recall" and r[3] == 200]
    out["all recall"] = (loadgen.percentile(ms, 0.5), loadgen.percentile(ms, 0.95), len(ms))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", help="source tree (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--warm-seconds", type=float, default=15.0)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args(argv)
    columns: dict[str, dict] = {}
    for round_ in range(1, args.rounds + 1):
        for tree in args.tree or [REPO]:
            name = f"{tree.resolve().name}, round {round_}"
            print(f"{name}: load average {os.getloadavg()}", flush=True)
            with tempfile.TemporaryDirectory(prefix="hermes-hot-") as home:
                with stack(tree.resolve(), Path(home), {}, print) as (base, key, _pid):
                    load = (args.users, args.zipf, args.clients)
                    asyncio.run(churn(base, key, args.warm_seconds, *load))
                    columns[name] = summary(asyncio.run(churn(base, key, args.seconds, *load)), args.seconds)
            print(f"  {columns[name]}", flush=True)
    names = list(columns)
    print("| figure (p50 / p95 ms, requests) | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for figure in next(iter(columns.values())):
        cells = []
        for name in names:
            value = columns[name][figure]
            if isinstance(value, tuple):
                cells.append("—" if value[0] is None else f"{value[0]:.0f} / {value[1]:.0f} ({value[2]})")
            else:
                cells.append(str(value))
        print(f"| {figure} | " + " | ".join(cells) + " |")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
