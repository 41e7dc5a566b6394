"""Rewrite ``model.npz``: embed the corpus's training part, choose the regularisation and the slot threshold
by cross-validation on it, train on all of it, and print the cross-validated figures::

    .venv/bin/python -m actors.language.reader.build
"""

from __future__ import annotations

import time

import numpy as np

from actors.adapters.embedding import E5Embedder
from actors.language.reader.corpus import load
from actors.language.reader.features import clause_features
from actors.language.reader.train import choose, examples_of, train

#: training clauses whose features the shipped file keeps, to check a running embedder against
CHECKS = 4


def main() -> None:
    started = time.perf_counter()
    turns, invalid = load("train")
    for line in invalid:
        print(f"skipped {line.file}:{line.line}: {'; '.join(line.problems)}")
    embedder = E5Embedder()
    examples = examples_of(embedder, "train")
    print(f"{len(turns)} turns, {len(examples)} clauses; {len(invalid)} invalid lines skipped")
    penalty, threshold, doubt_cut, cv = choose(examples)
    print(
        f"cross-validated on the training part: penalty {penalty}, threshold {threshold:.2f}, doubt cut "
        f"{doubt_cut:.2f}: slot+value P {cv.precision:.3f} R {cv.recall:.3f} F1 {cv.f1:.3f}; the user's own "
        f"facts P {cv.own_precision:.3f} R {cv.own_recall:.3f} F1 {cv.own_f1:.3f}; look-alikes read as own "
        f"{cv.look_alikes_read_as_own}/{cv.look_alikes} ({cv.look_alike_rate:.1%})"
    )
    reader = train(examples, penalty, threshold, doubt_cut)
    picks = np.linspace(0, len(examples) - 1, CHECKS).astype(int).tolist()
    checks = [examples[n].clause.text for n in picks]
    reader.save(penalty, checks, np.stack([clause_features(examples[n].states) for n in picks]))
    print(f"model.npz written ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
