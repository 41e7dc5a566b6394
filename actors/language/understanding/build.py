"""Rewrite ``prototypes.npz`` — the E5 passage vectors of every labelled utterance and the abstain
thresholds set on the tuning part — and print the reader's figures (tuning part leave one out, held-out
part apart)::

    .venv/bin/python -m actors.language.understanding.build
"""

from __future__ import annotations

import time

import numpy as np

from actors.adapters.embedding import E5Embedder
from actors.language.understanding.figures import figures, table
from actors.language.understanding.reader import SemanticReader, embed_all, utterances


def main() -> None:
    started = time.perf_counter()
    vectors = embed_all(E5Embedder())
    reader = SemanticReader.tuned(vectors)
    reader.save(vectors)
    shipped = vectors.astype(np.float16).astype(np.float32)  # the figures of the vectors as shipped
    items = utterances()
    held = sum(u.held_out for u in items)
    zh = sum(u.language == "zh" for u in items)
    print(f"{len(items)} utterances ({zh} Chinese), {held} held out; threshold {reader.threshold:.2f}")
    print(f"({time.perf_counter() - started:.0f} s)\n\ntuning part, five-fold cross-validated:")
    print(table(figures(shipped, reader.threshold, held_out=False)))
    print("\nheld-out part:")
    print(table(figures(shipped, reader.threshold)))


if __name__ == "__main__":
    main()
