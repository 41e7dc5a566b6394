"""What the semantic reader costs a write: ``UserMemoryService.write_turns`` with the reader and without it,
in one run, side by side (SQLite in a temporary directory, the real E5 embedder, the service as a host runs
it). Each write is one turn; the turns alternate between the two services so load drifts hit both alike.
The reader's own part (one 384 × 18 product, a softmax and a value extractor) is timed apart as well.

    .venv/bin/python tests/bench/bench_reader.py            # 200 writes each
    .venv/bin/python tests/bench/bench_reader.py --writes 60
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.service import UserMemoryService  # noqa: E402
from actors.app.write import UnruledReader  # noqa: E402
from actors.language.understanding.reader import SemanticReader  # noqa: E402
from actors.store.sql.store import MemoryStore  # noqa: E402
from schemas import api  # noqa: E402
from schemas.settings import GatePolicy  # noqa: E402

#: turns no rule reads (the reader's work) and turns the rules read (the reader never runs), half each
TURNS = [
    "Bouldering is my main hobby these days.",
    "Nothing beats a long bike ride along the river.",
    "Folks around here know me as Dave.",
    "My sister loves opera.",
    "我最近迷上了攀岩。",
    "下班后去健身房是我一天最开心的时候。",
    "我们昨晚看了一部电影，挺好看的。",
    "We watched the game at my brother's place last night.",
    "I live in Hangzhou.",
    "我对花生过敏。",
    "I love jazz music.",
    "我周末喜欢爬山。",
]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    embedder = E5Embedder()
    reader = UnruledReader(SemanticReader.load(embedder))
    with tempfile.TemporaryDirectory() as home:
        store = MemoryStore(f"sqlite:///{Path(home) / 'bench.db'}")
        store.create_schema()
        store.tenants.create("bench")
        services = {
            "rules only": UserMemoryService(
                "bench", "plain", store=store, embedder=embedder, policy=GatePolicy()
            ),
            "rules + reader": UserMemoryService(
                "bench", "read", store=store, embedder=embedder, policy=GatePolicy(), reader=lambda: reader
            ),
        }
        timings: dict[str, list[float]] = {name: [] for name in services}
        for n in range(args.writes):
            text = TURNS[n % len(TURNS)]
            for name in list(services) if n % 2 else list(services)[::-1]:
                request = api.WriteTurnsRequest(
                    session_id=f"s{n // len(TURNS)}", turns=[api.TurnIn(text=text, dialog_id=f"d{n}")]
                )
                started = time.perf_counter()
                services[name].write_turns(request)
                timings[name].append(time.perf_counter() - started)
        store.dispose()
    vector = embedder.embed_passages([TURNS[0]])[0]
    reads = []
    for _ in range(2000):
        started = time.perf_counter()
        reader.read(TURNS[0], vector)
        reads.append(time.perf_counter() - started)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(f"{args.writes} one-turn writes each (the first {len(TURNS)} include warm-up)")
    print(f"{'':<16}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}")
    rows = {name: values[len(TURNS) :] for name, values in timings.items()} | {"reader.read": reads}
    for name, values in rows.items():
        mean = statistics.mean(values) * 1000
        print(f"{name:<16}{pct(values, 50):>9.3f}{pct(values, 95):>9.3f}{mean:>9.3f}")


if __name__ == "__main__":
    main()
