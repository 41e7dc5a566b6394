"""A large tenant on the production shape: N users × M memories (most of them archived) in one tenant on
PostgreSQL and the Milvus 2.3 standalone server, read by the memory service itself (the code a user host
runs, in this process: no Ray, no HTTP). Two archive paths side by side in one run, on the same users:

* **indexed**: the host keeps the newest ``--budget`` archived items in memory and searches the rest in
  Milvus when the in-memory recall is weak or a question names an older period (``archive_memory_items``);
* **in memory**: the whole archive in the host (``archive_memory_items`` above the archive's size), no
  vector-index read — the path every archive took before.

A third column runs the indexed path with ``archive_search_below=1.0``, so that every recall reads Milvus:
the cost of the deep path whatever the switch decides (the seed's archived items repeat the sentences of
newer ones, so the default switch often finds a strong match in memory and stays there).

Per path: activation (the service built from SQL, then its first recall, which loads the archive), warm
recall p50 / p95 over unique questions with their query vectors already embedded (the embedder is timed
apart: it is the same for both paths), how many recalls read Milvus, and memory per resident user
(tracemalloc of one user's service after its first recall, everything recall keeps). Also a filtered
Milvus search alone at this size. Seeding is bulk (``seed.py``: Core ``executemany`` into PostgreSQL, plain
Milvus inserts of precomputed E5 vectors), kept in ``--home`` and a PostgreSQL schema of its own (reused by
the next run of the same size)::

    .venv/bin/python tests/bench/bench_archive_scale.py --users 10 --items 11250     # 10 × 11,250
    .venv/bin/python tests/bench/bench_archive_scale.py --users 100 --items 11250    # 1.1M rows

``--items 11250`` gives each user 10,000 archived items (50 core, 200 working, 1,000 long-term, the rest
archived: ``seed.layout_for``). Load average is printed at start and end: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.service import UserMemoryService  # noqa: E402
from actors.store.sql.store import MemoryStore  # noqa: E402
from actors.store.vectors.milvus import MilvusIndex  # noqa: E402
from localstack.milvus import MilvusStandaloneServer  # noqa: E402
from schemas import api  # noqa: E402
from schemas.enums import Layer, State  # noqa: E402
from schemas.settings import GatePolicy, HermesSettings  # noqa: E402
from tests.bench import seed  # noqa: E402

TENANT = "scale"
MARKER = "scale-seed.json"
POSTGRES = os.environ.get("HERMES_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
ARCHIVED_ONLY = frozenset({State.ARCHIVED})
#: question shapes around a memory's words: unique texts, so no recall is answered from the query cache
SHAPES = (
    "Do you remember when I said: {}",
    "What did I tell you about this: {}",
    "Remind me, {}",
    "{} — when was that?",
)
PERIODS = ("What did I do in {month} {year}?", "What happened in {month} {year}?")


@dataclass
class PathFigures:
    name: str
    activation_s: list[float] = field(default_factory=list)
    recall_s: list[float] = field(default_factory=list)
    period_recall_s: list[float] = field(default_factory=list)
    milvus_reads: int = 0
    recalls: int = 0
    resident_bytes: list[int] = field(default_factory=list)
    estimated_bytes: list[int] = field(default_factory=list)
    archived_in_memory: list[int] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def ms(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values) * 1000:.1f} / {percentile(values, 0.95) * 1000:.1f}"


def pg_url(schema: str) -> str:
    engine = create_engine(POSTGRES)
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))  # our own name, not input
    engine.dispose()
    url = make_url(POSTGRES).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


def user_ids(count: int) -> list[str]:
    return [f"u{n:03d}" for n in range(count)]


class CountingIndex:
    """The index as the service sees it, counting the searches a recall makes."""

    def __init__(self, index: MilvusIndex):
        self.index = index
        self.searches = 0

    def search(self, *args, **kwargs):
        self.searches += 1
        return self.index.search(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.index, name)


def seeded(args, settings: HermesSettings, say) -> dict:
    marker = args.home / MARKER
    params = {"users": args.users, "items": args.items, "pool": args.pool, "schema": args.schema}
    if marker.exists() and json.loads(marker.read_text())["params"] == params:
        say(f"reusing the seed in {args.home} and schema {args.schema}")
        return json.loads(marker.read_text())
    pool = seed.sentence_pool(args.pool)
    vectors, rate = seed.pool_vectors(pool, args.home.parent / "hermes-bench-cache")
    say(f"pool of {len(pool)} sentences embedded ({'cached' if rate is None else f'{rate:.0f}/s'})")
    started = time.perf_counter()
    report = seed.seed_tenant(settings, TENANT, user_ids(args.users), args.items, pool, vectors, progress=say)
    flush_started = time.perf_counter()
    seed.flush_collection(settings.milvus_uri, settings.milvus_collection)
    record = {
        "params": params,
        "rows": report.rows,
        "sql_s": round(report.sql_seconds, 1),
        "milvus_insert_s": round(report.milvus_seconds, 1),
        "milvus_flush_s": round(time.perf_counter() - flush_started, 1),
        "total_s": round(time.perf_counter() - started, 1),
    }
    marker.write_text(json.dumps(record, indent=2))
    return record


def questions(store: MemoryStore, user: str, count: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """Unique questions about the user's oldest archived memories (beyond any in-memory budget), and about
    months long past."""
    oldest = store.memories.page(TENANT, user, layers=[Layer.ARCHIVE], limit=2000, offset=5000)
    picked = rng.sample(oldest, min(count, len(oldest)))
    about = [SHAPES[n % len(SHAPES)].format(item.content.rstrip("。.")) for n, item in enumerate(picked)]
    months = [(item.created_at.strftime("%B"), item.created_at.year) for item in picked[: max(4, count // 5)]]
    periods = [PERIODS[n % 2].format(month=m, year=y) for n, (m, y) in enumerate(dict.fromkeys(months))]
    return about, periods


def measure_path(
    figures: PathFigures,
    users: list[str],
    make,
    asked: dict[str, tuple[list[str], list[str]]],
    index: CountingIndex | None,
) -> None:
    for user in users:
        started = time.perf_counter()
        service = make(user)
        about, periods = asked[user]
        service.recalls.recall(api.RecallRequest(query=about[0], k=8))  # loads the archive view
        figures.activation_s.append(time.perf_counter() - started)
        for timed, queries in ((figures.recall_s, about[1:]), (figures.period_recall_s, periods)):
            for query in queries:
                service._embed_query(query)  # the embedder is timed apart: the same for both paths
                before = index.searches if index else 0
                started = time.perf_counter()
                service.recalls.recall(api.RecallRequest(query=query, k=8))
                timed.append(time.perf_counter() - started)
                figures.recalls += 1
                figures.milvus_reads += (index.searches - before) if index else 0
        figures.archived_in_memory.append(len(service.recall_state.archive_view().items))


def resident(figures: PathFigures, users: list[str], make, asked) -> None:
    """Bytes one resident user's service holds after its first recall (tracemalloc, this user's only)."""
    for user in users:
        tracemalloc.start()
        service = make(user)
        service.recalls.recall(api.RecallRequest(query=asked[user][0][0], k=8))
        # the query cache is not per-user state that grows with the archive
        service.recall_state._queries.clear()
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        figures.resident_bytes.append(current)
        figures.estimated_bytes.append(service.resident_bytes)
        del service


def seed_options(description: str, users: int) -> argparse.ArgumentParser:
    """The options of a run over a seed: its size, the users and questions measured, where it is kept."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--users", type=int, default=users)
    parser.add_argument("--items", type=int, default=11250, help="memories per user (most archived)")
    parser.add_argument("--pool", type=int, default=3000, help="distinct sentences (embedded once)")
    parser.add_argument("--sample", type=int, default=4, help="users measured per path")
    parser.add_argument("--questions", type=int, default=40, help="questions per measured user")
    parser.add_argument("--home", type=Path, default=None, help="where the seed is kept (Milvus' data)")
    parser.add_argument("--schema", default=None, help="PostgreSQL schema of the seed")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    return parser


def begin(args: argparse.Namespace) -> tuple[Callable[[str], None], tuple[float, float, float]]:
    """Name the seed's home and schema (by its size, unless given), start the clock, print the load average;
    returns ``say`` (a message with the seconds since) and the load at start."""
    args.home = (args.home or Path("/tmp") / f"hermes-scale-{args.users}x{args.items}").resolve()
    args.schema = args.schema or f"hermes_scale_{args.users}x{args.items}"
    args.home.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    load = os.getloadavg()

    def say(message: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f}s] {message}", flush=True)

    say(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    return say, load


def main(argv: list[str] | None = None) -> None:
    parser = seed_options(__doc__.split("\n\n")[0], users=10)
    parser.add_argument("--budget", type=int, default=GatePolicy().archive_memory_items)
    args = parser.parse_args(argv)
    say, load_start = begin(args)
    server = MilvusStandaloneServer(args.home / "milvus")
    server.start(timeout=600)
    try:
        settings = HermesSettings(home=args.home, sql_url=pg_url(args.schema), milvus_uri=server.uri)
        record = seeded(args, settings, say)
        say(f"seed: {record}")
        store = MemoryStore.from_settings(settings)
        store.create_schema()  # a seed kept from an older checkout gets this one's migrations (indexes)
        store.database.refresh_statistics()  # a reused seed may have been written just before autovacuum ran
        milvus = MilvusIndex(server.uri, settings.milvus_collection, E5Embedder.dim, timeout=600)
        started = time.perf_counter()
        milvus._client.load_collection(settings.milvus_collection, timeout=1800)
        say(f"collection loaded in {time.perf_counter() - started:.1f}s")
        counting = CountingIndex(milvus)
        embedder = E5Embedder()
        rng = random.Random(5)
        everyone = user_ids(args.users)
        sample = rng.sample(everyone, min(args.sample, len(everyone)))
        asked = {user: questions(store, user, args.questions, rng) for user in sample}
        archived = store.memories.count(TENANT, sample[0], layers=[Layer.ARCHIVE])
        say(f"measuring users {sample}: {archived} archived items each, budget {args.budget}")

        search_s = []
        for query in asked[sample[0]][0][:20]:
            vector = embedder.embed_queries([query])[0]
            started = time.perf_counter()
            milvus.search(TENANT, sample[0], vector, 40, states=ARCHIVED_ONLY)
            search_s.append(time.perf_counter() - started)
        embed_s = []
        for query in asked[sample[-1]][0][:20]:
            started = time.perf_counter()
            embedder.embed_queries([query + " (timing)"])
            embed_s.append(time.perf_counter() - started)

        paths = {
            "whole archive in memory": (GatePolicy(archive_memory_items=args.items), None),
            f"newest {args.budget:,} in memory, rest in Milvus": (
                GatePolicy(archive_memory_items=args.budget),
                lambda: counting,
            ),
            "the same, every recall reads Milvus": (
                GatePolicy(archive_memory_items=args.budget, archive_search_below=1.0),
                lambda: counting,
            ),
        }
        results: dict[str, PathFigures] = {}
        for name, (policy, index) in paths.items():
            figures = results[name] = PathFigures(name)

            def make(user: str, policy=policy, index=index) -> UserMemoryService:
                return UserMemoryService(
                    TENANT, user, store=store, embedder=embedder, policy=policy, vector_index=index
                )

            measure_path(figures, sample, make, asked, counting if index else None)
            resident(figures, sample[:2], make, asked)
            say(f"{name}: measured")
    finally:
        server.stop(timeout=60)
    load_end = os.getloadavg()
    rows = record["rows"]
    print()
    print(
        f"{args.users} users × {args.items:,} memories = {rows:,} rows in one tenant (PostgreSQL + Milvus "
        f"2.3 standalone); {archived:,} archived per user; in-memory budget {args.budget:,}"
    )
    print(f"load average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end, {os.cpu_count()} CPUs")
    print(f"Milvus filtered search alone (user, archived, k=40): p50 / p95 {ms(search_s)} ms")
    print(f"E5 query embedding (either path):                   p50 / p95 {ms(embed_s)} ms")
    print()
    header = "| figure | " + " | ".join(results) + " |"
    print(header)
    print("|---|" + "---:|" * len(results))
    lines = {
        "activation + first recall, p50 / p95 ms": lambda f: ms(f.activation_s),
        "recall about an old memory, p50 / p95 ms": lambda f: ms(f.recall_s),
        "recall naming an old month, p50 / p95 ms": lambda f: ms(f.period_recall_s),
        "recalls that read Milvus": lambda f: f"{f.milvus_reads} of {f.recalls}",
        "archived items held in memory": lambda f: f"{max(f.archived_in_memory):,}",
        "memory per resident user (tracemalloc), MB": lambda f: f"{max(f.resident_bytes) / 1e6:.1f}",
        "memory per resident user (host's estimate), MB": lambda f: f"{max(f.estimated_bytes) / 1e6:.1f}",
    }
    for label, cell in lines.items():
        print(f"| {label} | " + " | ".join(cell(f) for f in results.values()) + " |")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "seed": record,
                    "load": [load_start, load_end],
                    "milvus_search_s": search_s,
                    "embed_s": embed_s,
                    "paths": {name: vars(f) for name, f in results.items()},
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
