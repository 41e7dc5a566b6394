"""Restatements in any words, over random sequences (docs/quality.md#8-a-semantic-reader-beside-the-rules):
tastes stated by a rule's claim or read by the semantic reader in a sentence that says more, in random
sessions, among ordinary sentences and repeated words.

* one claim, one item: whatever the wordings, each stated taste is held by exactly one active item,
  confirmed by every session that stated it and carrying every dialog id that stated it (until it
  freezes: a frozen item takes no new sources);
* a restating sentence's words stay a memory: every sentence the reader read is the content of an active
  item that carries its dialog id (its own memory, or the item it restated when that says the very words;
  a frozen one takes no new dialog id), and no words are held twice;
* under a tight capacity the bounded gate holds: no tier over its capacity, and every read sentence is
  still held — active, or archived where recall still searches it, or quoted by the summary compression
  merged it into — with its dialog id.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.core.extraction import ClauseReading, read_as
from actors.core.memory import Candidate, MemoryItem
from schemas.enums import Kind, Layer, State
from tests.unit.core.gate.helpers import Clock, cand, engine, numbered_ids

SLOT = "preference.hobby"
TASTES = ["bouldering", "hiking", "jazz", "chess"]
#: what the reader reads as a taste: the taste said with more than the taste
FRAMES = [
    "{} is my main hobby these days",
    "nothing beats {} after a long week at the office",
    "I spent the whole weekend {} with my cousin Anna",
]
ORDINARY = ["the train was late again this morning", "we painted the kitchen a pale green"]

statement = st.tuples(
    st.sampled_from(["rule", "reading", "reading", "ordinary"]),
    st.integers(0, len(TASTES) - 1),
    st.integers(0, len(FRAMES) - 1),
    st.integers(1, 4),  # session
    st.integers(0, 2),  # which tail: the same words come back now and then
)


def _candidate(op: tuple[str, int, int, int, int], n: int, clock: Clock) -> Candidate:
    form, taste_n, frame_n, session, tail = op
    taste, dialog = TASTES[taste_n], f"d{n}"
    if form == "rule":
        return cand(
            f"I love {taste}",
            f"s{session}",
            dialog,
            slot=SLOT,
            value=taste,
            kind=Kind.PREFERENCE,
            clock=clock,
        )
    if form == "ordinary":
        return cand(f"{ORDINARY[tail % 2]} ({tail})", f"s{session}", dialog, kind=Kind.EVENT, clock=clock)
    words = f"{FRAMES[frame_n].format(taste)} ({tail})"
    ruled = cand(words, f"s{session}", dialog, kind=Kind.EVENT, score=0.5, clock=clock)
    return read_as(ruled, ClauseReading(SLOT, taste))


def _holds(item: MemoryItem, dialog: str) -> bool:
    """The item carries the dialog id — or is frozen: a frozen item takes no new sources (its own words said
    again find it; their dialog id is not added)."""
    return dialog in item.source_dialog_ids or item.is_frozen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(statement, min_size=1, max_size=30))
@numbered_ids()
def test_one_claim_one_item_and_every_read_sentence_stays_a_memory(ops):
    clock = Clock()
    gate = engine(clock=clock)
    stated: dict[str, tuple[set[str], set[str]]] = {}  # taste → sessions, dialog ids
    read: list[Candidate] = []
    for n, op in enumerate(ops):
        clock.advance(seconds=300)
        candidate = _candidate(op, n, clock)
        if candidate.value:
            sessions, dialogs = stated.setdefault(candidate.value, (set(), set()))
            sessions.add(candidate.session_id)
            dialogs.add(candidate.dialog_ids[0])
        if candidate.as_ruled is not None:
            read.append(candidate)
        gate.write(candidate)
        active = gate.active()
        for taste, (sessions, dialogs) in stated.items():
            holding = [i for i in active if (i.slot, i.value) == (SLOT, taste)]
            assert len(holding) == 1, (taste, holding)
            item = holding[0]
            if item.is_frozen:  # a frozen item changes only through an audited unfreeze: no new sources
                assert set(item.confirmed_sessions) <= sessions and set(item.source_dialog_ids) <= dialogs
            else:
                assert set(item.confirmed_sessions) == sessions and dialogs <= set(item.source_dialog_ids)
            if len(sessions) >= 2:
                assert item.state in (State.CONFIRMED, State.FROZEN)
        for r in read:
            assert [i for i in active if i.content == r.content and _holds(i, r.dialog_ids[0])], r.content
        hashes = [i.content_hash for i in active]
        assert len(hashes) == len(set(hashes))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(statement, min_size=10, max_size=40), st.integers(2, 6), st.integers(2, 6))
@numbered_ids()
def test_under_a_tight_capacity_no_tier_overflows_and_read_sentences_are_still_held(ops, working, longterm):
    clock = Clock()
    gate = engine(working=working, longterm=longterm, clock=clock)
    read: list[Candidate] = []
    for n, op in enumerate(ops):
        clock.advance(days=0.25)
        candidate = _candidate(op, n, clock)
        if candidate.as_ruled is not None:
            read.append(candidate)
        gate.write(candidate)
        assert gate.count(Layer.WORKING) <= working and gate.count(Layer.LONGTERM) <= longterm
        kept = [i for i in gate.items.values() if i.is_active or i.state is State.ARCHIVED]
        for r in read:
            # its own item, or the summary compression merged it into (which quotes its sources' words)
            holders = [i for i in kept if r.content in i.content]
            assert [i for i in holders if _holds(i, r.dialog_ids[0])], r.content
