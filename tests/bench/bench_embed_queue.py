"""A recall's query behind writes' passages in a host's embedder, this checkout against another.

One ``BatchingEmbedder`` over the real E5 model (one thread, as a host runs it). ``--writers`` threads each
embed the passages of one write after another (``--passages`` LoCoMo turns a write: a long turn, or an
import's batch), while one reader embeds LoCoMo questions one at a time, as recalls do. Printed per tree:
the query's latency p50 / p95 and the passages embedded per second meanwhile. Each tree runs in a child
process of its own (``PYTHONPATH``), rounds alternating. LoCoMo is read from ``../shared`` at run time.

    .venv/bin/python tests/bench/bench_embed_queue.py --baseline-tree PATH
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from pathlib import Path

import numpy as np

# last: in a child, the measured tree comes first on ``PYTHONPATH``
sys.path.append(str(Path(__file__).resolve().parents[2]))


def measure(queries: int, writers: int, passages: int) -> dict[str, float]:
    """In the child: the tree on ``sys.path`` first is the one measured."""
    from actors.adapters.embedding import make_embedder
    from actors.runtime.batching import BatchingEmbedder
    from tests.bench import loadgen

    said, asked = loadgen.locomo_dialogue()
    embedder = BatchingEmbedder(make_embedder("e5", num_threads=1, spin=False))
    embedder.embed_queries(["warm up"])
    stop = threading.Event()
    written = [0] * writers

    def write(n: int) -> None:
        turns = itertools.cycle(said[n::writers])
        while not stop.is_set():
            embedder.embed_passages([next(turns) for _ in range(passages)])
            written[n] += passages

    threads = [threading.Thread(target=write, args=(n,), daemon=True) for n in range(writers)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the writers' queue fills
    started, base = time.perf_counter(), sum(written)
    waits = []
    for question in itertools.islice(itertools.cycle(asked), queries):
        sent = time.perf_counter()
        embedder.embed_queries([question])
        waits.append((time.perf_counter() - sent) * 1000)
    elapsed = time.perf_counter() - started
    stop.set()
    for thread in threads:  # no model call may run while the interpreter exits
        thread.join()
    return {
        "query_p50_ms": round(float(np.percentile(waits, 50)), 1),
        "query_p95_ms": round(float(np.percentile(waits, 95)), 1),
        "passages_per_s": round((sum(written) - base) / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-tree", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--passages", type=int, default=8, help="LoCoMo turns embedded by one write")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.queries, args.writers, args.passages)))
        return
    from tests.bench.trees import side_by_side  # the parent's only: a child's tree may predate it

    child_args = ["--queries", str(args.queries), "--writers", str(args.writers)]
    side_by_side(
        __file__,
        [*child_args, "--passages", str(args.passages)],
        args.baseline_tree,
        args.rounds,
        {
            "query_p50_ms": "query p50 ms",
            "query_p95_ms": "query p95 ms",
            "passages_per_s": "passages/s meanwhile",
        },
        f"{args.writers} writers of {args.passages} passages each",
    )


if __name__ == "__main__":
    main()
