"""The large tenant of ``bench_archive_scale.py`` through the whole stack: HTTP → Serve → a user host →
PostgreSQL and the Milvus 2.3 standalone server, query embedding included. The same seed (N users × M
memories, most of them archived, in one tenant) and the same kind of questions: unique ones about a user's
oldest archived memories and about months long past.

One stack per archive path, one after the other, on the same sampled users (each stack starts cold, so
each path pays its own activations; PostgreSQL's page cache is warm after the first):

* **whole archive in memory**: ``archive_memory_items`` above the archive's size (the path every archive
  took before the switch);
* **newest 1,000 in memory, rest in Milvus**: the default policy;
* **every recall reads Milvus**: the default with ``archive_search_below = 1.0``.

Per path: activation (a cold user's first recall over HTTP), warm recall p50 / p95, the recall naming an
old month, and the host processes' memory at the end. With ``--baseline-tree``, the default path once more,
served by another checkout (``git worktree add``). The seed is made by ``bench_archive_scale.py`` (or here,
the same way, when missing)::

    .venv/bin/python tests/bench/bench_archive_http.py --users 100 --items 11250
    .venv/bin/python tests/bench/bench_archive_http.py --baseline-tree /tmp/hermes-012d203

Load average is printed at start and end.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.tenant_admin import TenantAdmin  # noqa: E402
from actors.store.sql.store import MemoryStore  # noqa: E402
from actors.store.vectors.milvus import MilvusIndex  # noqa: E402
from localstack.milvus import MilvusStandaloneServer  # noqa: E402
from schemas.enums import Layer  # noqa: E402
from schemas.settings import GatePolicy, HermesSettings  # noqa: E402
from tests.bench.bench_archive_scale import (  # noqa: E402
    TENANT,
    begin,
    ms,
    pg_url,
    questions,
    seed_options,
    seeded,
    user_ids,
)
from tests.bench.bench_hosts import REPO, stack, stack_memory  # noqa: E402


def drive(base_url: str, key: str, users: list[str], asked: dict) -> dict:
    figures: dict[str, list[float]] = {"activation": [], "recall": [], "period": [], "errors": []}
    with httpx.Client(base_url=base_url, headers={"X-API-Key": key}, timeout=120) as client:

        def recall(user: str, query: str) -> float:
            started = time.perf_counter()
            answer = client.post(f"/v1/users/{user}/recall", json={"query": query, "k": 8})
            elapsed = time.perf_counter() - started
            if answer.status_code != 200:
                figures["errors"].append(answer.status_code)
            return elapsed

        for user in users:
            about, periods = asked[user]
            figures["activation"].append(recall(user, about[0]))
            figures["recall"] += [recall(user, query) for query in about[1:]]
            figures["period"] += [recall(user, query) for query in periods]
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = seed_options(__doc__.split("\n\n")[0], users=100)
    parser.add_argument(
        "--baseline-tree", type=Path, default=None, help="another checkout (a worktree), on the default path"
    )
    args = parser.parse_args(argv)
    say, load_start = begin(args)
    server = MilvusStandaloneServer(args.home / "milvus")
    server.start(timeout=600)
    results: dict[str, dict] = {}
    try:
        sql_url = pg_url(args.schema)
        settings = HermesSettings(home=args.home, sql_url=sql_url, milvus_uri=server.uri)
        say(f"seed: {seeded(args, settings, say)}")
        store = MemoryStore.from_settings(settings)
        store.create_schema()
        # loaded, as a running server's collection is, before any stack reads it
        started = time.perf_counter()
        index = MilvusIndex(server.uri, settings.milvus_collection, E5Embedder.dim, timeout=600)
        index._client.load_collection(settings.milvus_collection, timeout=1800)
        index.close()
        say(f"collection loaded in {time.perf_counter() - started:.1f}s")
        key = store.keys.rotate(TENANT)
        admin = TenantAdmin(store, TENANT)
        rng = random.Random(5)
        sample = rng.sample(user_ids(args.users), min(args.sample, args.users))
        asked = {user: questions(store, user, args.questions, rng) for user in sample}
        archived = store.memories.count(TENANT, sample[0], layers=[Layer.ARCHIVE])
        say(f"measuring users {sample}: {archived} archived items each")
        default = GatePolicy()
        paths = {
            "whole archive in memory": {"archive_memory_items": args.items},
            f"newest {default.archive_memory_items:,} in memory, rest in Milvus": {
                "archive_memory_items": default.archive_memory_items,
                "archive_search_below": default.archive_search_below,
            },
            "every recall reads Milvus": {
                "archive_memory_items": default.archive_memory_items,
                "archive_search_below": 1.0,
            },
        }
        env = {"HERMES_SQL_URL": sql_url, "HERMES_MILVUS_URI": server.uri}
        runs = [(name, REPO, changes) for name, changes in paths.items()]
        if args.baseline_tree:  # the default path again, served by another checkout
            name = f"newest {default.archive_memory_items:,} in memory, rest in Milvus"
            runs.append((f"{name}: {args.baseline_tree.name}", args.baseline_tree, paths[name]))
        for name, tree, changes in runs:
            admin.change_policy(changes)
            say(f"{name}: load average {os.getloadavg()[0]:.1f}")
            with (
                tempfile.TemporaryDirectory(prefix="hermes-bench-") as home,
                stack(tree, Path(home), env, say) as (base_url, _, pid),
            ):
                results[name] = drive(base_url, key, sample, asked)
                results[name]["stack"] = stack_memory(pid)
            say(f"{name}: measured")
        admin.change_policy(paths[f"newest {default.archive_memory_items:,} in memory, rest in Milvus"])
        store.dispose()
    finally:
        server.stop(timeout=60)
    load_end = os.getloadavg()
    print()
    print(f"{args.users} users × {args.items:,} memories in one tenant (PostgreSQL + Milvus 2.3), over HTTP")
    print(f"load average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end, {os.cpu_count()} CPUs")
    print()
    print("| figure | " + " | ".join(results) + " |")
    print("|---|" + "---:|" * len(results))
    lines = {
        "activation (a cold user's first recall), p50 / p95 ms": lambda f: ms(f["activation"]),
        "recall about an old memory, p50 / p95 ms": lambda f: ms(f["recall"]),
        "recall naming an old month, p50 / p95 ms": lambda f: ms(f["period"]),
        "errors": lambda f: str(len(f["errors"])),
        "user hosts' PSS at the end, MB": lambda f: f"{f['stack']['roles']['user hosts']['pss_mb']:.0f}",
        "whole stack's PSS at the end, MB": lambda f: f"{f['stack']['total_pss_mb']:.0f}",
    }
    for label, cell in lines.items():
        print(f"| {label} | " + " | ".join(cell(f) for f in results.values()) + " |")
    if args.out:
        args.out.write_text(json.dumps({"load": [load_start, load_end], "paths": results}, indent=2))


if __name__ == "__main__":
    main()
