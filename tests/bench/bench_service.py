"""Latency, throughput, live actors and memory of Hermes Memory on the local stack, through HTTP (issue 2).

Two scenarios on the real stack (milvus-lite server + Ray + Serve on loopback, SQLite, the real E5 embedder):

(a) **big histories**: ``--users`` users of one tenant, each with ``--items`` memories bulk-seeded in the
    gates' layout (``seed.py``); the load goes to a hot set of ``--cap`` users, so it meets warm actors.
    A cold pass (first request of a user = activation) against a warm pass gives the cold/warm ratio; then
    recall and write p50/p95 and requests/s at each concurrency level.
(b) **churn**: ``--churn-users`` users with small histories, Zipf(``--zipf``) access, live-actor cap
    ``--churn-cap``: actors are activated and passivated all the time. Mixed recall/write load; activations
    and passivations per second, the directory's activation latency, errors.

Memory: RSS and PSS of every process the benchmark started (``procstats.py``), by role. Everything runs
bounded (a deadline and a request budget per phase) and stops by itself. Seeded data is reused when the
home directory already holds the same seed (``--home``; the default directory is per size).

    /work/venv/bin/python tests/bench/bench_service.py --quick          # < 3 min, a smoke-sized run
    /work/venv/bin/python tests/bench/bench_service.py                  # full: 100 × 2k, 10k churn users
    /work/venv/bin/python tests/bench/bench_service.py --items 10000    # the issue's 100 × 10k (1M rows)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from localstack.milvus import MilvusLiteServer, free_port  # noqa: E402
from schemas.settings import HermesSettings  # noqa: E402
from tests.bench import loadgen, milvus_probe, procstats, seed  # noqa: E402
from tests.bench.report import Report  # noqa: E402

TENANT_A = "bench_a"
TENANT_CHURN = "bench_churn"
MARKER = "bench-seed.json"
#: bytes per seeded row on disk, measured: SQL 2.2 KB (content, JSON, 1.5 KB vector, indexes) + Milvus 3.1 KB
BYTES_PER_ROW = 5500


@dataclass(frozen=True)
class Plan:
    users: int = 100
    items: int = 2000
    churn_users: int = 10_000
    churn_items: int = 10
    #: live actors during (a); the load of (a) goes to this many users (a hot set), so it meets warm actors
    cap: int = 32
    #: the warm-up of (a) stops activating users when less memory than this is available (GB)
    min_free_gb: float = 4.0
    churn_cap: int = 32
    levels: tuple[int, ...] = (1, 8, 32)
    phase_seconds: float = 40.0
    phase_requests: int = 2000
    cold_sample: int = 12
    churn_concurrency: int = 16
    churn_seconds: float = 120.0
    churn_write_share: float = 0.2
    #: how long requests still in flight at a phase's deadline are awaited before they are abandoned
    grace_seconds: float = 60.0
    zipf: float = 1.1
    pool: int = 3000


QUICK = Plan(
    users=4,
    items=1500,
    churn_users=600,
    churn_items=5,
    cap=8,
    churn_cap=8,
    levels=(1, 8),
    phase_seconds=6.0,
    phase_requests=200,
    cold_sample=2,
    churn_concurrency=4,
    churn_seconds=15.0,
    grace_seconds=10.0,
    pool=300,
)


def seed_params(plan: Plan) -> dict:
    return {
        "users": plan.users,
        "items": plan.items,
        "churn_users": plan.churn_users,
        "churn_items": plan.churn_items,
        "pool": plan.pool,
    }


# ------------------------------------------------------------------------------------------------ seeding


def prepare_home(home: Path, plan: Plan, say) -> dict:
    """The seed record (API keys, timings) of ``home``, seeding it first unless it holds this very seed."""
    marker = home / MARKER
    if marker.exists():
        record = json.loads(marker.read_text())
        if record["params"] == seed_params(plan):
            say(f"reusing the seed in {home}")
            return record
        say(f"{home} holds another seed ({record['params']}): replacing it")
        shutil.rmtree(home)
    elif home.exists() and any(home.iterdir()):
        raise SystemExit(f"{home} is not empty and holds no benchmark seed; pick another --home")
    home.mkdir(parents=True, exist_ok=True)
    rows = plan.users * plan.items + plan.churn_users * plan.churn_items
    free = shutil.disk_usage(home).free
    say(f"seeding {rows:,} rows (~{rows * BYTES_PER_ROW / 1e9:.1f} GB) into {home}; {free / 1e9:.0f} GB free")
    if rows * BYTES_PER_ROW * 1.5 > free:
        raise SystemExit("not enough disk for this seed; lower --items or --users")
    pool = seed.sentence_pool(plan.pool)
    vectors, rate = seed.pool_vectors(pool, home.parent / "hermes-bench-cache")
    record: dict = {"params": seed_params(plan), "embed_rate": rate, "keys": {}, "tenants": {}}
    with seed.SeedingMilvus(home / "milvus") as uri:
        settings = HermesSettings(home=home, milvus_uri=uri)
        for tenant, prefix, users, items in (
            (TENANT_A, "a", plan.users, plan.items),
            (TENANT_CHURN, "c", plan.churn_users, plan.churn_items),
        ):
            started = time.perf_counter()
            report = seed.seed_tenant(
                settings, tenant, user_ids(prefix, users), items, pool, vectors, progress=say
            )
            flush_started = time.perf_counter()
            seed.flush_collection(uri, settings.milvus_collection)
            record["keys"].update(report.api_keys)
            record["tenants"][tenant] = {
                "rows": report.rows,
                "sql_s": round(report.sql_seconds, 1),
                "milvus_insert_s": round(report.milvus_seconds, 1),
                "milvus_flush_s": round(time.perf_counter() - flush_started, 1),
                "total_s": round(time.perf_counter() - started, 1),
                "layout": asdict(seed.layout_for(items, settings.policy.capacities)),
            }
            say(f"  {tenant}: {record['tenants'][tenant]}")
    marker.write_text(json.dumps(record, indent=2))
    return record


def user_ids(prefix: str, count: int) -> list[str]:
    width = len(str(count - 1))
    return [f"{prefix}{n:0{width}d}" for n in range(count)]


# ---------------------------------------------------------------------------------------------- the stack


@contextmanager
def milvus_served(home: Path, say):
    """The seeded data dir served as the stack serves it, the collection loaded before the stack starts."""
    from pymilvus import MilvusClient, MilvusException

    server = MilvusLiteServer(home / "milvus")
    server.start(timeout=1800)  # recovering a million rows takes minutes
    try:
        started = time.perf_counter()
        client = MilvusClient(uri=server.uri, timeout=300)
        for attempt in range(3):  # under heavy load a load request was once lost (state stayed NotLoad)
            try:
                client.load_collection("hermes_memories", timeout=300)
                break
            except MilvusException:
                if attempt == 2:
                    raise
        client.close()
        say(f"milvus-lite serving the seed; collection loaded in {time.perf_counter() - started:.1f}s")
        yield server.uri
    finally:
        server.stop(timeout=120)


@contextmanager
def stack_running(home: Path, milvus_uri: str, cap: int, say):
    from localstack.stack import LocalStack

    settings = HermesSettings(
        home=home,
        milvus_uri=milvus_uri,
        http_port=free_port(),
        embedder="e5",
        host_max_users=cap,
        actor_idle_seconds=900.0,
        namespace="hermes-bench",
    )
    stack = LocalStack(settings)
    started = time.perf_counter()
    stack.start()
    say(f"stack up in {time.perf_counter() - started:.1f}s at {stack.base_url} (live-actor cap {cap})")
    try:
        yield stack.base_url
    finally:
        stack.stop()


def memory_snapshot() -> dict:
    roles = procstats.memory_by_role()
    summed = procstats.total(roles)
    return {"roles": {name: asdict(entry) for name, entry in sorted(roles.items())}, "total": asdict(summed)}


# ------------------------------------------------------------------------------------------- scenario (a)


async def scenario_big(base_url: str, key: str, plan: Plan, report: Report, say) -> None:
    users = user_ids("a", plan.users)[: plan.cap]  # the hot set: every one of them stays live
    rng = random.Random(3)
    async with httpx.AsyncClient(base_url=base_url, timeout=300) as client:
        load = loadgen.Load(client, key)
        cold_users = users[: plan.cold_sample]
        cold = [await loadgen.timed(load.recall(u)) for u in cold_users]
        warm = [await loadgen.timed(load.recall(u)) for u in cold_users]
        report.baseline("recall, cold actor (activation + first call)", cold)
        report.baseline("recall, warm actor", warm)
        say(f"cold vs warm recall measured on {len(cold_users)} users; activating the other users")
        users = await warm_up(load, users, plan, report)
        report.memory("(a) all users live", memory_snapshot(), await load.stats())
        for level in plan.levels:
            for op in ("recall", "write"):
                make = getattr(load, op)
                result = await loadgen.closed_loop(
                    lambda make=make: make(rng.choice(users)),
                    level,
                    plan.phase_seconds,
                    plan.phase_requests,
                    plan.grace_seconds,
                )
                report.level(op, level, result)
                say(report.last_level_line())
        report.memory("(a) after the load", memory_snapshot(), await load.stats())
        report.directory("(a)", await load.stats())


async def warm_up(load: loadgen.Load, users: list[str], plan: Plan, report: Report) -> list[str]:
    """Activate the hot set four at a time; stop early when the machine runs short of memory (it is shared,
    and Ray's memory monitor kills workers of every Ray on the node when memory runs out). Returns the
    users now live, which become the hot set."""
    live, timings = users[: plan.cold_sample], []
    for start in range(plan.cold_sample, len(users), 4):
        if procstats.available_gb() < plan.min_free_gb:
            report.note(
                f"(a) warm-up stopped at {len(live)} live actors: under {plan.min_free_gb} GB available"
            )
            break
        batch = users[start : start + 4]
        timings += await asyncio.gather(*(loadgen.timed(load.recall(user)) for user in batch))
        live += batch
    p50 = loadgen.percentile([s.seconds for s in timings], 0.5) or 0.0
    report.note(f"(a) warm-up: {len(timings)} activations, first-recall p50 {p50:.2f}s at concurrency 4")
    return live


# ------------------------------------------------------------------------------------------- scenario (b)


async def scenario_churn(base_url: str, key: str, plan: Plan, report: Report, say) -> None:
    users = user_ids("c", plan.churn_users)
    random.Random(9).shuffle(users)  # popularity rank is unrelated to the id
    weights = loadgen.zipf_weights(len(users), plan.zipf)
    rng = random.Random(4)
    async with httpx.AsyncClient(base_url=base_url, timeout=300) as client:
        load = loadgen.Load(client, key)

        def next_request() -> loadgen.Request:
            user = rng.choices(users, weights)[0]
            return load.write(user) if rng.random() < plan.churn_write_share else load.recall(user)

        before = await load.stats()
        peak: dict = {"memory": None, "live": 0}

        async def watch() -> None:
            while True:
                await asyncio.sleep(max(2.0, plan.churn_seconds / 8))
                snapshot, stats = memory_snapshot(), await load.stats()
                peak["live"] = max(peak["live"], stats["live"])
                if peak["memory"] is None or snapshot["total"]["pss_mb"] > peak["memory"]["total"]["pss_mb"]:
                    peak["memory"], peak["stats"] = snapshot, stats

        watcher = asyncio.create_task(watch())
        result = await loadgen.closed_loop(
            next_request, plan.churn_concurrency, plan.churn_seconds, 10**9, plan.grace_seconds
        )
        watcher.cancel()
        after = await load.stats()
    report.churn(plan, result, before, after, peak["live"])
    if peak["memory"] is not None:
        report.memory("(b) churn, peak", peak["memory"], peak["stats"])
    report.directory("(b)", after)


# ----------------------------------------------------------------------------------------------- the run


def run(plan: Plan, home: Path, out: Path | None) -> Report:
    started = time.perf_counter()

    def say(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", flush=True)

    report = Report(plan=asdict(plan), loadavg_start=os.getloadavg(), code=code_state())
    record = prepare_home(home, plan, say)
    report.seed = record
    with milvus_served(home, say) as uri:
        partitions = {
            TENANT_A: (plan.users * plan.items, user_ids("a", plan.users)[-1]),
            TENANT_CHURN: (plan.churn_users * plan.churn_items, user_ids("c", plan.churn_users)[-1]),
        }
        report.milvus = milvus_probe.probe(uri, "hermes_memories", partitions)
        say(f"milvus-lite per-call latency by partition size: {report.milvus}")
        caps = [plan.cap] if plan.cap == plan.churn_cap else [plan.cap, plan.churn_cap]
        for cap in caps:
            with stack_running(home, uri, cap, say) as base_url:
                if cap == plan.cap:
                    attempt(scenario_big(base_url, record["keys"][TENANT_A], plan, report, say), report, say)
                if cap == plan.churn_cap:
                    attempt(
                        scenario_churn(base_url, record["keys"][TENANT_CHURN], plan, report, say), report, say
                    )
    report.loadavg_end = os.getloadavg()
    report.seconds = time.perf_counter() - started
    if out is not None:
        out.write_text(json.dumps(report.as_json(), indent=2))
    return report


def attempt(scenario, report: Report, say) -> None:
    """Run one scenario; if the stack fails under it, note why and go on (the figures so far still print)."""
    try:
        asyncio.run(scenario)
    except (httpx.HTTPError, OSError) as exc:
        report.note(f"a scenario was aborted: {type(exc).__name__}: {str(exc)[:200]}")
        say(report.notes[-1])


def code_state() -> str:
    """The commit measured, and which service files differed from it (the stack imports the work tree)."""
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout

    dirty = git("status", "--porcelain", "--", "actors", "serve", "schemas").splitlines()
    changed = ", ".join(line[3:] for line in dirty) or "none"
    return f"commit {git('rev-parse', '--short', 'HEAD').strip()}; uncommitted service files: {changed}"


def parse_plan(argv: list[str] | None = None) -> tuple[Plan, Path, Path | None]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke-sized run, under 3 minutes")
    for name, value in asdict(Plan()).items():
        if name != "levels":
            parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=None)
    parser.add_argument(
        "--levels",
        type=lambda text: tuple(int(v) for v in text.split(",")),
        default=None,
        help="comma-separated concurrency levels of (a), e.g. 1,8,32",
    )
    parser.add_argument("--home", type=Path, default=None, help="where the seeded stack lives (reused)")
    parser.add_argument("--out", type=Path, default=None, help="write every figure as JSON here")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else Plan()
    overrides = {name: getattr(args, name) for name in asdict(plan) if getattr(args, name) is not None}
    plan = replace(plan, **overrides)
    home = (
        args.home
        or Path("/tmp") / f"hermes-bench-{plan.users}x{plan.items}-{plan.churn_users}x{plan.churn_items}"
    )
    return plan, home.resolve(), args.out


def main(argv: list[str] | None = None) -> None:
    plan, home, out = parse_plan(argv)
    report = run(plan, home, out)
    print()
    print(report.table())


if __name__ == "__main__":
    main()
