"""Training the learned reader on the corpus's training part: the clause classifier's heads (act, slot,
polarity, each flag, the doubt) trained together as one network of ``CLAUSE_UNITS`` hidden units, the
slot head weighting rare slots up (``slot_weights``), and the span tagger (a linear model for
``TAGGER_UNITS`` 0), each by L-BFGS (scipy) on cross-entropy with an L2 penalty over standardised
inputs, the result folded into plain weights (``reader.Weights``) that numpy applies.

The penalty, the slot threshold and the doubt cut are chosen by cross-validation over the training part
(``cross_validated``), never on the held-out part; so were the units, the slot weighting and the tagger's
window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from actors.language.reader.corpus import ACTS, CORPUS, FLAGS, Clause, clauses, load, not_own
from actors.language.reader.features import SLOT_LABELS, clause_features, token_features
from actors.language.reader.reader import LearnedReader, Network, Reading, StatesEmbedder, Weights
from actors.language.reader.scoring import Counts, counts

#: the L2 penalties tried (larger keeps the weights smaller, fits the training part less closely)
PENALTIES = (1e-2,)
MAX_ITER = 150
FOLDS = 3
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.1, 0.96, 0.05))
#: the doubt (a logit) under which a reading is the user's own
DOUBT_CUTS = tuple(round(t, 1) for t in np.arange(-4.0, 2.01, 0.25))
#: the most look-alikes read as the user's own fact the threshold may let through (cross-validated)
LOOK_ALIKE_BUDGET = 0.02
DEFAULT_PENALTY = 1e-2
#: hidden units of the clause network and of the span tagger (0: a linear model)
CLAUSE_UNITS = 128
TAGGER_UNITS = 0
#: how much rarer slots are weighted up in the slot head (0: every clause alike, 1: every slot alike)
SLOT_BALANCE = 0.5
SEED = 0
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
    """One output of the jointly trained network: a softmax over ``columns`` classes with integer
    ``targets``, or (``columns`` 1) a logistic with 0/1 targets; ``weights``: how much each example counts
    (0 for an example the head does not learn from), 1 each by default."""

    columns: int
    targets: np.ndarray
    weights: np.ndarray | None = None


def fit(x: np.ndarray, heads: Sequence[Head], penalty: float, units: int) -> Network:
    """A network over standardised ``x`` — ``units`` tanh units, then linear heads on them (no hidden layer
    for 0 units: a linear model) — trained with every head together by L-BFGS on the summed
    cross-entropies plus ``penalty``/2 · |W|², from a seeded start; returned with the standardisation
    folded into its first layer."""
    from scipy.optimize import minimize

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    xs = ((x - mean) / scale).astype(np.float32)
    n, features = xs.shape
    width = sum(h.columns for h in heads)
    starts = np.cumsum([0, *(h.columns for h in heads)])
    weights_of = [
        np.ones(n, np.float32) if h.weights is None else h.weights.astype(np.float32) for h in heads
    ]
    widths = [features, *([units] if units else []), width]
    shapes = [shape for a, b in zip(widths, widths[1:], strict=False) for shape in ((a, b), (b,))]
    cuts = np.cumsum([0, *(int(np.prod(shape)) for shape in shapes)])

    def layers_of(flat: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        arrays = [
            flat[a:b].reshape(shape).astype(np.float32)
            for a, b, shape in zip(cuts, cuts[1:], shapes, strict=False)
        ]
        return list(zip(arrays[::2], arrays[1::2], strict=True))

    def head_losses(z: np.ndarray) -> tuple[float, np.ndarray]:
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
        return loss, dz

    def loss_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        layers = layers_of(flat)
        inputs = [xs]
        for w, b in layers[:-1]:
            inputs.append(np.tanh(inputs[-1] @ w + b))
        w, b = layers[-1]
        loss, dz = head_losses(inputs[-1] @ w + b)
        loss += penalty / 2 * sum(float((w * w).sum()) for w, _ in layers)
        gradient: list[np.ndarray] = []
        for (w, _), below in zip(reversed(layers), reversed(inputs), strict=True):
            gradient = [below.T @ dz + penalty * w, dz.sum(axis=0), *gradient]
            dz = (dz @ w.T) * (1 - below * below)  # through the tanh that gave ``below``
        return loss, np.concatenate([g.ravel() for g in gradient]).astype(np.float64)

    # the hidden layer starts random (seeded), every other weight at zero
    start = np.zeros(int(cuts[-1]))
    if units:
        start[: features * units] = np.random.default_rng(SEED).normal(
            scale=features**-0.5, size=features * units
        )
    solved = minimize(loss_and_gradient, start, jac=True, method="L-BFGS-B", options={"maxiter": MAX_ITER})
    (w, b), *rest = layers_of(solved.x)
    return Network(
        ((w / scale[:, None]).astype(np.float32), (b - (mean / scale) @ w).astype(np.float32)), *rest
    )


def slot_weights(slots: Sequence[str | None]) -> np.ndarray:
    """Each example's weight in the slot head: its slot label's count to the power ``-SLOT_BALANCE``, scaled
    to a mean of 1 (a rare slot counts for more)."""
    labels = [slot or "" for slot in slots]
    count = {label: labels.count(label) for label in set(labels)}
    weights = np.array([count[label] ** -SLOT_BALANCE for label in labels], dtype=np.float32)
    balanced: np.ndarray = weights / weights.mean()
    return balanced


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
        Head(
            len(SLOT_LABELS),
            np.array([SLOT_LABELS.index(c.slot or "") for c in labels]),
            slot_weights([c.slot for c in labels]),
        ),
        Head(1, np.array([c.polarity == "-" for c in labels]), has_slot),
        *(Head(1, np.array([flag in c.flags for c in labels])) for flag in FLAGS),
        Head(1, np.array([c.look_alike for c in labels])),
    ]
    clause = fit(x, heads, penalty, CLAUSE_UNITS)
    valued = [e for e in examples if e.clause.value is not None and e.clause.slot is not None]
    tokens = np.concatenate([token_features(e.states, e.clause.slot or "") for e in valued])
    tags = np.concatenate([token_labels(e) for e in valued])
    tagger = fit(tokens, [Head(3, tags)], penalty, TAGGER_UNITS)
    return LearnedReader(Weights(clause, tagger, threshold, doubt_cut))


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
