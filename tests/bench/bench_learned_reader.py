"""What the learned reader costs a write, in one process, the machine's load average printed beside:

1. the forward pass with the token-states output in the graph, fetched or not, against the same graph
   without that output (the baseline): p50 per text over LoCoMo user turns, one text per pass and eight;
2. ``LearnedReader.read`` of one clause given its states (the shipped model), p50 and p95.

Rounds alternate between the variants; each figure's best round is kept.

    flock /tmp/hermes-bench.lock .venv/bin/python tests/bench/bench_learned_reader.py [--texts N] [--rounds N]
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from actors.adapters.e5_onnx import E5Model, _session, build_graph
from actors.adapters.e5_weights import bundled_model, read_weights
from actors.adapters.embedding import E5Embedder
from actors.language.reader.reader import LearnedReader

LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")


def turns(count: int) -> list[str]:
    conversation = json.loads(LOCOMO.read_text())[0]["conversation"]
    texts = [
        t["text"]
        for key, session in conversation.items()
        if key.startswith("session_") and isinstance(session, list)
        for t in session
    ]
    return texts[:count]


def per_text_ms(run, texts: list[str], batch: int) -> float:
    times = []
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        began = time.perf_counter()
        run(chunk)
        times.append((time.perf_counter() - began) * 1000 / len(chunk))
    return float(np.percentile(times, 50))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=160)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = turns(args.texts)
    weights = read_weights(bundled_model())
    model = E5Model(weights, num_threads=1, spin=False)
    graph = build_graph(weights)
    del graph.graph.output[1]  # the graph as it was before the states output
    baseline = _session(graph.SerializeToString(), 1, spin=False)
    with_output = model._narrow

    def means(session):
        def run(chunk):
            model._narrow = session
            return model.embed(chunk)

        return run

    def states(chunk):
        model._narrow = with_output
        return model.embed_with_states(chunk, "passage: ")

    variants = {
        "graph without the states output": lambda c: means(baseline)(["passage: " + t for t in c]),
        "states output, not fetched": lambda c: means(with_output)(["passage: " + t for t in c]),
        "states output, fetched (embed_with_states)": states,
    }
    best: dict[tuple[str, int], float] = {}
    for _ in range(args.rounds):
        for batch in (1, 8):
            for name, run in variants.items():
                figure = per_text_ms(run, texts, batch)
                best[name, batch] = min(best.get((name, batch), figure), figure)
    print(f"load average {os.getloadavg()}; {len(texts)} LoCoMo turns, best of {args.rounds} rounds")
    print("| forward pass | p50 ms per text, batch 1 | batch 8 |\n|---|---|---|")
    for name in variants:
        print(f"| {name} | {best[name, 1]:.2f} | {best[name, 8]:.2f} |")

    reader = LearnedReader.load(E5Embedder())
    _, all_states, all_spans = model.embed_with_states(texts, "passage: ")
    times = []
    for _ in range(args.rounds):
        for text, s, o in zip(texts, all_states, all_spans, strict=True):
            began = time.perf_counter()
            reader.read(text, s, o)
            times.append((time.perf_counter() - began) * 1000)
    tokens = np.mean([len(s) for s in all_states])
    print(
        f"\nLearnedReader.read per text (its states given): p50 {np.percentile(times, 50):.3f} ms, "
        f"p95 {np.percentile(times, 95):.3f} ms ({len(texts)} texts, mean {tokens:.0f} tokens)"
    )


if __name__ == "__main__":
    main()
