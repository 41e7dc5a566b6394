"""The learned reader (actors/language/reader): what any reading looks like whatever the weights and
states (a value is a substring of its clause, slot and value come together), training recovers a planted
span and slot from synthetic token states, the sub-clause window reads only its own tokens, and the
shipped model is used only when it matches the corpus and the running embedder (the real E5: slow)."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.language.reader.corpus import ACTS, CORPUS, FLAGS, SLOTS, Clause
from actors.language.reader.features import SLOT_LABELS, token_features
from actors.language.reader.reader import SHIPPED, LearnedReader, Network, Weights, _shipped
from actors.language.reader.train import Example, train

HIDDEN = 16


def _random_reader(rng: np.random.Generator, threshold: float) -> LearnedReader:
    width = len(ACTS) + len(SLOT_LABELS) + 1 + len(FLAGS) + 1
    tagger_inputs = token_features(np.zeros((1, HIDDEN), np.float32), "").shape[1]

    def layer(inputs: int, outputs: int) -> tuple[np.ndarray, np.ndarray]:
        return (
            rng.normal(size=(inputs, outputs)).astype(np.float32),
            rng.normal(size=outputs).astype(np.float32),
        )

    return LearnedReader(
        Weights(
            Network(layer(2 * HIDDEN, 8), layer(8, width)),
            Network(layer(tagger_inputs, 3)),
            threshold,
            doubt_cut=float(rng.normal()),
        )
    )


def _spans_of(words: list[str]) -> tuple[str, np.ndarray]:
    """A text of words joined by spaces and each word's span."""
    spans, at = [], 0
    for word in words:
        spans.append((at, at + len(word)))
        at += len(word) + 1
    return " ".join(words), np.array(spans, dtype=np.int32).reshape(-1, 2)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    words=st.lists(
        st.text(st.characters(exclude_categories=["Cs", "Zs", "Cc"]), min_size=1, max_size=6), max_size=20
    ),
    threshold=st.floats(0.0, 1.0),
    window=st.tuples(st.integers(0, 80), st.integers(0, 80)),
)
def test_any_reading_is_well_formed(seed, words, threshold, window):
    rng = np.random.default_rng(seed)
    text, spans = _spans_of(words)
    states = rng.normal(size=(len(words), HIDDEN)).astype(np.float32)
    clause = (min(window), max(window))
    reading = _random_reader(rng, threshold).read(text, states, spans, clause)
    assert reading.act in ACTS and reading.flags <= set(FLAGS) and reading.polarity in "+-"
    assert (reading.slot is None) == (reading.value is None)
    if reading.value is not None:
        assert reading.slot in SLOTS and reading.value in text[clause[0] : clause[1]]
        assert reading.value == reading.value.strip() and reading.score >= threshold
    if reading.own_slot:
        assert reading.act == "fact"


def _planted(rng: np.random.Generator, count: int) -> list[Example]:
    """Clauses of random words whose states carry their labels: dimension ``1 + slot`` set on every token
    of a clause about that slot, dimension 0 on the tokens of its value; a clause with no slot is a
    request or a greeting (dimension 12 or 13)."""
    examples = []
    for _ in range(count):
        words = [f"w{rng.integers(1000)}" for _ in range(rng.integers(4, 10))]
        text, spans = _spans_of(words)
        states = rng.normal(scale=0.5, size=(len(words), HIDDEN)).astype(np.float32)
        kind = int(rng.integers(0, 5))
        if kind < 3:
            slot = SLOTS[kind]
            first = int(rng.integers(0, len(words) - 2))
            last = first + int(rng.integers(0, 2))
            states[:, 1 + kind] += 2.0
            states[first : last + 1, 0] += 3.0
            value = text[spans[first, 0] : spans[last, 1]]
            clause = Clause(text, "fact", slot, value, "+", frozenset())
        else:
            act = ("request", "greeting")[kind - 3]
            states[:, 9 + kind] += 2.0
            clause = Clause(text, act, None, None, "+", frozenset())
        examples.append(Example("en", clause, states.mean(axis=0), states, spans))
    return examples


def test_training_recovers_a_planted_slot_value_and_act():
    rng = np.random.default_rng(7)
    reader = train(_planted(rng, 300), penalty=1e-2, threshold=0.5)
    fresh = _planted(rng, 100)
    right = 0
    for e in fresh:
        reading = reader.read(e.clause.text, e.states, e.spans)
        right += (reading.act, reading.slot, reading.value) == (e.clause.act, e.clause.slot, e.clause.value)
    assert right >= 90


def test_a_window_reads_only_the_tokens_inside_it():
    rng = np.random.default_rng(3)
    reader = train(_planted(rng, 300), penalty=1e-2, threshold=0.5)
    valued = [e for e in _planted(rng, 40) if e.clause.slot is not None]
    about = valued[0]
    other = next(e for e in valued if e.clause.slot != about.clause.slot)
    text = about.clause.text + " " + other.clause.text
    shift = len(about.clause.text) + 1
    states = np.concatenate([about.states, other.states])
    spans = np.concatenate([about.spans, other.spans + shift])
    first = reader.read(text, states, spans, (0, len(about.clause.text)))
    second = reader.read(text, states, spans, (shift, len(text)))
    assert (first.slot, first.value) == (about.clause.slot, about.clause.value)
    assert (second.slot, second.value) == (other.clause.slot, other.clause.value)


class _NoiseStates:
    """An embedder whose states have nothing to do with E5's."""

    def embed_passages_with_states(self, texts):
        rng = np.random.default_rng(0)
        states = [rng.normal(size=(max(len(t) // 4, 1), 384)).astype(np.float32) for t in texts]
        spans = [np.zeros((len(s), 2), np.int32) for s in states]
        return np.zeros((len(texts), 384), np.float32), states, spans


def test_a_shipped_model_is_not_used_with_other_states_nor_for_another_corpus(tmp_path):
    assert _shipped(_NoiseStates(), SHIPPED) is None
    stale = tmp_path / "model.npz"
    with np.load(SHIPPED) as shipped:
        np.savez(stale, **{**dict(shipped), "corpus_hash": np.str_("0" * 64)})
    assert _shipped(_NoiseStates(), stale) is None


class _WordStates:
    """States made from each word's hash: the same word, the same state (no model)."""

    def embed_passages_with_states(self, texts):
        states, spans = [], []
        for text in texts:
            words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)] or [(0, 0)]
            seeds = [zlib.crc32(text[a:b].encode()) for a, b in words]
            states.append(
                np.stack([np.random.default_rng(s).normal(size=HIDDEN) for s in seeds]).astype(np.float32)
            )
            spans.append(np.array(words, dtype=np.int32))
        return np.stack([s.mean(axis=0) for s in states]), states, spans


def test_a_shipped_model_that_does_not_match_the_corpus_is_retrained_on_it(tmp_path):
    """Another corpus than the shipped model's: ``load`` trains on that corpus's training part."""
    for lang in ("en", "zh"):
        lines = (CORPUS / f"train_{lang}.jsonl").read_text(encoding="utf-8").splitlines()[:60]
        (tmp_path / f"train_{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    reader = LearnedReader.load(_WordStates(), SHIPPED, corpus=tmp_path)
    with np.load(SHIPPED) as shipped:
        assert (
            reader.weights.clause.layers[0][0].shape[0] == 2 * HIDDEN != shipped["clause_0_weights"].shape[0]
        )
        assert reader.weights.threshold == pytest.approx(float(shipped["threshold"]))
    assert _shipped(_WordStates(), SHIPPED, tmp_path) is None


@pytest.fixture(scope="module")
def e5():
    from actors.adapters.embedding import E5Embedder

    return E5Embedder()


@pytest.mark.slow
def test_the_shipped_model_is_fresh_for_e5(e5):
    reader = _shipped(e5, SHIPPED)
    assert reader is not None
    with np.load(SHIPPED) as shipped:
        for network, name in ((reader.weights.clause, "clause"), (reader.weights.tagger, "tagger")):
            assert all(
                np.array_equal(weights, shipped[f"{name}_{n}_weights"])
                for n, (weights, _) in enumerate(network.layers)
            )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I'm allergic to peanuts", "basic.allergy", "peanuts"),
        ("we live in Toronto these days", "basic.residence", "Toronto"),
        ("我对花生过敏", "basic.allergy", "花生"),
        ("我是一名护士", "basic.occupation", "护士"),
    ],
)
def test_plain_facts_are_read_with_their_value(e5, text, slot, value):
    _, states, spans = e5.embed_passages_with_states([text])
    reading = LearnedReader.load(e5).read(text, states[0], spans[0])
    assert (reading.act, reading.slot, reading.value, reading.own_slot) == ("fact", slot, value, True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "not_theirs"),
    [
        ("my sister is allergic to shellfish", "basic.allergy"),
        ("what's a good recipe with peanuts?", "preference.food"),
        ("我朋友对花生过敏", "basic.allergy"),
        ("如果我住在罗马就好了", "basic.residence"),
    ],
)
def test_look_alikes_do_not_give_the_user_their_slot(e5, text, not_theirs):
    _, states, spans = e5.embed_passages_with_states([text])
    reading = LearnedReader.load(e5).read(text, states[0], spans[0])
    assert not (reading.own_slot and reading.slot == not_theirs), reading
