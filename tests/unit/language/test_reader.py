"""The semantic reader: the labelled set's shape, the value extractors over families of clauses, the shipped
model's freshness check, its figures on the held-out part, look-alikes that stay slot-less, and three ways
of saying one taste confirming one item through the service (the real E5 embedder: marked slow)."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from actors.adapters.embedding import E5Embedder, HashEmbedder
from actors.app.service import UserMemoryService
from actors.app.write import UnruledReader
from actors.language.understanding.figures import figures
from actors.language.understanding.reader import (
    NONE,
    SHIPPED,
    SemanticReader,
    embed_all,
    utterances,
)
from actors.language.understanding.values import value_of
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.enums import State
from schemas.settings import GatePolicy


def test_the_labelled_set_is_large_bilingual_and_holds_look_alikes_out_of_tuning():
    items = utterances()
    assert len(items) >= 400
    assert sum(u.language == "zh" for u in items) >= len(items) // 2
    look_alikes = [u for u in items if u.label == NONE]
    assert {"My sister loves opera.", "I teach my kids to swim."} <= {u.text for u in look_alikes}
    for label in {u.label for u in items}:
        mine = [u for u in items if u.label == label]
        assert any(u.held_out for u in mine) and any(not u.held_out for u in mine), label
        assert all(u.value for u in mine) or label == NONE, label


@pytest.mark.parametrize(
    ("frame", "taste", "value"),
    [
        (frame, taste, value)
        for frame, (taste, value) in product(
            [
                "{} is my main hobby these days.",
                "Nothing beats {} after work.",
                "I'm obsessed with {}.",
                "These days you'll find me {} every Sunday.",
            ],
            [("bouldering", "bouldering"), ("hiking", "hiking"), ("jazz", "jazz"), ("swimming", "swimming")],
        )
    ],
)
def test_a_taste_s_value_is_found_in_many_frames(frame: str, taste: str, value: str) -> None:
    assert value_of("preference", frame.format(taste)) == value


@pytest.mark.parametrize(
    ("label", "text", "value"),
    [
        ("basic.name", "Folks around here know me as Dave.", "dave"),
        ("basic.name", "The name on my passport is Mariana Costa.", "mariana costa"),
        ("basic.name", "朋友们习惯叫我老周。", "老周"),
        ("basic.residence", "These days home is Lisbon for me.", "lisbon"),
        ("basic.residence", "我在 Berlin 住了五年。", "berlin"),
        ("basic.residence", "我家在深圳南山。", "shenzhen"),
        ("basic.occupation", "I write code for a living.", "programmer"),
        ("basic.occupation", "我在医院当护士。", "nurse"),
        ("basic.employer", "我现在供职于华为。", "huawei"),
        ("basic.allergy", "一到春天花粉就让我过敏。", "pollen"),
        ("basic.diet_restriction", "I haven't eaten meat in years.", "vegetarian"),
        ("basic.pet", "我家有只柯基。", "dog"),
        ("preference", "我最近迷上了攀岩。", "climbing"),
        ("style.format", "I'd rather not see any emojis.", "no emoji"),
        ("style.format", "Plain text only, no formatting.", "plain text"),
        ("style.reply_length", "说重点就行。", "short"),
        ("state.mood", "Ugh, what a day, I'm completely fried.", "tired"),
        ("state.situation", "I'm under the weather today.", "sick"),
    ],
)
def test_each_slot_s_value_is_found_in_the_clause(label: str, text: str, value: str) -> None:
    assert value_of(label, text) == value


def test_a_clause_naming_nothing_the_slot_holds_gives_no_value() -> None:
    assert value_of("basic.residence", "I've lived here for a while.") is None
    assert value_of("basic.allergy", "Some foods make me feel bad.") is None
    assert value_of("style.format", "Please answer nicely.") is None


def test_a_stale_shipped_model_is_not_used_with_another_embedder():
    """Vectors of another embedder fail the start-up spot check: the reader is trained afresh on them."""
    hashed = HashEmbedder(384)
    reader = SemanticReader.load(hashed)
    with np.load(SHIPPED) as shipped:
        assert not np.allclose(reader.model.weights, shipped["weights"])


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture(scope="module")
def shipped_reader(e5: E5Embedder) -> SemanticReader:
    return SemanticReader.load(e5)


@pytest.mark.slow
def test_the_shipped_model_is_fresh_for_e5_and_reads_as_a_model_trained_now(e5, shipped_reader):
    with np.load(SHIPPED) as shipped:
        assert np.allclose(shipped_reader.model.weights, shipped["weights"])
    vectors = embed_all(e5)
    with np.load(SHIPPED) as shipped:
        assert float((vectors * shipped["vectors"].astype(np.float32)).sum(axis=1).min()) > 0.98


@pytest.mark.slow
def test_held_out_figures_meet_their_floor():
    """The figures docs/quality.md reports, recomputed from the shipped vectors: on the part never tuned on,
    at least 0.85 of what is read is right, half of what should be read is, and 9 look-alikes in 10 stay
    slot-less."""
    with np.load(SHIPPED) as shipped:
        vectors, threshold = shipped["vectors"].astype(np.float32), float(shipped["threshold"])
    rows = {r.label: r for r in figures(vectors, threshold)}
    slotted = [r for label, r in rows.items() if label != NONE]
    read, right, wanted = (sum(getattr(r, f) for r in slotted) for f in ("read_as", "correct", "support"))
    assert right / read >= 0.85 and right / wanted >= 0.50
    assert (rows[NONE].recall or 0.0) >= 0.9


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "My sister loves opera.",
        "I teach my kids to swim.",
        "My husband is allergic to cats.",
        "我儿子特别喜欢恐龙。",
        "我同事住在苏州。",
        "We went hiking with my parents last weekend.",
    ],
)
def test_look_alikes_stay_slot_less(e5, shipped_reader, text):
    assert shipped_reader.read(text, e5.embed_passages([text])[0]) is None


@pytest.mark.slow
def test_three_ways_of_saying_one_taste_confirm_one_item(e5, shipped_reader, tmp_path):
    """Three sessions, three wordings: a rule reads the first, the reader the second, and what the reader
    reads restates the rule's item by slot and value — one item, confirmed, never three. (The third, a
    held-out wording, the reader abstains on today: it stays a slot-less event, not a second taste.)"""
    store = MemoryStore(f"sqlite:///{tmp_path / 'r.db'}")
    store.create_schema()
    store.tenants.create("acme")
    svc = UserMemoryService(
        "acme",
        "tomas",
        store=store,
        embedder=e5,
        policy=GatePolicy(),
        reader=lambda: UnruledReader(shipped_reader),
    )
    for n, text in enumerate(
        [
            "I'm really into bouldering.",
            "Bouldering is my main hobby these days.",
            "Nothing beats a bouldering session after work.",
        ]
    ):
        turn = api.TurnIn(text=text, dialog_id=f"d{n}")
        svc.writes.write_turns(api.WriteTurnsRequest(session_id=f"s{n}", turns=[turn]))
    tastes = [m for m in svc.memories.list().items if m.value == "bouldering"]
    assert len(tastes) == 1
    assert tastes[0].state in (State.CONFIRMED, State.FROZEN) and len(tastes[0].confirmed_sessions) >= 2
    assert not [m for m in svc.memories.list().items if m.slot and m.slot.startswith("preference.")][1:]
    store.dispose()


#: sentences that say a taste and more: what the reader reads in turns no rule reads
SAYING_MORE = [
    "{} is my main hobby these days, I go twice a week with friends from the office.",
    "Nothing beats {} after work, it clears my head after a long day of meetings.",
    "I'm obsessed with {}, I spent most of last month's savings on new gear for it.",
]
TASTES = ["bouldering", "hiking", "swimming", "jazz"]


@pytest.mark.slow
def test_a_restating_sentence_confirms_the_item_and_stays_a_memory_of_its_own(e5, shipped_reader, tmp_path):
    """A taste stated by a rule, then in another session in a sentence that says more, which the reader
    reads as the same taste (each taste × wording): one taste item, confirmed by both sessions, and the
    sentence is a memory of its own — recall finds it by its own words, with its dialog id."""
    store = MemoryStore(f"sqlite:///{tmp_path / 'r.db'}")
    store.create_schema()
    store.tenants.create("acme")
    said = [(taste, frame.format(taste)) for taste in TASTES for frame in SAYING_MORE]
    pairs = [(taste, sentence[0].upper() + sentence[1:]) for taste, sentence in said]
    vectors = e5.embed_passages([sentence for _, sentence in pairs])
    readings = [shipped_reader.read(sentence, v) for (_, sentence), v in zip(pairs, vectors, strict=True)]
    read = [p for p, r in zip(pairs, readings, strict=True) if r is not None and r.value == p[0]]
    assert len(read) >= len(pairs) // 3  # the family is one the reader reads (5 of 12 with the shipped model)
    for n, (taste, sentence) in enumerate(read):
        svc = UserMemoryService(
            "acme",
            f"u{n}",
            store=store,
            embedder=e5,
            policy=GatePolicy(),
            reader=lambda: UnruledReader(shipped_reader),
        )
        for session, text in (("s1", f"I'm really into {taste}."), ("s2", sentence)):
            turn = api.TurnIn(text=text, dialog_id=f"{session}-d")
            svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=[turn]))
        memories = svc.memories.list().items
        tastes = [m for m in memories if m.value == taste]
        assert len(tastes) == 1 and tastes[0].confirmed_sessions == ["s1", "s2"], sentence
        assert "s2-d" in tastes[0].source_dialog_ids
        # what the sentence says besides the taste (the rules may have cut the claim out of it)
        tail = sentence.split(",", 1)[1]
        own = [m for m in memories if m.slot is None and tail.strip(" .") in m.content]
        assert [m.source_dialog_ids for m in own] == [["s2-d"]], sentence
        hits = svc.recalls.recall(api.RecallRequest(query=tail, k=3)).hits
        assert own[0].memory_id in [h.memory.memory_id for h in hits], sentence
    store.dispose()
