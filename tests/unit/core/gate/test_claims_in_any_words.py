"""One claim in any words (issue 34, part 4), over families of generated pairs: a reader's reading of a
clause no rule read (faked here as the ``ClauseReading`` a reader gives: this tests the gate's logic, not a
reader) is the same claim as a rule's when its slot and value agree — after normalization, or one value
holding the other's words for a thing the user reacts to or lives with ("kiwi" and "kiwi fruit") — so a
restatement in other words confirms by the state machine's rules; a change read in any words supersedes,
or waits with its alert where the old value is frozen; a vital retraction in any words raises its alert; a
time-bound reading is a state and never freezes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core.extraction import ClauseReading, read_as
from actors.core.slots import same_value
from schemas.enums import AlertKind, Kind, Polarity, State
from tests.unit.core.gate.helpers import cand, engine, numbered_ids

#: (slot, a value, the same thing in more words)
CONTAINED = [
    ("basic.allergy", "kiwi", "kiwi fruit"),
    ("basic.allergy", "peanut", "peanut butter"),
    ("basic.allergy", "花生", "花生酱"),
    ("basic.allergy", "shellfish", "raw shellfish"),
    ("basic.diet_restriction", "pork", "pork products"),
    ("basic.diet_restriction", "猪肉", "猪肉制品"),
    ("basic.health", "diabetes", "type 2 diabetes"),
    ("basic.health", "糖尿病", "二型糖尿病"),
]
#: (slot, a value, another value sharing letters but no whole word)
APART = [
    ("basic.allergy", "nut", "peanut"),
    ("basic.allergy", "kiwi", "kiwano"),
    ("basic.allergy", "egg", "eggplant"),
    ("basic.health", "asthma", "hay fever"),
    ("basic.residence", "york", "new york"),
    ("basic.occupation", "nurse", "nurse practitioner"),
]
SINGLE_VALUED = [
    ("basic.residence", "xiamen", "fuzhou"),
    ("basic.occupation", "paramedic", "first-aid instructor"),
    ("basic.name", "王晓雯", "王小雯"),
]
VITAL = [("basic.health", "diabetes"), ("basic.allergy", "kiwi"), ("basic.diet_restriction", "pork")]
WORDS = ["just so you know,", "by the way", "honestly", "fyi", "oh and", "也说一下，"]


def ruled(slot: str, value: str, session: str, dialog: str, polarity: Polarity = Polarity.POSITIVE):
    return cand(f"{slot} is {value} ({dialog})", session, dialog, slot=slot, value=value, polarity=polarity)


def reading_of(words: str, session: str, dialog: str, reading: ClauseReading):
    """A slot-less clause of the rules, as a reader read it."""
    return read_as(cand(f"{words} ({dialog})", session, dialog, kind=Kind.EVENT, score=0.5), reading)


@given(st.sampled_from(CONTAINED), st.booleans())
def test_a_value_holding_the_others_words_is_the_same_value(family, swapped):
    slot, short, long = family
    a, b = (long, short) if swapped else (short, long)
    assert same_value(slot, a, b)


@given(st.sampled_from(APART), st.booleans())
def test_a_value_sharing_letters_but_no_word_is_another_value(family, swapped):
    slot, one, other = family
    a, b = (other, one) if swapped else (one, other)
    assert not same_value(slot, a, b)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CONTAINED), st.booleans(), st.sampled_from(WORDS), st.booleans())
@numbered_ids()
def test_a_restatement_in_other_words_confirms_the_one_claim(family, long_first, words, reading_first):
    slot, short, long = family
    first, second = (long, short) if long_first else (short, long)
    gate = engine()
    said = [
        reading_of(f"{words} {first}", "s1", "d1", ClauseReading(slot, first)),
        ruled(slot, second, "s2", "d2"),
    ]
    if not reading_first:
        said = [
            ruled(slot, first, "s1", "d1"),
            reading_of(f"{words} {second}", "s2", "d2", ClauseReading(slot, second)),
        ]
    for candidate in said:
        gate.write(candidate)
    claims = [i for i in gate.active() if i.slot == slot]
    assert len(claims) == 1
    assert set(claims[0].confirmed_sessions) == {"s1", "s2"}
    assert claims[0].state in (State.CONFIRMED, State.FROZEN)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SINGLE_VALUED), st.sampled_from(WORDS), st.booleans())
@numbered_ids()
def test_a_change_read_in_any_words_supersedes_or_waits_with_its_alert_on_a_frozen_value(
    family, words, frozen
):
    slot, old, new = family
    gate = engine()
    first, _ = gate.write(ruled(slot, old, "s1", "d1"))
    if frozen:
        gate.write(ruled(slot, old, "s2", "d2"))
    outcome, changes = gate.write(
        reading_of(f"{words} {new}", "s3", "d3", ClauseReading(slot, new, correction=True))
    )
    current = [i for i in gate.active() if i.slot == slot and i.polarity is Polarity.POSITIVE]
    if frozen:  # a frozen single fact corrected: changed, frozen again (the correction's own rule)
        assert gate.get(first.memory_id).value == new
        assert gate.get(first.memory_id).state is State.FROZEN
    else:
        assert gate.get(first.memory_id).superseded_by == outcome.memory_id
    assert [i.value for i in current] == [new]
    assert not [a for a in changes.alerts if a.kind is AlertKind.VITAL_RETRACTION]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(VITAL), st.sampled_from(WORDS), st.booleans(), st.booleans())
@numbered_ids()
def test_a_vital_retraction_in_any_words_raises_its_alert(family, words, confirmed, as_change):
    slot, value = family
    gate = engine()
    held, _ = gate.write(ruled(slot, value, "s1", "d1"))
    if confirmed:
        gate.write(ruled(slot, value, "s2", "d2"))
    retraction = ClauseReading(slot, value, negative=True, correction=as_change)
    outcome, changes = gate.write(reading_of(f"{words} no more {value}", "s3", "d3", retraction))
    assert outcome.action == "conflict"
    # against a fact said once, the vital retraction's alert; against a frozen one, the frozen conflict's
    wanted = AlertKind.FROZEN_CONFLICT if gate.get(held.memory_id).is_frozen else AlertKind.VITAL_RETRACTION
    assert [a.kind for a in changes.alerts] == [wanted]
    assert gate.get(held.memory_id).is_active  # one utterance never withdraws a vital fact


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SINGLE_VALUED + [(s, v, v) for s, v in VITAL]), st.sampled_from(WORDS))
@numbered_ids()
def test_a_time_bound_reading_is_a_state_and_never_freezes(family, words):
    slot, value, _ = family
    gate = engine()
    for session in ("s1", "s2", "s3"):
        gate.write(
            reading_of(
                f"{words} {value} this week",
                session,
                f"d{session}",
                ClauseReading(slot, value, temporary=True),
            )
        )
    items = [i for i in gate.active() if i.slot == slot]
    assert items and all(i.kind is Kind.STATE and i.state is not State.FROZEN for i in items)
