"""This checkout against a baseline commit, through HTTP, in one run on one machine (issues 8 and 20).

Each tree is started as a user starts it (``hermes-memory up --detach``: SQLite, a milvus-lite server,
a local Ray, Serve, the real E5 embedder) from its own source tree — this checkout, and a git worktree of
``--baseline`` (default: ``f51fb89``, the path before issue 20's thin path; ``--baseline-tree`` reuses a
checkout already there) — and driven by the same load:

* **warm user, concurrency 1**: one user with a short history; writes (one turn each), then recalls, each
  query unique (no cache can answer it) — p50 / p95;
* **mixed**: ``--clients`` closed-loop clients, 80 % recall / 20 % write, every query unique, spread over
  ``--mixed-users`` users — requests/s, recall and write p95;
* **churn**: ``--churn-users`` users, Zipf(``--zipf``) popularity, same clients and mix: most requests meet a
  user who is not resident — requests/s, p95, errors, activations and their latency (``/v1/stats``);
* **a long history** (``--long-history N``): one more user written N LoCoMo turns (read from ``../shared``
  at run time), then an agent's turns one at a time: a write of the next turn and a recall of a LoCoMo
  question — p50 / p95 of each;
* **memory**: PSS of every process of the stack, by role, at the end of the churn run (and its peak);
  and, for this checkout, the bytes one resident user with a full active memory (1,250 items) holds.

Every phase is bounded by time and request count and stops by itself; the load average is printed so a
noisy machine shows (at the start of every phase). ``--rounds N`` runs the trees N times, alternating, so a
burst of load elsewhere on the machine shows as a disagreement between rounds rather than as a difference
between trees. Results go to stdout as a table and, with ``--out``, as JSON. Both trees run with the
Python running this script (the venv is shared, only ``PYTHONPATH`` differs).

    .venv/bin/python tests/bench/bench_hosts.py --quick                # ~8 min, both trees
    .venv/bin/python tests/bench/bench_hosts.py --quick --rounds 2     # ~16 min, both trees twice
    .venv/bin/python tests/bench/bench_hosts.py                        # the issue's sizes, both trees
    .venv/bin/python tests/bench/bench_hosts.py --no-baseline          # this checkout only
    .venv/bin/python tests/bench/bench_hosts.py --quick --long-history 2000   # and a user with a history
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench import loadgen, procstats  # noqa: E402

BASELINE_REF = "f51fb89"


@dataclass(frozen=True)
class Plan:
    history_turns: int = 30
    single_requests: int = 80
    mixed_users: int = 64
    mixed_seconds: float = 45.0
    churn_users: int = 10_000
    churn_seconds: float = 90.0
    clients: int = 16
    write_share: float = 0.2
    zipf: float = 1.1
    max_requests: int = 20_000
    grace_seconds: float = 30.0
    #: LoCoMo turns written to one more user before its turns are timed (0: no such phase)
    long_history: int = 0
    long_turns: int = 30


QUICK = Plan(history_turns=10, single_requests=30, mixed_users=16, mixed_seconds=15, churn_seconds=30)


# ----------------------------------------------------------------------------------------------- stack


@contextmanager
def stack(tree: Path, home: Path, extra_env: dict[str, str], say) -> Iterator[tuple[str, str, int]]:
    """``hermes-memory up --detach`` from ``tree``; yields (base URL, the demo tenant's key, stack pid)."""
    port = _free_port()
    inherited = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "HERMES_TRACE_FILE")}
    env = {**inherited, "PYTHONPATH": str(tree), "HERMES_MEMORY_HOME": str(home), **extra_env}
    command = [sys.executable, "-m", "cli.main", "up", "--detach", "--port", str(port), "--timeout", "600"]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=660)
    if result.returncode != 0:
        log = (home / "stack.log").read_text()[-3000:] if (home / "stack.log").exists() else ""
        raise SystemExit(f"stack did not start:\n{result.stdout}{result.stderr}{log}")
    say(f"  stack up in {time.perf_counter() - started:.0f} s")
    try:
        pid = int((home / "stack.pid").read_text().strip())
        yield f"http://127.0.0.1:{port}", (home / "demo.key").read_text().strip(), pid
    finally:
        subprocess.run(
            [sys.executable, "-m", "cli.main", "down"],
            cwd=tree,
            env=env,
            capture_output=True,
            timeout=300,
        )


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def baseline_tree(ref: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hermes-baseline-"))
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(path), ref], cwd=REPO, check=True, capture_output=True
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO, capture_output=True)


def stack_memory(pid: int) -> dict:
    roles = procstats.memory_by_role(pid)
    rss, pss = procstats.rollup_kb(pid)
    roles.setdefault("stack driver", procstats.RoleMemory())
    roles["stack driver"].processes += 1
    roles["stack driver"].rss_mb += rss / 1024
    roles["stack driver"].pss_mb += pss / 1024
    summed = procstats.total(roles)
    return {
        "roles": {name: asdict(entry) for name, entry in sorted(roles.items())},
        "total_pss_mb": round(summed.pss_mb),
    }


# ------------------------------------------------------------------------------------------------ load


class Requests:
    """Requests with unique recall queries (a serial number in each) and writes of fresh turns."""

    def __init__(self, client: httpx.AsyncClient, key: str, seed: int = 11):
        self.load = loadgen.Load(client, key, seed)
        self.rng = random.Random(seed)
        self.serial = itertools.count()

    def recall(self, user: str) -> loadgen.Request:
        body = {"query": f"{self.rng.choice(loadgen.RECALL_QUERIES)} (#{next(self.serial)})"}
        return "recall", lambda: self.load._post(f"/v1/users/{user}/recall", body)

    def write(self, user: str) -> loadgen.Request:
        return self.load.write(user)

    def mixed(self, user: str, write_share: float) -> loadgen.Request:
        return self.write(user) if self.rng.random() < write_share else self.recall(user)


def figures(result: loadgen.RunResult, op: str | None = None) -> dict:
    samples = result.samples if op is None else result.of(op)
    ok = [s.seconds * 1000 for s in samples if s.status == 200]
    p50, p95 = loadgen.percentile(ok, 0.50), loadgen.percentile(ok, 0.95)
    return {
        "requests": len(samples),
        "per_second": round(len(ok) / result.elapsed, 1) if result.elapsed else None,
        "p50_ms": None if p50 is None else round(p50, 1),
        "p95_ms": None if p95 is None else round(p95, 1),
        "errors": sum(1 for s in samples if s.status != 200) + result.unfinished,
    }


async def sequential(requests: list[loadgen.Request]) -> loadgen.RunResult:
    result = loadgen.RunResult()
    started = time.perf_counter()
    for request in requests:
        result.samples.append(await loadgen.timed(request))
    result.elapsed = time.perf_counter() - started
    return result


async def long_user(req: Requests, plan: Plan, say) -> dict:
    """An agent's turns on a user with a long history, one request at a time: ``plan.long_history`` LoCoMo
    turns written first, then ``plan.long_turns`` turns of a write (the next LoCoMo turn) and a recall (a
    LoCoMo question); the recall after a write is the one that rebuilds what recall derives from the items."""
    said, asked = loadgen.locomo_dialogue()
    turns, questions = itertools.cycle(said), itertools.cycle(asked)

    def write() -> loadgen.Request:
        body = loadgen.turn_body(next(turns), next(req.serial), "long", per_session=20)
        return "write", lambda: req.load._post("/v1/users/long/turns", body)

    def recall() -> loadgen.Request:
        body = {"query": next(questions)}
        return "recall", lambda: req.load._post("/v1/users/long/recall", body)

    say(f"  long user: {plan.long_history} LoCoMo turns of history")
    history = await sequential([write() for _ in range(plan.long_history)])
    say(f"  long user's turns (load average {_load()})")
    before = await req.load.stats()
    timed = await sequential([request for _ in range(plan.long_turns) for request in (write(), recall())])
    prepared = (await req.load.stats()).get("prepared_recalls", 0) - before.get("prepared_recalls", 0)
    out = {
        "long_history": figures(history),
        "long_write_c1": figures(timed, "write"),
        "long_recall_c1": figures(timed, "recall"),
        "long_prepared_recalls": prepared,
    }
    say(f"    write {out['long_write_c1']}\n    recall after a write {out['long_recall_c1']}")
    say(f"    recalls prepared by the host after a write: {prepared} of {plan.long_turns}")
    return out


def cpu_per_request(before: dict[str, float], after: dict[str, float], result: loadgen.RunResult) -> dict:
    """CPU milliseconds per request of a phase, by role of the stack's processes, and their sum: on 2 cores,
    2,000 divided by the sum is the throughput the stack could reach with the CPU to itself."""
    done = max(1, len(result.samples))
    spent = {role: (after.get(role, 0.0) - before.get(role, 0.0)) * 1000 / done for role in after}
    shown = {role: round(ms, 2) for role, ms in sorted(spent.items(), key=lambda p: -p[1]) if ms >= 0.05}
    return {**shown, "total": round(sum(spent.values()), 1)}


async def drive(base_url: str, key: str, pid: int, plan: Plan, say) -> dict:
    out: dict = {}
    limits = httpx.Limits(max_connections=plan.clients * 2)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as client:
        req = Requests(client, key)
        say("  history for the warm and mixed users")
        await sequential([req.write("warm") for _ in range(plan.history_turns)])
        mixed_users = [f"mix{n}" for n in range(plan.mixed_users)]
        for user in mixed_users:
            await asyncio.gather(*(loadgen.timed(req.write(user)) for _ in range(3)))
        say(f"  warm user, concurrency 1 (load average {_load()})")
        out["load"] = {"c1": _load()}
        out["write_c1"] = figures(await sequential([req.write("warm") for _ in range(plan.single_requests)]))
        out["recall_c1"] = figures(
            await sequential([req.recall("warm") for _ in range(plan.single_requests)])
        )
        say(f"    write {out['write_c1']}\n    recall {out['recall_c1']}")
        if plan.long_history:
            out |= await long_user(req, plan, say)

        say(f"  mixed: {plan.clients} clients, {plan.mixed_users} users (load average {_load()})")
        out["load"]["mixed"] = _load()
        cpu_before = procstats.cpu_seconds_by_role(pid)
        mixed = await loadgen.closed_loop(
            lambda: req.mixed(req.rng.choice(mixed_users), plan.write_share),
            plan.clients,
            plan.mixed_seconds,
            plan.max_requests,
            plan.grace_seconds,
        )
        out["mixed"] = {
            **figures(mixed),
            "recall": figures(mixed, "recall"),
            "write": figures(mixed, "write"),
            "cpu_ms_per_request": cpu_per_request(cpu_before, procstats.cpu_seconds_by_role(pid), mixed),
        }
        say(f"    {out['mixed']}")

        say(f"  churn: {plan.churn_users} users, Zipf {plan.zipf} (load average {_load()})")
        out["load"]["churn"] = _load()
        churn_users = [f"c{n}" for n in range(plan.churn_users)]
        weights = list(itertools.accumulate(loadgen.zipf_weights(plan.churn_users, plan.zipf)))
        before = await req.load.stats()
        peak = {"total_pss_mb": 0}

        async def watch() -> None:
            while True:
                await asyncio.sleep(5)
                now = await asyncio.to_thread(stack_memory, pid)
                if now["total_pss_mb"] > peak["total_pss_mb"]:
                    peak.update(now)

        watcher = asyncio.create_task(watch())
        cpu_before = procstats.cpu_seconds_by_role(pid)
        churn = await loadgen.closed_loop(
            lambda: req.mixed(req.rng.choices(churn_users, cum_weights=weights)[0], plan.write_share),
            plan.clients,
            plan.churn_seconds,
            plan.max_requests,
            plan.grace_seconds,
        )
        watcher.cancel()
        cpu_churn = cpu_per_request(cpu_before, procstats.cpu_seconds_by_role(pid), churn)
        after = await req.load.stats()
        out["churn"] = {
            **figures(churn),
            "recall": figures(churn, "recall"),
            "write": figures(churn, "write"),
            "activations": after["activations"] - before["activations"],
            "activation_latency": after["activation_latency"],
            "live_after": after["live"],
            "cpu_ms_per_request": cpu_churn,
        }
        out["memory_end_of_churn"] = await asyncio.to_thread(stack_memory, pid)
        out["memory_peak"] = peak
        say(
            f"    {out['churn']}\n    PSS end {out['memory_end_of_churn']['total_pss_mb']} MB, "
            f"peak {peak['total_pss_mb']} MB"
        )
    return out


# ------------------------------------------------------------------------------------- resident memory


def resident_user_bytes() -> dict:
    """Bytes a host holds for one user with a full active memory (1,250 items: working 200, long-term
    1,000, core 50) once recall has built its structures, measured with tracemalloc in this process."""
    from actors.adapters.embedding import HashEmbedder
    from actors.app.service import UserMemoryService
    from actors.core.memory import GateChanges, MemoryItem
    from actors.store.sql.store import MemoryStore
    from schemas.api import RecallRequest
    from schemas.enums import Kind, Layer, State
    from schemas.settings import GatePolicy

    rng = np.random.default_rng(3)
    words = "tea jazz hiking ramen Lisbon nurse cat sister piano museum harbour train garden".split()
    with tempfile.TemporaryDirectory() as workdir:
        store = MemoryStore(f"sqlite:///{workdir}/m.db")
        store.create_schema()
        store.tenants.create("acme")
        items = []
        for n, (layer, state) in enumerate(
            [(Layer.WORKING, State.PENDING)] * 200
            + [(Layer.LONGTERM, State.CONFIRMED)] * 1000
            + [(Layer.CORE, State.FROZEN)] * 50
        ):
            text = " ".join(rng.choice(words, 12)) + f" number {n}"
            item = MemoryItem(
                tenant_id="acme",
                user_id="u",
                content=text,
                kind=Kind.FACT,
                layer=layer,
                state=state,
                source_dialog_ids=[f"s{n // 20}-d{n}"],
            )
            vector = rng.standard_normal(384).astype(np.float32)
            item.embedding = (vector / np.linalg.norm(vector)).tobytes()
            items.append(item)
        store.memories.commit(GateChanges(upserted={i.memory_id: i for i in items}))
        embedder = HashEmbedder(384)
        tracemalloc.start()
        service = UserMemoryService("acme", "u", store=store, embedder=embedder, policy=GatePolicy())
        service.recalls.recall(RecallRequest(query="what tea does the user like?", include_archive=False))
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        estimate = service.resident_bytes
        store.dispose()
    return {
        "items": len(items),
        "traced_mb": round(current / 2**20, 2),
        "estimate_mb": round(estimate / 2**20, 2),
        "peak_while_loading_mb": round(peak / 2**20, 2),
    }


# ------------------------------------------------------------------------------------------------ main


def _load() -> float:
    """The 1-minute load average (2 cores: above 2 the stack shares them with other work)."""
    return round(os.getloadavg()[0], 1)


def table(results: dict[str, dict]) -> str:
    rows = [
        ("load average at c=1 / mixed / churn", lambda r: "{c1} / {mixed} / {churn}".format(**r["load"])),
        ("recall c=1 p50 / p95 ms", lambda r: f"{r['recall_c1']['p50_ms']} / {r['recall_c1']['p95_ms']}"),
        ("write c=1 p50 / p95 ms", lambda r: f"{r['write_c1']['p50_ms']} / {r['write_c1']['p95_ms']}"),
        (
            "long user: write c=1 p50 / p95 ms",
            lambda r: f"{r['long_write_c1']['p50_ms']} / {r['long_write_c1']['p95_ms']}",
        ),
        (
            "long user: recall after a write, p50 / p95 ms",
            lambda r: f"{r['long_recall_c1']['p50_ms']} / {r['long_recall_c1']['p95_ms']}",
        ),
        ("mixed req/s", lambda r: r["mixed"]["per_second"]),
        ("mixed recall p95 ms", lambda r: r["mixed"]["recall"]["p95_ms"]),
        ("mixed errors", lambda r: r["mixed"]["errors"]),
        ("churn req/s", lambda r: r["churn"]["per_second"]),
        (
            "churn p95 ms (recall / write)",
            lambda r: f"{r['churn']['recall']['p95_ms']} / {r['churn']['write']['p95_ms']}",
        ),
        ("churn errors", lambda r: r["churn"]["errors"]),
        ("churn activations", lambda r: r["churn"]["activations"]),
        (
            "activation p50 / p95 ms",
            lambda r: (
                f"{r['churn']['activation_latency']['p50_ms']} / {r['churn']['activation_latency']['p95_ms']}"
            ),
        ),
        ("mixed CPU ms per request", lambda r: _cpu(r["mixed"]["cpu_ms_per_request"])),
        ("churn CPU ms per request", lambda r: _cpu(r["churn"]["cpu_ms_per_request"])),
        ("stack PSS end of churn MB", lambda r: r["memory_end_of_churn"]["total_pss_mb"]),
        ("stack PSS peak MB", lambda r: r["memory_peak"]["total_pss_mb"]),
    ]
    names = list(results)
    lines = [f"| figure | {' | '.join(names)} |", "|---|" + "---:|" * len(names)]
    for label, pick in rows:
        lines.append(f"| {label} | " + " | ".join(str(_safe(pick, results[n])) for n in names) + " |")
    return "\n".join(lines)


def _cpu(by_role: dict[str, float]) -> str:
    parts = [f"{role} {ms}" for role, ms in by_role.items() if role != "total"]
    return f"{by_role['total']} ({', '.join(parts)})"


def _safe(pick, result: dict):
    try:
        return pick(result)
    except (KeyError, TypeError):
        return "—"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--baseline", default=BASELINE_REF, help="git ref of the tree to compare with")
    parser.add_argument("--baseline-tree", type=Path, help="an existing checkout of the baseline to run")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--rounds", type=int, default=1, help="run the trees this many times, alternating")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:VAR=VALUE[,VAR=VALUE]",
        help="also run this checkout with these environment variables, e.g. spin:HERMES_EMBEDDER_SPIN=true",
    )
    parser.add_argument("--mixed-users", type=int, help="users of the mixed load (16 quick, 64 otherwise)")
    parser.add_argument("--churn-users", type=int)
    parser.add_argument(
        "--long-history", type=int, default=0, help="LoCoMo turns of history for the long user's phase"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else Plan()
    if args.mixed_users:
        plan = replace(plan, mixed_users=args.mixed_users)
    if args.churn_users:
        plan = replace(plan, churn_users=args.churn_users)
    if args.long_history:
        plan = replace(plan, long_history=args.long_history)

    def say(message: str) -> None:
        print(message, flush=True)

    say(f"load average at start: {os.getloadavg()}; plan {asdict(plan)}")
    results: dict[str, dict] = {}
    memory = resident_user_bytes()
    say(f"one resident user with 1,250 active items: {memory}")
    with ExitStack() as cleanup:
        trees: list[tuple[str, Path, dict[str, str]]] = [("this checkout", REPO, {})]
        for variant in args.variant:
            name, _, assignments = variant.partition(":")
            env = dict(pair.split("=", 1) for pair in assignments.split(",") if pair)
            trees.append((f"this checkout, {name}", REPO, env))
        if not args.no_baseline:
            base = args.baseline_tree or cleanup.enter_context(baseline_tree(args.baseline))
            shown = args.baseline_tree.name if args.baseline_tree else args.baseline
            trees.append((f"baseline {shown}", base, {}))
        for round_number in range(1, args.rounds + 1):
            for name, tree, env in trees:
                label = name if args.rounds == 1 else f"{name}, round {round_number}"
                say(f"{label}: load average {os.getloadavg()}")
                with (
                    tempfile.TemporaryDirectory(prefix="hermes-bench-") as home,
                    stack(tree, Path(home), env, say) as (base_url, key, pid),
                ):
                    results[label] = asyncio.run(drive(base_url, key, pid, plan, say))
    say(f"load average at end: {os.getloadavg()}")
    say(table(results))
    if args.out:
        args.out.write_text(
            json.dumps({"plan": asdict(plan), "resident_user": memory, "results": results}, indent=2)
        )


if __name__ == "__main__":
    main()
