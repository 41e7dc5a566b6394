"""The learned reader: a clause's act, slot, value span, polarity and flags, read from the token states of
the forward pass that embeds it (``StatesEmbedder.embed_passages_with_states``).

Two small models, applied with numpy (a few small matrix products, well under a millisecond):

* the **clause classifier**, a network of one hidden layer over the mean and maximum of the clause's
  token states: the act (softmax over ``ACTS``), the slot (softmax over ``SLOTS`` and "no slot"), the
  polarity and each flag (a logistic each);
* the **span tagger**, a linear model over each token's state, its neighbours', the clause's mean and
  the slot read (``features.token_features``): O/B/I per token, decoded
  as the single best span (the one maximising B at its start, I inside and O everywhere else), mapped back
  to the clause's characters by the tokens' offsets.

A slot is read for a fact whose likeliest slot's probability reaches ``threshold``; a reading is the user's
own when a last logistic, the doubt that the clause is not the user's own lasting fact (a look-alike:
another act, someone else's fact, a hypothetical, a plan, a joke, a quote, a denial), stays under
``doubt_cut``. Both are set by cross-validation on the training part (``train.py``). The model ships
trained (``model.npz``: the weights, the cuts, the hash of the training files and a few training clauses'
features to check the embedder against);
``LearnedReader.load`` retrains at start when the shipped file does not match the corpus or the embedder.
``python -m actors.language.reader.build`` rewrites it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from actors.language.reader.corpus import ACTS, CORPUS, FLAGS, corpus_hash, not_own
from actors.language.reader.features import SLOT_LABELS, clause_features, token_features
from actors.language.text import has_han

HERE = Path(__file__).parent
SHIPPED = HERE / "model.npz"
#: a value is at most this many tokens long
MAX_SPAN = 12
#: how close a fresh embedding of the check clauses must come to the shipped features (cosine)
MIN_AGREEMENT = 0.98
_JOINERS = "-'’"


@runtime_checkable
class StatesEmbedder(Protocol):
    def embed_passages_with_states(
        self, texts: list[str]
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]: ...


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader found in one clause. ``slot`` and ``value`` are both set or both None; ``score`` is
    the probability of the likeliest slot (read only when it reaches the threshold), ``doubt`` the logit
    that the clause is not the user's own lasting fact (``corpus.not_own``)."""

    act: str
    slot: str | None
    value: str | None
    polarity: str
    flags: frozenset[str]
    score: float
    doubt: float
    own: bool

    @property
    def own_slot(self) -> bool:
        """A slot read as the user's own lasting fact."""
        return self.slot is not None and self.own


class Network:
    """Dense layers with a tanh between them (a single layer: a linear model), the inputs'
    standardisation folded into the first; each layer a (weights, bias) pair."""

    def __init__(self, *layers: tuple[np.ndarray, np.ndarray]):
        self.layers = layers

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for weights, bias in self.layers[:-1]:
            x = np.tanh(x @ weights + bias)
        weights, bias = self.layers[-1]
        out: np.ndarray = x @ weights + bias
        return out

    def arrays(self, name: str) -> dict[str, np.ndarray]:
        """The layers as named arrays, for ``np.savez``."""
        return {
            f"{name}_{n}_{part}": array
            for n, layer in enumerate(self.layers)
            for part, array in zip(("weights", "bias"), layer, strict=True)
        }

    @classmethod
    def from_arrays(cls, name: str, arrays: Mapping[str, np.ndarray]) -> Network:
        count = sum(key.startswith(f"{name}_") and key.endswith("_weights") for key in arrays)
        return cls(*((arrays[f"{name}_{n}_weights"], arrays[f"{name}_{n}_bias"]) for n in range(count)))


@dataclass(frozen=True, slots=True)
class Weights:
    """The two networks and the two cuts chosen by cross-validation: the slot probability a value is read
    from, the doubt under which it is the user's."""

    clause: Network  # clause_features → acts + slot labels + polarity + flags + doubt
    tagger: Network  # token_features → O, B, I
    threshold: float
    doubt_cut: float


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    p: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return p


class LearnedReader:
    def __init__(self, weights: Weights):
        self.weights = weights
        acts, slots = len(ACTS), len(SLOT_LABELS)
        self._act = slice(0, acts)
        self._slot = slice(acts, acts + slots)
        self._polarity = acts + slots
        self._flags = slice(acts + slots + 1, acts + slots + 1 + len(FLAGS))
        self._doubt = acts + slots + 1 + len(FLAGS)

    def read(
        self, text: str, states: np.ndarray, spans: np.ndarray, clause: tuple[int, int] | None = None
    ) -> Reading:
        """The reading of ``text[clause[0]:clause[1]]`` (the whole text by default), given the text's token
        states and their character spans, as ``embed_passages_with_states`` returns them."""
        start, end = clause if clause is not None else (0, len(text))
        inside = (spans[:, 0] >= start) & (spans[:, 1] <= end)
        own_states, own_spans = states[inside], spans[inside]
        z = self.weights.clause(clause_features(own_states))
        act = ACTS[int(np.argmax(z[self._act]))]
        slot_p = _softmax(z[self._slot])[:-1]  # the slots, without "no slot"
        best = int(np.argmax(slot_p))
        slot, score = SLOT_LABELS[best], float(slot_p[best])
        polarity = "-" if z[self._polarity] > 0 else "+"
        flags = frozenset(flag for flag, logit in zip(FLAGS, z[self._flags], strict=True) if logit > 0)
        doubt = float(z[self._doubt])
        own = doubt < self.weights.doubt_cut and not not_own(act, slot, flags)
        value = None
        if act == "fact" and score >= self.weights.threshold and len(own_states):
            value = self._value(text, own_states, own_spans, slot)
        if value is None:
            return Reading(act, None, None, polarity, flags, score, doubt, own)
        return Reading(act, slot, value, polarity, flags, score, doubt, own)

    def _value(self, text: str, states: np.ndarray, spans: np.ndarray, slot: str) -> str | None:
        """The best-scoring span of at most ``MAX_SPAN`` tokens, as the substring it covers."""
        z = self.weights.tagger(token_features(states, slot))
        logp = np.log(_softmax(z) + 1e-9)
        gain_b, gain_i = logp[:, 1] - logp[:, 0], logp[:, 2] - logp[:, 0]
        cumulative = np.cumsum(gain_i)
        # score[i, j] = B at i, I from i+1 to j, O elsewhere (relative to all O)
        score = gain_b[:, None] + cumulative[None, :] - cumulative[:, None]
        first, last = np.indices(score.shape)
        score[(last < first) | (last - first >= MAX_SPAN)] = -np.inf
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        start, end = _whole_words(
            text, int(spans[i, 0]), int(spans[j, 1]), int(spans[0, 0]), int(spans[-1, 1])
        )
        return _trimmed(text[start:end]) or None

    @classmethod
    def load(cls, embedder: StatesEmbedder, path: Path = SHIPPED, corpus: Path = CORPUS) -> LearnedReader:
        """The shipped reader when it was trained on this corpus and this embedder's states, else one
        trained now (embedding the training part: seconds to a minute)."""
        shipped = _shipped(embedder, path, corpus)
        if shipped is not None:
            return shipped
        from actors.language.reader.train import DEFAULT_PENALTY, DEFAULT_THRESHOLD, examples_of, train

        penalty, threshold, doubt_cut = DEFAULT_PENALTY, DEFAULT_THRESHOLD, 0.0
        if path.exists():  # the choices cross-validated for the shipped model, kept for a grown corpus
            with np.load(path) as stale:
                penalty, threshold = float(stale["penalty"]), float(stale["threshold"])
                doubt_cut = float(stale["doubt_cut"])
        return train(examples_of(embedder, "train", corpus), penalty, threshold, doubt_cut)

    def save(
        self, penalty: float, checks: list[str], check_features: np.ndarray, path: Path = SHIPPED
    ) -> None:
        w = self.weights
        arrays: dict[str, Any] = {**w.clause.arrays("clause"), **w.tagger.arrays("tagger")}
        np.savez_compressed(
            path,
            penalty=np.float32(penalty),
            threshold=np.float32(w.threshold),
            doubt_cut=np.float32(w.doubt_cut),
            corpus_hash=np.str_(corpus_hash()),
            checks=np.array(checks),
            check_features=check_features.astype(np.float32),
            **arrays,
        )


def _in_word(char: str) -> bool:
    """A letter or digit of a spaced script: a piece ending or starting on one may be half a word (a Han
    character is a word of its own, its pieces are cut where words are)."""
    return char.isalnum() and not has_han(char)


def _inside_word(text: str, at: int) -> bool:
    """Whether the boundary just before ``text[at]`` falls inside a word (a hyphen or an apostrophe between
    letters joins them: "k-dramas", "O'Brien")."""
    left, right = text[at - 1], text[at]
    if right in _JOINERS:
        return _in_word(left) and at + 1 < len(text) and _in_word(text[at + 1])
    if left in _JOINERS:
        return _in_word(right) and at >= 2 and _in_word(text[at - 2])
    return _in_word(left) and _in_word(right)


def _whole_words(text: str, start: int, end: int, first: int, last: int) -> tuple[int, int]:
    """``[start, end)`` widened, within ``[first, last)``, to the whole words it cuts ("af" of "Waffles",
    "k" of "k-dramas"): a span of pieces may stop inside a word the tokenizer cut in several."""
    while start > first and _inside_word(text, start):
        start -= 1
    while end < last and _inside_word(text, end):
        end += 1
    return start, end


def _trimmed(value: str) -> str:
    """A span without the spaces and punctuation a token may carry at its edges."""
    start, end = 0, len(value)
    while start < end and (value[start].isspace() or unicodedata.category(value[start]).startswith("P")):
        start += 1
    while end > start and (value[end - 1].isspace() or unicodedata.category(value[end - 1]).startswith("P")):
        end -= 1
    return value[start:end]


def _shipped(embedder: StatesEmbedder, path: Path, corpus: Path = CORPUS) -> LearnedReader | None:
    if not path.exists():
        return None
    with np.load(path) as shipped:
        if str(shipped["corpus_hash"]) != corpus_hash(corpus):
            return None
        weights = Weights(
            Network.from_arrays("clause", shipped),
            Network.from_arrays("tagger", shipped),
            float(shipped["threshold"]),
            float(shipped["doubt_cut"]),
        )
        checks = [str(text) for text in shipped["checks"]]
        expected = shipped["check_features"]
    _, states, _ = embedder.embed_passages_with_states(checks)
    fresh = np.stack([clause_features(s) for s in states])
    cosines = (fresh * expected).sum(axis=1) / (
        np.linalg.norm(fresh, axis=1) * np.linalg.norm(expected, axis=1) + 1e-9
    )
    return LearnedReader(weights) if float(cosines.min()) >= MIN_AGREEMENT else None
