"""Bounded load run on loopback, then a full consistency check
(docs/trust.md#6-load-and-consistency; issue 5).

Starts a private stack (milvus-lite server, a local Ray with 2 CPUs, Ray Serve on a free 127.0.0.1 port, the
real e5 embedder), then runs a closed loop for ``--duration`` seconds: ``--concurrency`` workers, each
picking a random user of two tenants and either writing a turn (with an ``Idempotency-Key``, resent with the
same key on a 5xx until acknowledged) or recalling. Every write's content carries its owner's tag, so a
recall hit of another user is detected at once. Small tiers (``--working`` etc.) make compression and
archiving happen during the run.

Then, straight from SQL and Milvus: every acknowledged write present (its dialog id on a stored item, in any
layer including the archive), none applied twice (a content hash stored twice for one user), every user's
tiers within their capacities, Milvus holding exactly the user's indexed items (no drift), and no
cross-user recall hit. Prints requests/s and latency percentiles per operation, then one JSON line.

    /work/venv/bin/python tests/bench/bench_load.py --duration 180 --users 24 --concurrency 12
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.store.sql.store import MemoryStore  # noqa: E402
from actors.store.vectors.milvus import MilvusIndex  # noqa: E402
from localstack.milvus import MilvusLiteServer  # noqa: E402
from schemas.enums import ACTIVE_STATES, Layer  # noqa: E402
from schemas.settings import HermesSettings  # noqa: E402

E5_DIM = 384
TOPICS = ["locker", "bicycle", "garden", "violin", "kayak", "telescope", "aquarium", "workshop"]
#: distinct statements (few shared words), so writes create items and the tiers overflow into the archive
FORMS = [
    "my {a} {b} is kept beside the {c}",
    "I once painted a {a} {b} near a {c}",
    "the {a} recipe calls for {b} and {c}",
    "we named our {a} boat {b} after a {c}",
    "grandpa hid a {a} {b} under the {c}",
]
WORDS = (
    "amber basil cedar dune ember fjord garnet harbor indigo juniper kelp lagoon maple nectar onyx pepper "
    "quartz rye saffron tundra umber violet willow yarrow zinnia"
).split()


@dataclass
class Figures:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter = field(default_factory=Counter)
    #: (tenant, user) → acknowledged dialog ids
    acked: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    resent: int = 0
    cross_user_hits: int = 0
    recall_hits: int = 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tag(tenant_id: str, user_id: str) -> str:
    return f"owner{tenant_id.replace('_', '')}{user_id}"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else 0.0


async def write(client, figures, key, tenant_id, user_id, serial) -> None:
    rng = random.Random(f"{tenant_id}/{user_id}/{serial}")
    statement = rng.choice(FORMS).format(a=rng.choice(WORDS), b=rng.choice(WORDS), c=rng.choice(WORDS))
    text = f"Remember this: {statement}, says {tag(tenant_id, user_id)} ({serial})"
    dialog_id = f"d{serial}"
    body = {"session_id": f"s{serial % 7}", "turns": [{"text": text, "dialog_id": dialog_id}]}
    headers = {"X-API-Key": key, "Idempotency-Key": f"{user_id}-{serial}"}
    while True:
        started = time.perf_counter()
        try:
            response = await client.post(f"/v1/users/{user_id}/turns", json=body, headers=headers)
            status = response.status_code
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        figures.statuses[f"write {status}"] += 1
        if status == 200:
            figures.latencies["write"].append(time.perf_counter() - started)
            figures.acked[(tenant_id, user_id)].add(dialog_id)
            return
        if isinstance(status, int) and status < 500:
            raise SystemExit(f"write refused with {status}: {response.text[:300]}")
        figures.resent += 1
        await asyncio.sleep(0.5)


async def recall(client, figures, key, tenant_id, user_id, rng) -> None:
    query = f"what did I say about the {rng.choice(WORDS)} {rng.choice(TOPICS)}"
    started = time.perf_counter()
    response = await client.post(
        f"/v1/users/{user_id}/recall", json={"query": query}, headers={"X-API-Key": key}
    )
    figures.statuses[f"recall {response.status_code}"] += 1
    if response.status_code != 200:
        return
    figures.latencies["recall"].append(time.perf_counter() - started)
    own = tag(tenant_id, user_id)
    for hit in response.json()["hits"]:
        figures.recall_hits += 1
        figures.cross_user_hits += "owner" in hit["memory"]["content"] and own not in hit["memory"]["content"]


async def load(base_url: str, users: list[tuple[str, str, str]], args) -> tuple[Figures, float]:
    figures = Figures()
    serials = Counter()
    deadline = time.monotonic() + args.duration

    async def worker(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            tenant_id, user_id, key = rng.choice(users)
            if rng.random() < args.write_share:
                serials[(tenant_id, user_id)] += 1
                await write(client, figures, key, tenant_id, user_id, serials[(tenant_id, user_id)])
            else:
                await recall(client, figures, key, tenant_id, user_id, rng)

    limits = httpx.Limits(max_connections=args.concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=300, limits=limits) as client:
        started = time.monotonic()
        await asyncio.gather(*(worker(seed) for seed in range(args.concurrency)))
        return figures, time.monotonic() - started


def consistency(store: MemoryStore, index: MilvusIndex, figures: Figures, caps: dict[Layer, int]) -> dict:
    lost = duplicated = over_capacity = drift = foreign_vectors = archived = most_active = 0
    for (tenant_id, user_id), acked in figures.acked.items():
        items = store.memories.page(tenant_id, user_id, limit=1_000_000)
        stored_dialogs = {d for item in items for d in item.source_dialog_ids}
        lost += len(acked - stored_dialogs)
        hashes = Counter(item.content_hash for item in items)
        duplicated += sum(count - 1 for count in hashes.values() if count > 1)
        active = Counter(item.layer for item in items if item.state in ACTIVE_STATES and item.layer in caps)
        over_capacity += sum(1 for layer, count in active.items() if count > caps[layer])
        archived += sum(1 for item in items if item.layer is Layer.ARCHIVE)
        most_active = max(most_active, sum(active.values()))
        expected = {
            i.memory_id
            for i in items
            if i.embedding is not None and (i.state in ACTIVE_STATES or i.layer is Layer.ARCHIVE)
        }
        indexed = index.ids(tenant_id, user_id)
        drift += len(expected ^ indexed)
        foreign_vectors += len(indexed - {i.memory_id for i in items})
    return {
        "users_checked": len(figures.acked),
        "acknowledged_writes": sum(len(a) for a in figures.acked.values()),
        "lost": lost,
        "duplicated": duplicated,
        "users_over_capacity": over_capacity,
        "archived_items": archived,
        "most_active_items_of_a_user": most_active,
        "index_drift": drift,
        "foreign_vectors": foreign_vectors,
        "cross_user_recall_hits": figures.cross_user_hits,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=180.0, help="seconds of load (default 180)")
    parser.add_argument("--users", type=int, default=24, help="users per tenant, two tenants (default 24)")
    parser.add_argument("--concurrency", type=int, default=12)
    parser.add_argument("--write-share", type=float, default=0.5)
    parser.add_argument("--working", type=int, default=12, help="working capacity per user (small: overflow)")
    parser.add_argument("--longterm", type=int, default=24)
    parser.add_argument("--core", type=int, default=8)
    args = parser.parse_args()

    import ray
    from ray import serve

    from serve.app import build_app

    home = Path(tempfile.mkdtemp(prefix="hermes-load-"))
    milvus = MilvusLiteServer(home / "milvus")
    milvus.start(timeout=180)
    policy = {"capacities": {"working": args.working, "longterm": args.longterm, "core": args.core}}
    settings = HermesSettings(
        home=home,
        sql_url=f"sqlite:///{home / 'hermes.db'}",
        milvus_uri=milvus.uri,
        milvus_collection="load",
        embedder="e5",
        namespace="hermes-bench-load",
        policy=policy,
    )
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    users = []
    for tenant_id in ("loada", "loadb"):
        key = store.tenants.create(tenant_id)
        users += [(tenant_id, f"u{n}", key) for n in range(args.users)]
    try:
        ray.init(address="local", num_cpus=2, include_dashboard=False, namespace=settings.namespace)
        port = free_port()
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(build_app(settings), name="hermes-load", route_prefix="/")
        figures, elapsed = asyncio.run(load(f"http://127.0.0.1:{port}", users, args))
        caps = {Layer.WORKING: args.working, Layer.LONGTERM: args.longterm, Layer.CORE: args.core}
        index = MilvusIndex(milvus.uri, "load", E5_DIM)
        checks = consistency(store, index, figures, caps)
        index.close()
    finally:
        serve.shutdown()
        ray.shutdown()
        store.dispose()
        milvus.stop()

    total = sum(len(v) for v in figures.latencies.values())
    print(f"\nload: {elapsed:.0f} s, {len(users)} users in 2 tenants, concurrency {args.concurrency}")
    print(f"{'operation':<10}{'count':>8}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    rows = {**figures.latencies, "all": [x for v in figures.latencies.values() for x in v]}
    summary = {}
    for name, values in rows.items():
        figures_row = {
            "count": len(values),
            "rps": round(len(values) / elapsed, 2),
            "p50_ms": round(percentile(values, 0.50) * 1000, 1),
            "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            "p99_ms": round(percentile(values, 0.99) * 1000, 1),
        }
        summary[name] = figures_row
        print(
            f"{name:<10}{len(values):>8}{figures_row['rps']:>9}{figures_row['p50_ms']:>9}"
            f"{figures_row['p95_ms']:>9}{figures_row['p99_ms']:>9}"
        )
    print(f"statuses: {dict(figures.statuses)}; writes resent after a 5xx: {figures.resent}")
    print("consistency: " + ", ".join(f"{k}={v}" for k, v in checks.items()))
    ok = all(
        checks[k] == 0
        for k in (
            "lost",
            "duplicated",
            "users_over_capacity",
            "index_drift",
            "foreign_vectors",
            "cross_user_recall_hits",
        )
    )
    print("CONSISTENT" if ok and total else "INCONSISTENT")
    print(
        json.dumps(
            {
                "elapsed_s": round(elapsed, 1),
                "latency": summary,
                "checks": checks,
                "statuses": dict(figures.statuses),
                "resent": figures.resent,
                "consistent": ok,
            }
        )
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
