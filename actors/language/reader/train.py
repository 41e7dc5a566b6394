"""Training the learned reader on the corpus's training part: the clause classifier's heads (act, slot,
polarity, each flag) trained together as one linear model, and the span tagger, each by L-BFGS (scipy)
on cross-entropy with an L2 penalty over standardised inputs, the result folded into plain weights
(``reader.Weights``) that numpy applies.

The penalty and the slot threshold are chosen by cross-validation over the training part
(``cross_validated``), never on the held-out part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from actors.language.reader.corpus import ACTS, CORPUS, FLAGS, Clause, clauses, load, not_own
from actors.language.reader.features import SLOT_LABELS, clause_features, token_features
from actors.language.reader.reader import LearnedReader, Reading, StatesEmbedder, Weights
from actors.language.reader.scoring import Counts, counts

#: the L2 penalties tried (larger keeps the weights smaller, fits the training part less closely)
PENALTIES = (3e-3, 1e-2, 3e-2)
MAX_ITER = 300
FOLDS = 4
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.1, 0.96, 0.05))
#: the doubt (a logit) under which a reading is the user's own
DOUBT_CUTS = tuple(round(t, 1) for t in np.arange(-4.0, 2.01, 0.25))
#: the most look-alikes read as the user's own fact the threshold may let through (cross-validated)
LOOK_ALIKE_BUDGET = 0.02
DEFAULT_PENALTY = 1e-2
DEFAULT_THRESHOLD = 0.5
#: clauses embedded per call (states of a batch are padded to its longest clause)
EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class Example:
    """A labelled clause (and its turn's language) with its passage vector, its token states and their
    character spans in the clause."""

    lang: str
    clause: Clause
    vector: np.ndarray
    states: np.ndarray
    spans: np.ndarray


def examples_of(embedder: StatesEmbedder, part: str, folder: Path = CORPUS) -> list[Example]:
    """Every valid clause of a part of the corpus, each embedded alone (as the write path embeds it)."""
    turns, _ = load(part, folder)
    labelled = clauses(turns)
    found: list[Example] = []
    for start in range(0, len(labelled), EMBED_BATCH):
        batch = labelled[start : start + EMBED_BATCH]
        vectors, states, spans = embedder.embed_passages_with_states([c.text for _, c in batch])
        found += [
            Example(turn.lang, c, v, s, o)
            for (turn, c), v, s, o in zip(batch, vectors, states, spans, strict=True)
        ]
    return found


def token_labels(example: Example) -> np.ndarray:
    """0 (O), 1 (B) or 2 (I) per token: B for the first token that overlaps the value, I for the rest."""
    labels = np.zeros(len(example.spans), dtype=np.int64)
    value = example.clause.value
    if value is None:
        return labels
    start = example.clause.text.find(value)
    end = start + len(value)
    begun = False
    for n, (a, b) in enumerate(example.spans.tolist()):
        if b > a and a < end and b > start:
            labels[n] = 2 if begun else 1
            begun = True
    return labels


@dataclass(frozen=True, slots=True)
class Head:
    """One output of a jointly trained linear model: a softmax over ``columns`` classes with integer
    ``targets``, or (``columns`` 1) a logistic with 0/1 targets; ``mask``: the examples it learns from."""

    columns: int
    targets: np.ndarray
    mask: np.ndarray | None = None


def fit(x: np.ndarray, heads: Sequence[Head], penalty: float) -> tuple[np.ndarray, np.ndarray]:
    """Weights (features, columns of every head) and bias of linear heads trained together by L-BFGS on
    the summed cross-entropies plus ``penalty``/2 · |W|², over standardised ``x``; returned folded back to
    act on ``x`` itself."""
    from scipy.optimize import minimize

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    xs = ((x - mean) / scale).astype(np.float32)
    n, features = xs.shape
    width = sum(h.columns for h in heads)
    starts = np.cumsum([0, *(h.columns for h in heads)])
    weights_of = [np.ones(n, np.float32) if h.mask is None else h.mask.astype(np.float32) for h in heads]

    def loss_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat[: features * width].reshape(features, width).astype(np.float32)
        z = xs @ w + flat[features * width :].astype(np.float32)
        dz = np.zeros_like(z)
        loss = 0.0
        for head, first, weight in zip(heads, starts, weights_of, strict=False):
            cols = slice(first, first + head.columns)
            if head.columns == 1:
                p = 1.0 / (1.0 + np.exp(-z[:, first]))
                t = head.targets.astype(np.float32)
                loss -= float((weight * (t * np.log(p + 1e-9) + (1 - t) * np.log(1 - p + 1e-9))).sum()) / n
                dz[:, first] = weight * (p - t) / n
            else:
                zg = z[:, cols] - z[:, cols].max(axis=1, keepdims=True)
                logp = zg - np.log(np.exp(zg).sum(axis=1, keepdims=True))
                loss -= float((weight * logp[np.arange(n), head.targets]).sum()) / n
                d = np.exp(logp)
                d[np.arange(n), head.targets] -= 1.0
                dz[:, cols] = weight[:, None] * d / n
        loss += penalty / 2 * float((w * w).sum())
        gradient = np.concatenate([(xs.T @ dz + penalty * w).ravel(), dz.sum(axis=0)])
        return loss, gradient.astype(np.float64)

    start = np.zeros(features * width + width)
    solved = minimize(loss_and_gradient, start, jac=True, method="L-BFGS-B", options={"maxiter": MAX_ITER})
    w = solved.x[: features * width].reshape(features, width)
    b = solved.x[features * width :]
    return (w / scale[:, None]).astype(np.float32), (b - (mean / scale) @ w).astype(np.float32)


def train(
    examples: Sequence[Example],
    penalty: float = DEFAULT_PENALTY,
    threshold: float = DEFAULT_THRESHOLD,
    doubt_cut: float = 0.0,
) -> LearnedReader:
    x = np.stack([clause_features(e.states) for e in examples])
    labels = [e.clause for e in examples]
    has_slot = np.array([c.slot is not None for c in labels])
    heads = [
        Head(len(ACTS), np.array([ACTS.index(c.act) for c in labels])),
        Head(len(SLOT_LABELS), np.array([SLOT_LABELS.index(c.slot or "") for c in labels])),
        Head(1, np.array([c.polarity == "-" for c in labels]), mask=has_slot),
        *(Head(1, np.array([flag in c.flags for c in labels])) for flag in FLAGS),
        Head(1, np.array([c.look_alike for c in labels])),
    ]
    clause, clause_bias = fit(x, heads, penalty)
    valued = [e for e in examples if e.clause.value is not None and e.clause.slot is not None]
    tokens = np.concatenate([token_features(e.states, e.clause.slot or "") for e in valued])
    tags = np.concatenate([token_labels(e) for e in valued])
    tagger, tagger_bias = fit(tokens, [Head(3, tags)], penalty)
    return LearnedReader(Weights(clause, clause_bias, tagger, tagger_bias, threshold, doubt_cut))


def folds(count: int) -> list[np.ndarray]:
    """``FOLDS`` interleaved folds of ``count`` examples (neighbouring clauses of a turn spread out)."""
    return [np.arange(k, count, FOLDS) for k in range(FOLDS)]


def cross_validated(examples: Sequence[Example], penalty: float) -> list[Reading]:
    """Each training example read by a model trained on the other folds, every slot's value read (threshold
    0), so that thresholds can be tried on the readings afterwards."""
    found: list[Reading | None] = [None] * len(examples)
    for fold in folds(len(examples)):
        held = set(fold.tolist())
        model = train([e for n, e in enumerate(examples) if n not in held], penalty, threshold=0.0)
        for n in fold.tolist():
            e = examples[n]
            found[n] = model.read(e.clause.text, e.states, e.spans)
    return [reading for reading in found if reading is not None]


def at_cuts(
    read: Sequence[Reading], threshold: float, doubt_cut: float
) -> list[tuple[str | None, str | None, bool]]:
    """(slot, value, read as the user's own) of each reading at these cuts."""
    found: list[tuple[str | None, str | None, bool]] = []
    for r in read:
        kept = r.slot is not None and r.score >= threshold
        own = kept and r.doubt < doubt_cut and not not_own(r.act, r.slot, r.flags)
        found.append((r.slot, r.value, own) if kept else (None, None, False))
    return found


def choose(examples: Sequence[Example]) -> tuple[float, float, float, Counts]:
    """The penalty, slot threshold and doubt cut of the best cross-validated F1 over the user's own facts
    (slot and value read, as the user's own) whose look-alike rate stays within ``LOOK_ALIKE_BUDGET`` (the
    lowest look-alike rate when none does), with its counts."""
    labels = [e.clause for e in examples]
    best: tuple[tuple[bool, float, float], float, float, float, Counts] | None = None
    for penalty in PENALTIES:
        read = cross_validated(examples, penalty)
        for threshold in THRESHOLDS:
            for doubt_cut in DOUBT_CUTS:
                c = counts(labels, at_cuts(read, threshold, doubt_cut))
                within = c.look_alike_rate <= LOOK_ALIKE_BUDGET
                # within the budget: the best F1, then the most readings kept as the user's own
                key = (within, c.own_f1 if within else -c.look_alike_rate, doubt_cut)
                if best is None or key > best[0]:
                    best = (key, penalty, threshold, doubt_cut, c)
    assert best is not None
    return best[1], best[2], best[3], best[4]
