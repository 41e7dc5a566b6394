"""The semantic reader: what a clause no rule read is about, decided by the embedder the service already
runs (docs/quality.md#8-a-semantic-reader-beside-the-rules).

The labelled utterances of ``utterances.yaml`` (written for this project, both languages, look-alikes that
must stay slot-less among them) train a small linear model over their E5 passage vectors: multinomial
logistic regression, one weight column per label. A clause's vector — the one the write path computes
anyway to index the memory — is read with one matrix product (384 × 18) and a softmax. The reader abstains
when the likeliest label is ``none`` or its probability is below ``threshold`` (set on the tuning part by
five-fold cross-validation, never on the held-out part); otherwise ``values.value_of`` finds the label's
value in the clause, and without a value it abstains too.

The model is shipped trained (``prototypes.npz``: the vectors of every labelled utterance, float16, the
weights, the threshold and the hash of the utterances). ``SemanticReader.load`` checks the file against the
running embedder at start — the hash must match and a few utterances embedded afresh must agree with the
shipped vectors (cosine ≥ 0.98) — and otherwise embeds the utterances once, there and then, and trains and
calibrates on them (about a second besides the embedding): any embedder behind the seam works, the
shipped file only saves start-up time. ``python -m actors.language.understanding.build`` rewrites it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
import yaml

from actors.language.text import has_han
from actors.language.understanding.values import slot_of, value_of

HERE = Path(__file__).parent
UTTERANCES = HERE / "utterances.yaml"
SHIPPED = HERE / "prototypes.npz"
NONE = "none"
#: every HOLD_OUT-th utterance of a label (the 3rd, 6th, …) is held out from tuning
HOLD_OUT = 3
#: how many utterances the start-up check embeds afresh, and how close they must come to the shipped ones
SPOT_CHECKS = 4
MIN_AGREEMENT = 0.98
#: a reading is a weaker signal than a rule's: the confidence its candidates get
READER_CONFIDENCE = 0.7
#: the precision the abstain threshold is set for, on the tuning part (cross-validated)
TARGET_PRECISION = 0.9
FOLDS = 5
#: logistic regression: vectors centred and scaled (E5's cosines sit in a narrow band), a light L2 penalty
SCALE = 20.0
PENALTY = 1e-3
EPOCHS = 300
STEP = 0.5


class PassageEmbedder(Protocol):
    def embed_passages(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Utterance:
    text: str
    label: str
    value: str | None
    held_out: bool

    @property
    def language(self) -> str:
        return "zh" if has_han(self.text) else "en"


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader found in one clause."""

    label: str
    slot: str
    value: str
    negative: bool
    score: float


@cache
def utterances() -> tuple[Utterance, ...]:
    """The labelled set, in file order, each marked held out or not."""
    table: dict[str, list[str]] = yaml.safe_load(UTTERANCES.read_text(encoding="utf-8"))
    found = []
    for label, lines in table.items():
        for n, line in enumerate(lines, start=1):
            text, _, value = line.partition("|")
            found.append(Utterance(text.strip(), label, value.strip() or None, n % HOLD_OUT == 0))
    return tuple(found)


def utterances_hash() -> str:
    return hashlib.sha256(UTTERANCES.read_bytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class Model:
    """Multinomial logistic regression over passage vectors: ``softmax((v - mean) · SCALE @ W + b)``."""

    names: tuple[str, ...]
    mean: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        z = ((np.atleast_2d(vectors) - self.mean) * SCALE) @ self.weights + self.bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        probabilities: np.ndarray = p / p.sum(axis=1, keepdims=True)
        return probabilities


def train(vectors: np.ndarray, labels: list[str]) -> Model:
    """Full-batch gradient descent, deterministic (zero start, fixed steps)."""
    names = tuple(sorted(set(labels)))
    y = np.eye(len(names), dtype=np.float32)[[names.index(label) for label in labels]]
    mean = vectors.mean(axis=0)
    x = (vectors - mean) * SCALE
    weights = np.zeros((x.shape[1], len(names)), dtype=np.float32)
    bias = np.zeros(len(names), dtype=np.float32)
    model = Model(names, mean, weights, bias)
    for _ in range(EPOCHS):
        gradient = model.probabilities(vectors) - y
        weights -= STEP * (x.T @ gradient / len(x) + PENALTY * weights)
        bias -= STEP * gradient.mean(axis=0)
    return model


class SemanticReader:
    """A linear model's reading of a clause's vector, with a calibrated abstain threshold."""

    def __init__(self, model: Model, threshold: float):
        self.model = model
        self.threshold = threshold

    @classmethod
    def load(cls, embedder: PassageEmbedder, path: Path = SHIPPED) -> SemanticReader:
        """The reader trained on the tuning part: the shipped model when it is fresh for this embedder, else
        one trained and calibrated now on vectors computed now."""
        shipped = _shipped(embedder, path)
        return shipped if shipped is not None else cls.tuned(embed_all(embedder))

    @classmethod
    def tuned(cls, vectors: np.ndarray, threshold: float | None = None) -> SemanticReader:
        """Trained on the tuning part of ``vectors`` (one per labelled utterance, in file order)."""
        keep = [n for n, u in enumerate(utterances()) if not u.held_out]
        model = train(vectors[keep], [utterances()[n].label for n in keep])
        return cls(model, calibrate(vectors) if threshold is None else threshold)

    def read(self, text: str, vector: np.ndarray) -> Reading | None:
        """What a clause (its words and its passage vector) reads as, or None (abstain)."""
        p = self.model.probabilities(np.asarray(vector, dtype=np.float32))[0]
        return self.read_probabilities(text, p)

    def read_probabilities(self, text: str, p: np.ndarray) -> Reading | None:
        """The reading of a clause whose label probabilities are known (the model's order of labels)."""
        best = int(np.argmax(p))
        label, score = self.model.names[best], float(p[best])
        if label == NONE or score < self.threshold:
            return None
        value = value_of(label, text)
        if not value:
            return None
        return Reading(label, slot_of(label, value), value, label == "preference.negative", score)

    def save(self, vectors: np.ndarray, path: Path = SHIPPED) -> None:
        np.savez_compressed(
            path,
            vectors=vectors.astype(np.float16),
            names=np.array(self.model.names),
            mean=self.model.mean,
            weights=self.model.weights,
            bias=self.model.bias,
            threshold=np.float32(self.threshold),
            utterances_hash=np.str_(utterances_hash()),
        )


def embed_all(embedder: PassageEmbedder) -> np.ndarray:
    return np.asarray(embedder.embed_passages([u.text for u in utterances()]), dtype=np.float32)


def folds() -> list[list[int]]:
    """The tuning part in ``FOLDS`` folds, by position within each label (so every fold has every label)."""
    parts: list[list[int]] = [[] for _ in range(FOLDS)]
    seen: dict[str, int] = {}
    for n, u in enumerate(utterances()):
        if not u.held_out:
            parts[seen.get(u.label, 0) % FOLDS].append(n)
            seen[u.label] = seen.get(u.label, 0) + 1
    return parts


def cross_validated(vectors: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(utterance index, label probabilities) for every tuning utterance, read by a model trained on the
    other folds."""
    read = []
    parts = folds()
    for k, fold in enumerate(parts):
        others = [n for j, part in enumerate(parts) if j != k for n in part]
        model = train(vectors[others], [utterances()[n].label for n in others])
        read += list(zip(fold, model.probabilities(vectors[fold]), strict=True))
    return read


def calibrate(vectors: np.ndarray) -> float:
    """The lowest threshold at which the cross-validated readings of the tuning part are right at least
    ``TARGET_PRECISION`` of the time (the held-out part is never looked at)."""
    names = sorted({u.label for u in utterances()})
    decided = []
    for n, p in cross_validated(vectors):
        best = int(np.argmax(p))
        decided.append((names[best], float(p[best]), utterances()[n].label))
    for threshold in np.arange(0.30, 0.96, 0.01):
        read = [(label, truth) for label, score, truth in decided if label != NONE and score >= threshold]
        right = sum(1 for label, truth in read if label == truth)
        if read and right / len(read) >= TARGET_PRECISION:
            return round(float(threshold), 2)
    return 0.96


def _shipped(embedder: PassageEmbedder, path: Path) -> SemanticReader | None:
    if not path.exists():
        return None
    with np.load(path) as shipped:
        vectors = shipped["vectors"].astype(np.float32)
        fresh = str(shipped["utterances_hash"]) == utterances_hash() and len(vectors) == len(utterances())
        model = Model(
            tuple(str(n) for n in shipped["names"]), shipped["mean"], shipped["weights"], shipped["bias"]
        )
        threshold = float(shipped["threshold"])
    if not fresh:
        return None
    probes = np.linspace(0, len(vectors) - 1, SPOT_CHECKS).astype(int)
    again = np.asarray(embedder.embed_passages([utterances()[n].text for n in probes]), dtype=np.float32)
    if float((again * vectors[probes]).sum(axis=1).min()) < MIN_AGREEMENT:
        return None
    return SemanticReader(model, threshold)
