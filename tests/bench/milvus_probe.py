"""How the per-call cost of Milvus grows with the tenant's partition: one user's filtered search (the recall's
semantic route) and the listing of one user's ids (what the reindex job compares with SQL), timed straight
through ``MilvusIndex`` while nothing else queries; on milvus-lite (default) or the Milvus 2.3 standalone
server (``--server standalone``).

milvus-lite evaluates filters and de-duplicates rows in Python over every row of the partitions it searches,
so both grow with the partition's rows, not with the user's. ``bench_service.py`` calls ``probe`` on its
seeded tenants; run alone, this module builds synthetic partitions of the given sizes (random unit vectors,
10k rows per user, 12.5% active like a full user) in a temporary data dir and probes each, which measures
larger tenants than the service benchmark seeds, without seeding SQL::

    /work/venv/bin/python tests/bench/milvus_probe.py --sizes 10000,100000,200000

A million rows (the issue's 100 users × 10k) did not fit milvus-lite on the 24 GB machine: restarted on
them, the server passed 10 GB resident within a minute, still loading (a watchdog stopped it there); with
1.21M rows it reached 18.9 GB and the kernel's OOM killer ended it. At 310k rows it came up in 5 s at 2.0 GB.
The standalone server holds them; its rows are inserted over gRPC in batches, then flushed::

    /work/venv/bin/python tests/bench/milvus_probe.py --server standalone --sizes 1000000 --searches 200
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.store.vectors.filters import partition_name  # noqa: E402
from actors.store.vectors.milvus import MilvusIndex  # noqa: E402
from localstack.milvus import MilvusLiteServer, MilvusStandaloneServer  # noqa: E402
from schemas.enums import Layer  # noqa: E402
from tests.bench import procstats  # noqa: E402

ACTIVE = frozenset({Layer.WORKING, Layer.LONGTERM, Layer.CORE})
COLLECTION = "hermes_memories"
ROWS_PER_USER = 10_000
ACTIVE_PER_USER = 1_250
BATCH = 20_000


def _seconds(repeats: int, call, *args, **kwargs) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call(*args, **kwargs)
        times.append(time.perf_counter() - started)
    return times


def _p95(times: list[float]) -> float:
    return sorted(times)[min(len(times) - 1, int(0.95 * len(times)))]


def probe(uri: str, collection: str, partitions: dict[str, tuple[int, str]], repeats: int = 3) -> list[dict]:
    """``partitions``: tenant → (rows seeded, a user of it). Seconds per call, per tenant: median and p95 of
    ``repeats`` searches (a new random query each) and listings."""
    index = MilvusIndex(uri, collection, 384, timeout=600)
    rng = np.random.default_rng(0)
    figures = []
    for tenant, (rows, user) in partitions.items():
        searches = []
        for _ in range(repeats):
            vector = rng.standard_normal(384).astype(np.float32)
            vector /= np.linalg.norm(vector)
            searches += _seconds(1, index.search, tenant, user, vector, 40, layers=ACTIVE)
        ids = _seconds(repeats, index.ids, tenant, user)
        figures.append(
            {
                "tenant": tenant,
                "rows": rows,
                "user_rows": len(index.ids(tenant, user)),
                "search_s": statistics.median(searches),
                "search_p95_s": _p95(searches),
                "ids_s": statistics.median(ids),
            }
        )
    return figures


def _records(rng: np.random.Generator, start: int, count: int) -> list[dict]:
    """Rows ``start`` .. ``start + count`` of a partition: 10k per user, the first 1,250 of each active."""
    vectors = rng.standard_normal((count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = []
    for offset, vector in enumerate(vectors):
        user, position = divmod(start + offset, ROWS_PER_USER)
        active = position < ACTIVE_PER_USER
        records.append(
            {
                "memory_id": f"m_{uuid.uuid4().hex}",
                "user_id": f"u{user}",
                "layer": "longterm" if active else "archive",
                "state": "confirmed" if active else "archived",
                "vector": vector.tolist(),
            }
        )
    return records


def _build_lite(data_dir: Path, tenants: dict[str, tuple[int, str]]) -> None:
    """One tenant per size, filled in-process (no gRPC) and flushed into segments."""
    with MilvusLiteServer(data_dir) as server:  # the collection exactly as the service creates it
        index = MilvusIndex(server.uri, COLLECTION, 384)
        for tenant in tenants:
            index.ensure_tenant(tenant)
    from milvus_lite import MilvusLite

    rng = np.random.default_rng(1)
    database = MilvusLite(str(data_dir))
    collection = database.get_collection(COLLECTION)
    for tenant, (rows, _) in tenants.items():
        for start in range(0, rows, BATCH):
            batch = _records(rng, start, min(BATCH, rows - start))
            collection.insert(batch, partition_name=partition_name(tenant))
        print(f"  {tenant}: {rows:,} rows inserted", flush=True)
    collection.flush()
    database.close()


def _fill_standalone(uri: str, tenants: dict[str, tuple[int, str]]) -> None:
    """One tenant per size, inserted over gRPC into the collection as the service creates it, flushed."""
    index = MilvusIndex(uri, COLLECTION, 384, timeout=600)
    rng = np.random.default_rng(1)
    for tenant, (rows, _) in tenants.items():
        index.ensure_tenant(tenant)
        for start in range(0, rows, BATCH):
            batch = _records(rng, start, min(BATCH, rows - start))
            index._client.insert(COLLECTION, batch, partition_name=partition_name(tenant), timeout=600)
        print(f"  {tenant}: {rows:,} rows inserted", flush=True)
    index._client.flush(COLLECTION, timeout=1800)
    index.close()


def _resident_mb(role: str) -> float:
    found = procstats.memory_by_role().get(role)
    return found.rss_mb if found else 0.0


def _report(uri: str, tenants: dict[str, tuple[int, str]], searches: int) -> None:
    for row in probe(uri, COLLECTION, tenants, repeats=searches):
        print(
            f"{row['rows']:>10,} rows: search p50 {row['search_s'] * 1000:6.1f} ms"
            f" / p95 {row['search_p95_s'] * 1000:6.1f} ms, "
            f"one user's {row['user_rows']} ids {row['ids_s'] * 1000:7.0f} ms",
            flush=True,
        )


def _run_lite(data_dir: Path, tenants: dict[str, tuple[int, str]], searches: int) -> None:
    if not data_dir.exists():
        started = time.perf_counter()
        os.environ["MILVUS_LITE_MEMTABLE_MEMORY_LIMIT_BYTES"] = str(128 * 1024 * 1024)
        _build_lite(data_dir, tenants)
        os.environ.pop("MILVUS_LITE_MEMTABLE_MEMORY_LIMIT_BYTES")  # then served as the stack serves it
        rows = sum(rows for rows, _ in tenants.values())
        print(f"built {rows:,} rows in {time.perf_counter() - started:.0f}s", flush=True)
    server = MilvusLiteServer(data_dir)
    started = time.perf_counter()
    server.start(timeout=1800)  # a server recovering a million rows takes minutes to answer
    try:
        up = time.perf_counter() - started
        print(f"server up in {up:.0f}s, {_resident_mb('milvus-lite'):.0f} MB resident", flush=True)
        _report(server.uri, tenants, searches)
    finally:
        server.stop(timeout=300)


def _run_standalone(data_dir: Path, tenants: dict[str, tuple[int, str]], searches: int) -> None:
    fresh = not data_dir.exists()
    server = MilvusStandaloneServer(data_dir)
    started = time.perf_counter()
    server.start(timeout=1800)
    try:
        up = time.perf_counter() - started
        print(f"server up in {up:.1f}s, {_resident_mb('milvus standalone'):.0f} MB resident", flush=True)
        if fresh:
            started = time.perf_counter()
            _fill_standalone(server.uri, tenants)
            rows = sum(rows for rows, _ in tenants.values())
            print(f"inserted and flushed {rows:,} rows in {time.perf_counter() - started:.0f}s", flush=True)
        _report(server.uri, tenants, searches)
        print(f"server resident: {_resident_mb('milvus standalone'):.0f} MB", flush=True)
    finally:
        server.stop(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description="Milvus search / ids latency by partition size")
    parser.add_argument("--sizes", default="10000,100000,200000", help="comma-separated partition rows")
    parser.add_argument("--server", choices=["lite", "standalone"], default="lite")
    parser.add_argument("--searches", type=int, default=3, help="searches (and listings) per partition")
    parser.add_argument("--data-dir", type=Path, help="build here and keep it; reused when it exists")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    tenants = {f"p{rows}": (rows, "u0") for rows in sizes}
    with tempfile.TemporaryDirectory(prefix="milvus-probe-") as scratch:
        data_dir = args.data_dir or Path(scratch) / "milvus"
        run = _run_lite if args.server == "lite" else _run_standalone
        run(data_dir, tenants, args.searches)
    print(f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} CPUs")


if __name__ == "__main__":
    main()
