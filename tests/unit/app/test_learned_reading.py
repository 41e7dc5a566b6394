"""The learned reader at the write chain's read step (``actors.app.learned_reading``): how a reading's flags
become the gate's reading (tested over every combination of flags, on readings built by hand: the logic
alone, not the model), the parts of a clause it reads, and the token states that join a prepared write
from the same forward pass as its vectors — in the service and in the host's batching embedder."""

from __future__ import annotations

import threading

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from actors.adapters.embedding import HashEmbedder
from actors.app.learned_reading import (
    NOT_THE_USERS,
    STATEMENTS_ABOUT_A_FACT,
    LearnedClauseReader,
    windows,
)
from actors.language.packs import packs
from actors.language.reader.corpus import FLAGS, SLOTS
from actors.language.reader.reader import LearnedReader
from actors.language.reader.reader import Reading as LearnedReading
from actors.language.segments import segment
from actors.runtime.batching import BatchingEmbedder

CUT, SCORE = -1.5, 0.75
READER = LearnedClauseReader(LearnedReader.__new__(LearnedReader), doubt_cut=CUT, min_score=SCORE)


@given(
    act=st.sampled_from(["fact", "request", "instruction", "greeting", "secret"]),
    slot=st.sampled_from([*SLOTS, None]),
    flags=st.frozensets(st.sampled_from(FLAGS)),
    polarity=st.sampled_from(["+", "-"]),
    doubt=st.floats(-6, 6),
    score=st.floats(0.5, 1.0),
)
def test_a_reading_is_kept_as_the_users_own_only_as_its_flags_say(act, slot, flags, polarity, doubt, score):
    value = None if slot is None else "Porto"
    learned = LearnedReading(act, slot, value, polarity, flags, score, doubt, own=False)
    kept = READER.kept(learned)
    doubted = doubt >= CUT and not flags & STATEMENTS_ABOUT_A_FACT
    lasting = slot is not None and slot.startswith(("basic.", "preference.", "relation."))
    if act != "fact" or not lasting or score < SCORE or flags & NOT_THE_USERS or doubted:
        assert kept is None
        return
    assert kept is not None and kept.slot == slot
    assert kept.value == "porto"  # normalized as the rules normalize theirs
    assert kept.negative == (polarity == "-" or bool(flags & {"negated", "retraction"}))
    assert kept.correction == ("change" in flags)
    assert kept.temporary == ("time_bound" in flags)


@given(
    st.lists(
        st.sampled_from(["I live in Porto", "我住在厦门", "no", "kiwi makes my mouth swell"]),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([", ", "，", "; ", ". "]),
)
def test_the_parts_read_are_windows_of_the_text(parts, joiner):
    text = joiner.join(parts)
    found = windows(text, segment(text, packs()))
    assert found[0] == (0, len(text))
    assert len(found) == len(set(found))
    for start, end in found:
        assert 0 <= start < end <= len(text)
        assert text[start:end].strip() == text[start:end]
    if len(parts) > 1:  # every part alone is read too
        assert {text[s:e].rstrip(".") for s, e in found} >= {p for p in parts}


class StatesModel:
    """A model with token states (one row per word) that counts its forward passes."""

    dim = 8

    def __init__(self) -> None:
        self.passes: list[str] = []
        self._hash = HashEmbedder(self.dim)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.passes.append("vectors")
        return self._hash.embed_passages(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.passes.append("query")
        return self._hash.embed_queries(texts)

    def embed_passages_with_states(self, texts: list[str]):
        self.passes.append("states")
        states = [np.full((len(t.split()), 4), n, dtype=np.float32) for n, t in enumerate(texts)]
        spans = [np.array([[i, i + 1] for i in range(len(t.split()))], dtype=np.int32) for t in texts]
        return self._hash.embed_passages(texts), states, spans


def test_the_batching_embedder_gives_each_caller_its_states_from_the_pass_of_its_vectors():
    model = StatesModel()
    batching = BatchingEmbedder(model)
    texts = [["one two", "three"], ["four five six"], ["seven"]]
    answers: list = [None] * len(texts)

    def ask(n: int) -> None:
        answers[n] = batching.submit_with_states(texts[n], owner=n).result()

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(model.passes) == {"states"}
    for asked, (vectors, states) in zip(texts, answers, strict=True):
        np.testing.assert_allclose(vectors, HashEmbedder(model.dim).embed_passages(asked))
        assert [len(s) for s, _ in states] == [len(t.split()) for t in asked]
        assert all(len(s) == len(sp) for s, sp in states)
    vectors, states, spans = batching.owned_by("x").embed_passages_with_states(["a b c"])
    assert vectors.shape == (1, model.dim) and states[0].shape == (3, 4) and spans[0].shape == (3, 2)
