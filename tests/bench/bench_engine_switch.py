"""The two e5 engines (``e5-q4``, ``e5-int8``) judged by retrieval in one run, and across each other.

LoCoMo through the real memory path (``hermes-memory eval locomo``'s ``memory`` system, figures for the
held-out conversations and the whole file) and the bilingual probes of ``bench_embedders.py`` (MRR, hit@1
and hit@3, four directions), four ways: each engine alone, and an index built by one engine queried by the
other (passages embedded by one, queries by the other: what a store sees the moment its hosts switch
engines, before a reindex). Both engines load in this one process; LoCoMo is read from ``../shared`` at run
time.

    .venv/bin/python tests/bench/bench_engine_switch.py [--holdout conv-42,conv-43] [--only q4/q4,int8/int8]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from evaluation import locomo  # noqa: E402
from evaluation.metrics import Figures, load_evidence, score  # noqa: E402
from tests.bench.bench_embedders import LOCOMO, markdown, probe_quality  # noqa: E402


class Crossed:
    """Passages by one engine, queries by another."""

    dim = 384

    def __init__(self, passages: E5Embedder, queries: E5Embedder):
        self._passages, self._queries = passages, queries

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._passages.embed_passages(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._queries.embed_queries(texts)

    # bench_embedders' probe interface
    passages, queries = embed_passages, embed_queries


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--holdout", default="conv-42,conv-43")
    parser.add_argument(
        "--only", default="q4/q4,int8/int8,q4/int8,int8/q4", help="passage engine/query engine pairs"
    )
    args = parser.parse_args()
    holdout = frozenset(args.holdout.split(","))
    engines = {name: E5Embedder(num_threads=1, engine=name) for name in ("q4", "int8")}
    print(f"load average at start: {os.getloadavg()}", flush=True)
    columns: list[str] = []
    figures: list[dict[str, float]] = []
    for pair in args.only.split(","):
        passage_engine, query_engine = pair.split("/")
        model = Crossed(engines[passage_engine], engines[query_engine])
        with tempfile.TemporaryDirectory() as workdir:
            parts = _locomo_parts(model, Path(workdir), holdout)
        row: dict[str, float] = {}
        for part, result in parts.items():
            row |= {f"{part} {name}": value for name, value in result.items()}
        for direction, scores in probe_quality(model).items():
            row |= {f"probes {direction} {metric}": value for metric, value in scores.items()}
        columns.append(f"passages {passage_engine}, queries {query_engine}")
        figures.append(row)
        print(f"{pair} done, load average {os.getloadavg()}", flush=True)
    names = list(figures[0])
    print(markdown(columns, [(name, [f"{f[name]:.3f}" for f in figures]) for name in names]))
    print(f"\nload average at end: {os.getloadavg()}")


def _locomo_parts(model: Crossed, workdir: Path, holdout: frozenset[str]) -> dict[str, dict[str, float]]:
    """R@10, multi-hop R@10 and S@5 of the memory system, held-out part and whole file."""
    out = workdir / "ranked.jsonl"
    locomo.run(LOCOMO, out, holdout=holdout, model=model, log=lambda _: None)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    graded = load_evidence(LOCOMO)
    held_out = score([line for line in lines if line["sample_id"] in holdout], graded)
    return {"held out": _headline(held_out), "all": _headline(score(lines, graded))}


def _headline(figures: Figures) -> dict[str, float]:
    return {
        "R@10": figures.recall_at_10["overall"],
        "multi-hop R@10": figures.recall_at_10["multi-hop"],
        "S@5": figures.session_any_at_5["overall"],
    }


if __name__ == "__main__":
    main()
