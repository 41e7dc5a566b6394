"""Recall latency inside one user's service, without the embedder: what the routes cost on a full user.

    .venv/bin/python tests/bench/bench_recall.py [--turns 6000] [--queries 200]

Writes ``--turns`` distinct everyday turns through ``UserMemoryService.write_turns`` (rule extraction, both
gates, default capacities: most of them end up archived), with the hashing embedder so that embedding costs
nothing, then times ``recall`` (k 8, archive included) over distinct questions: once with the service's
recall structures warm, and once right after a write (the active view is rebuilt, the archive's postings
only when the write archived something). Prints p50/p95 in ms, the item counts, and the load average.
Run it in two checkouts to compare them (same arguments, same machine, one after the other).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.enums import Layer
from schemas.settings import GatePolicy

PEOPLE = "Ana Ben Clara Dev Emil Fatima Gus Hana Ivo Jon Kai Lena Milo Nora Omar Pia".split()
PLACES = "the park|the lake|Lisbon|the museum|the gym|a bakery|the office|the beach|a concert|the library"
ACTIVITIES = "hiked|painted|cooked pasta|read a novel|played chess|went running|baked bread|fixed a bike"


def turns(count: int, rng: random.Random) -> list[str]:
    places, activities = PLACES.split("|"), ACTIVITIES.split("|")
    return [
        f"Yesterday I {rng.choice(activities)} with {rng.choice(PEOPLE)} near {rng.choice(places)} "
        f"and we talked about plan number {n} for {rng.choice(['May', 'June', 'July'])}."
        for n in range(count)
    ]


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def percentiles(samples: list[float]) -> str:
    ms = np.array(samples) * 1000
    return f"p50 {np.percentile(ms, 50):6.2f} ms  p95 {np.percentile(ms, 95):6.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as workdir:
        store = MemoryStore(f"sqlite:///{Path(workdir) / 'bench.db'}")
        store.create_schema()
        store.tenants.create("bench", "bench")
        clock = Clock()
        svc = UserMemoryService(
            "bench", "u1", store=store, embedder=HashEmbedder(384), policy=GatePolicy(), clock=clock
        )
        started = time.perf_counter()
        texts = turns(args.turns + args.queries, rng)
        for n in range(0, args.turns, 50):
            clock.now += timedelta(hours=6)
            batch = [api.TurnIn(text=t, dialog_id=f"d{n + i}") for i, t in enumerate(texts[n : n + 50])]
            svc.writes.write_turns(api.WriteTurnsRequest(session_id=f"s{n // 50}", turns=batch))
        written = time.perf_counter() - started
        questions = [
            f"What did I do with {rng.choice(PEOPLE)} near {rng.choice(PLACES.split('|'))}?"
            for _ in range(args.queries)
        ]

        def recall(query: str) -> float:
            began = time.perf_counter()
            svc.recalls.recall(api.RecallRequest(query=query, k=8))
            return time.perf_counter() - began

        recall(questions[0])  # builds the structures (and reads the archive from SQL)
        warm = [recall(q) for q in questions]
        after_write = []
        for n, query in enumerate(questions):
            turn = api.TurnIn(text=texts[args.turns + n], dialog_id=f"q{n}")
            svc.writes.write_turns(api.WriteTurnsRequest(session_id="s-last", turns=[turn]))
            after_write.append(recall(query))
        active = len(svc.work.engine.active())
        archived = svc.work.store.memories.count(svc.tenant_id, svc.user_id, layers=[Layer.ARCHIVE])
    print(
        f"load average {os.getloadavg()[0]:.2f}; {args.turns} turns written in {written:.0f} s; "
        f"{active} active, {archived} archived"
    )
    print(f"recall, warm        {percentiles(warm)}")
    print(f"recall after write  {percentiles(after_write)}")


if __name__ == "__main__":
    main()
