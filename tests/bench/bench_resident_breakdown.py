"""What one resident user holds, by allocation site: a seed-shaped user (50 core, 200 working, 1,000
long-term, the rest archived; ``seed.layout_for``) in SQLite with random unit vectors of E5's size, its
service built and its first recall made, counted by tracemalloc. No Milvus or PostgreSQL: the bytes a host
holds for a user do not depend on them (``bench_archive_scale.py`` measures the same figure on the
production shape).

Two counts per tree: *warm*, the tokenizer's process-wide cache already holding this user's texts (as
for a user whose texts other users share, and what ``bench_archive_scale.py`` measures), and *cold*, that
cache cleared first, so everything this user's texts cost is counted, the cache's own entries included.
This checkout side by side with a baseline (a git ref, checked out as a worktree, measured by the same
code in a process of its own)::

    .venv/bin/python tests/bench/bench_resident_breakdown.py --baseline 012d203
    .venv/bin/python tests/bench/bench_resident_breakdown.py --items 1250 --top 30
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import tracemalloc
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIM = 384


def shown(filename: str, tree: Path) -> str:
    """A file's path from the tree, or from the installed packages."""
    if filename.startswith(str(tree)):
        return os.path.relpath(filename, tree)
    return filename.split("site-packages/")[-1]


def measure(tree: Path, items: int, cold: bool, top: int) -> dict:
    """In this process, with the tree on ``sys.path``."""
    import numpy as np

    from actors.adapters.embedding import HashEmbedder
    from actors.app.service import UserMemoryService
    from actors.core.memory import GateChanges
    from actors.language import tokens
    from actors.store.sql.store import MemoryStore
    from schemas import api
    from schemas.settings import GatePolicy
    from tests.bench import seed

    with tempfile.TemporaryDirectory() as workdir:
        store = MemoryStore(f"sqlite:///{workdir}/m.db")
        store.create_schema()
        store.tenants.create("acme")
        pool = seed.sentence_pool(3000)
        vectors = np.random.default_rng(1).standard_normal((len(pool), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        policy = GatePolicy()
        rows = []
        layout = seed.layout_for(items, policy.capacities)
        for item, index in seed._user_items("acme", "u", layout, pool, random.Random(3), datetime.now(UTC)):
            item.embedding = vectors[index].tobytes()
            rows.append(item)
        store.memories.commit(GateChanges(upserted={i.memory_id: i for i in rows}))

        def service() -> UserMemoryService:
            return UserMemoryService("acme", "u", store=store, embedder=HashEmbedder(DIM), policy=policy)

        service().recalls.recall(api.RecallRequest(query="warm up the tokenizers", k=8))
        if cold:  # every cache of the tokenizer module (a baseline may cache another function)
            for cached in vars(tokens).values():
                getattr(cached, "cache_clear", lambda: None)()
        tracemalloc.start(5)
        user = service()
        user.recalls.recall(api.RecallRequest(query="Do you remember when I said I like sushi", k=8))
        user.recall_state._queries.clear()  # the query cache is not what grows with the user's memory
        traced, _ = tracemalloc.get_traced_memory()
        snapshot = tracemalloc.take_snapshot()
        tracemalloc.stop()
        archive = user.recall_state.archive_view()
        sites = [
            {
                "kb": round(stat.size / 1e3, 1),
                "blocks": stat.count,
                "site": f"{shown(stat.traceback[0].filename, tree)}:{stat.traceback[0].lineno}",
            }
            for stat in snapshot.statistics("lineno")[:top]
        ]
        return {
            "active": len(user.work.engine.items),
            "archived_in_memory": len(archive.items),
            "traced_mb": round(traced / 1e6, 2),
            "estimate_mb": round(user.resident_bytes / 1e6, 2),
            "sites": sites,
        }


def measured_in(tree: Path, items: int, cold: bool, top: int) -> dict:
    command = [sys.executable, __file__, "--measure", str(tree), "--items", str(items), "--top", str(top)]
    command += ["--cold"] if cold else []
    env = {**os.environ, "PYTHONPATH": str(tree)}
    result = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=11250, help="the user's memories (most archived)")
    parser.add_argument("--baseline", default=None, help="a git ref measured beside this checkout")
    parser.add_argument("--top", type=int, default=15, help="allocation sites listed")
    parser.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        sys.path.insert(0, str(args.measure))
        print(json.dumps(measure(args.measure, args.items, args.cold, args.top)))
        return
    print(f"load average {os.getloadavg()[0]:.1f}; one user of {args.items:,} memories, vectors of {DIM}")
    sys.path.insert(0, str(REPO))  # here, not at the top: a measuring process imports only its own tree
    from tests.bench.bench_hosts import baseline_tree

    with ExitStack() as cleanup:
        trees = [("this checkout", REPO)]
        if args.baseline:
            trees.append((f"baseline {args.baseline}", cleanup.enter_context(baseline_tree(args.baseline))))
        for name, tree in trees:
            for cold in (False, True):
                found = measured_in(tree, args.items, cold, args.top)
                print(
                    f"\n{name}, {'cold' if cold else 'warm'} tokenizer cache: {found['traced_mb']} MB traced "
                    f"(the host's estimate {found['estimate_mb']} MB), {found['active']} active items, "
                    f"{found['archived_in_memory']} archived in memory"
                )
                for site in found["sites"]:
                    print(f"  {site['kb']:9.1f} KB {site['blocks']:7d} blocks  {site['site']}")


if __name__ == "__main__":
    main()
