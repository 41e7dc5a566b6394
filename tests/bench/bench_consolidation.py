"""Consolidation throughput (memories/s) on this machine, and how it scales from 1 to 2 CPUs.

Seeds one tenant with ``--users`` users × ``--items`` memories each (default 1000 × 200), once, straight into
SQLite and a milvus-lite data dir (vectors: random unit vectors — embedding 200k sentences would take longer
than the benchmark, and a pass never re-embeds a stored item), then for each ``--cpus`` value runs the real
consolidation job (``jobs.consolidate.run``) on a fresh copy of that data, in a child process with its own
local Ray started with that many CPUs: Ray Data workers = CPUs. Each user's pass does the real work — decay
rescoring, merges (a summary's vector is the mean of its sources'), promotions and freezes, stale pending
items cleared, evictions to the archive (the tenant's long-term capacity is 100), one SQL commit with the
outbox entries of the rows that moved — under the user's lease and claim. A second run over the result is
timed too: the idempotent no-op pass.

Per user (deterministic): 10 frozen core facts, 110 confirmed long-term preferences, 50 pending working
preferences over 10 slots (merged), 30 pending working events (15 idle for 31–90 days below the write
threshold: cleared), last access spread over 120 days.

    /work/venv/bin/python tests/bench/bench_consolidation.py [--users 1000] [--items 200] [--cpus 1 2]

Notes: wall time includes Ray Data's start (reading the users with ``read_sql``, starting the worker pool).
SQLite takes one writer at a time, which caps the scaling; the job commits to SQL only (the hosts bring
the vector index up to date from the outbox).
Other processes on a shared machine make the figures noisy (the load average after each run is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from actors.core.memory import MemoryItem  # noqa: E402
from actors.store.sql.mapping import ITEM_FIELDS  # noqa: E402
from actors.store.sql.store import MemoryStore  # noqa: E402
from actors.store.sql.tables import MemoryItemRow  # noqa: E402
from actors.store.vectors.filters import partition_name  # noqa: E402
from actors.store.vectors.milvus import MilvusIndex  # noqa: E402
from localstack.milvus import MilvusLiteServer  # noqa: E402
from schemas.enums import Kind, Layer, Source, State  # noqa: E402
from schemas.settings import Capacities, GatePolicy, HermesSettings  # noqa: E402

TENANT = "bench"
DIM = 384
COLLECTION = "hermes_bench"
PREFERENCES = [
    "preference.food",
    "preference.drink",
    "preference.music",
    "preference.hobby",
    "preference.sport",
    "preference.travel",
    "preference.content",
    "preference.shopping",
    "preference.style",
    "preference.schedule",
]
CORE = [
    "basic.name",
    "basic.residence",
    "basic.hometown",
    "basic.occupation",
    "basic.employer",
    "basic.allergy",
    "basic.pet",
    "basic.language",
    "basic.education",
    "basic.health",
]


def user_items(user: str, count: int, now: datetime) -> list[MemoryItem]:
    rng = random.Random(user)
    layout = [("core", 10), ("longterm", 110), ("working", 50), ("event", 30)]
    scale = count / sum(n for _, n in layout)
    items = []
    for kind, n in layout:
        for k in range(round(n * scale)):
            idle = rng.uniform(0, 120)
            slot, value, layer, state, item_kind, score = (
                None,
                None,
                Layer.WORKING,
                State.PENDING,
                Kind.EVENT,
                0.7,
            )
            if kind == "core":
                slot, value, layer, state, item_kind = (
                    CORE[k % 10],
                    f"v{k}",
                    Layer.CORE,
                    State.FROZEN,
                    Kind.FACT,
                )
            elif kind == "longterm":
                slot, value, layer, state = rng.choice(PREFERENCES), f"v{k}", Layer.LONGTERM, State.CONFIRMED
                item_kind = Kind.PREFERENCE
            elif kind == "working":
                slot, value, item_kind, idle = (
                    PREFERENCES[k % 10],
                    f"w{k}",
                    Kind.PREFERENCE,
                    rng.uniform(0, 20),
                )
            else:
                stale = k % 2 == 0
                idle, score = (rng.uniform(31, 90), 0.3) if stale else (rng.uniform(0, 20), 0.7)
            at = now - timedelta(days=idle)
            importance = rng.uniform(0.2, 0.9)
            items.append(
                MemoryItem(
                    tenant_id=TENANT,
                    user_id=user,
                    content=f"{user} says {kind} {k}: {slot or 'event'} {value or ''}",
                    kind=item_kind,
                    layer=layer,
                    state=state,
                    slot=slot,
                    value=value,
                    importance=importance,
                    confidence=rng.uniform(0.5, 0.95),
                    decay_score=importance,
                    write_score=score,
                    source=Source.USER_DECLARED,
                    source_session_id=f"s{k % 7}",
                    source_dialog_ids=[f"{user}-d{kind}{k}"],
                    confirmed_sessions=[f"s{k % 7}"],
                    created_at=at,
                    updated_at=at,
                    last_accessed_at=at,
                    frozen_at=at if state is State.FROZEN else None,
                )
            )
    return items


def seed(template: Path, users: int, per_user: int) -> int:
    """SQLite (Core executemany, no gate) and Milvus (plain inserts) with the same items; returns how many."""
    template.mkdir(parents=True)
    store = MemoryStore(f"sqlite:///{template / 'hermes.db'}")
    store.create_schema()
    store.tenants.create(TENANT, policy=GatePolicy(capacities=Capacities(longterm=100)))
    server = MilvusLiteServer(template / "milvus")
    server.start(timeout=120)
    index = MilvusIndex(server.uri, COLLECTION, DIM)
    index.ensure_tenant(TENANT)
    rng = np.random.default_rng(7)
    now = datetime.now(UTC)
    total = 0
    try:
        for start in range(0, users, 50):
            batch = [
                i
                for u in range(start, min(users, start + 50))
                for i in user_items(f"u{u:05d}", per_user, now)
            ]
            vectors = rng.standard_normal((len(batch), DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            for item, vector in zip(batch, vectors, strict=True):
                item.embedding = vector.tobytes()
            with store.database._engine.begin() as connection:
                connection.execute(
                    MemoryItemRow.__table__.insert(),
                    [{name: getattr(i, name) for name in ITEM_FIELDS} for i in batch],
                )
            index._client.insert(
                COLLECTION,
                [
                    {
                        "memory_id": i.memory_id,
                        "user_id": i.user_id,
                        "layer": i.layer.value,
                        "state": i.state.value,
                        "vector": v.tolist(),
                    }
                    for i, v in zip(batch, vectors, strict=True)
                ],
                partition_name=partition_name(TENANT),
            )
            total += len(batch)
            print(f"  seeded {total} memories", end="\r", flush=True)
    finally:
        index.close()
        server.stop()
        store.dispose()
    print()
    return total


def run_once(template: Path, workdir: Path, cpus: int, rerun: bool) -> dict:
    import ray

    from jobs import consolidate

    home = workdir / f"run-{cpus}cpu"
    shutil.copytree(template, home)
    server = MilvusLiteServer(home / "milvus")
    server.start(timeout=120)
    settings = HermesSettings(
        home=home,
        sql_url=f"sqlite:///{home / 'hermes.db'}",
        milvus_uri=server.uri,
        milvus_collection=COLLECTION,
        embedder="e5",
        namespace=f"bench-{cpus}",
    )
    ray.init(
        address="local",
        num_cpus=cpus,
        include_dashboard=False,
        namespace=settings.namespace,
        log_to_driver=False,
    )
    try:
        first = consolidate.run(settings, [TENANT])
        again = consolidate.run(settings, [TENANT]) if rerun else None
    finally:
        ray.shutdown()
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    return {"cpus": cpus, "first": first, "again": again}


COLUMNS = (
    "CPUs",
    "users",
    "memories",
    "run s",
    "memories/s",
    "no-op s",
    "no-op memories/s",
    "merged",
    "evicted",
    "cleared",
    "promoted",
    "frozen",
    "hit rate",
    "load after",
)


def print_table(results: list[dict]) -> None:
    no_run = {"seconds": "-", "memories_per_second": "-"}
    rows = []
    for r in results:
        first, again = r["first"], r["again"] or no_run
        rows.append((
            r["cpus"], first["users"], first["memories"], first["seconds"], first["memories_per_second"],
            again["seconds"], again["memories_per_second"], first["merged"], first["evicted"],
            first["cleared"], first["promoted"], first["frozen"], first["eviction_hit_rate"],
            round(r["load_average_after"], 1),
        ))  # fmt: skip
    widths = [max(len(str(v)) for v in column) for column in zip(COLUMNS, *rows, strict=True)]
    for row in (COLUMNS, *rows):
        print("  ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True)))
    base = results[0]
    for r in results[1:]:
        speedup = base["first"]["seconds"] / r["first"]["seconds"]
        line = f"speed-up {base['cpus']} → {r['cpus']} CPUs: {speedup:.2f}×"
        if base["again"] and r["again"]:
            line += f" first run, {base['again']['seconds'] / r['again']['seconds']:.2f}× no-op rerun"
        print(line)


def run_in_child(template: Path, workdir: Path, cpus: int, rerun: bool) -> dict:
    """Each CPU count in its own process: a fresh interpreter gets a fresh local Ray (a second ``ray.init``
    in one process after ``ray.shutdown`` proved flaky on a loaded machine)."""
    command = [
        sys.executable,
        __file__,
        "--one",
        str(cpus),
        "--template",
        str(template),
        "--workdir",
        str(workdir),
    ]
    if not rerun:
        command.append("--no-rerun")
    child = subprocess.run(command, capture_output=True, text=True, check=False)
    if child.returncode != 0:
        raise SystemExit(f"the {cpus}-CPU run failed:\n{child.stderr[-3000:]}")
    result = json.loads(child.stdout.strip().splitlines()[-1])
    result["load_average_after"] = os.getloadavg()[0]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--cpus", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-rerun", action="store_true", help="skip timing the second (no-op) run")
    parser.add_argument("--workdir", type=Path, help="keep data here (default: a temporary directory)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child mode: this many CPUs
    parser.add_argument("--template", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(
            json.dumps(run_once(args.template, args.workdir, args.one, rerun=not args.no_rerun), default=str)
        )
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-consolidation-"))
    template = workdir / "template"
    started = time.perf_counter()
    memories = seed(template, args.users, args.items)
    seconds = time.perf_counter() - started
    print(f"seeded {args.users} users × {args.items} = {memories} memories in {seconds:.0f}s")
    results = [run_in_child(template, workdir, cpus, rerun=not args.no_rerun) for cpus in args.cpus]
    print_table(results)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
