"""Scenario tests of the gate engine: both gates, the state machine, audit and alerts."""

import pytest

from actors.errors import CapacityError, InvalidInput, InvalidTransition
from schemas.enums import AlertKind, Kind, Layer, Polarity, State
from tests.unit.gate_helpers import Clock, cand, engine


def allergy(session, dialog, polarity=Polarity.POSITIVE, text="I'm allergic to peanuts", **kw):
    return cand(text, session, dialog, slot="basic.allergy", value="peanut", polarity=polarity, **kw)


def residence(city, session, dialog, **kw):
    return cand(f"I live in {city}", session, dialog, slot="basic.residence", value=city.lower(), **kw)


def test_new_memory_enters_working_as_pending():
    gate = engine()
    outcome, changes = gate.write(allergy("s1", "d1"))
    assert (outcome.action, outcome.state, outcome.layer) == ("created", State.PENDING, Layer.WORKING)
    assert [e.action for e in changes.events] == ["create"]


def test_restatement_in_same_session_does_not_confirm():
    gate = engine()
    first, _ = gate.write(allergy("s1", "d1"))
    again, _ = gate.write(allergy("s1", "d2", text="I am allergic to peanuts!"))
    assert again.memory_id == first.memory_id
    assert gate.get(first.memory_id).state is State.PENDING
    assert gate.get(first.memory_id).source_dialog_ids == ["d1", "d2"]


def test_declared_core_attribute_freezes_after_two_sessions_across_languages():
    gate = engine()
    first, _ = gate.write(allergy("s1", "d1"))
    second, changes = gate.write(allergy("s2", "d7", text="我对花生过敏"))
    assert second.memory_id == first.memory_id
    item = gate.get(first.memory_id)
    assert (item.state, item.layer) == (State.FROZEN, Layer.CORE)
    assert [e.action for e in changes.events] == ["restate", "confirm", "promote", "freeze"]
    assert changes.events[-1].reason.startswith("declared_core_attribute")


def test_frozen_item_rejects_contradiction_and_raises_alert():
    gate = engine()
    gate.write(allergy("s1", "d1"))
    frozen_id = gate.write(allergy("s2", "d2"))[0].memory_id
    outcome, changes = gate.write(
        allergy("s3", "d3", polarity=Polarity.NEGATIVE, text="I think I don't mind peanuts")
    )
    assert outcome.action == "conflict" and outcome.state is State.PENDING
    frozen = gate.get(frozen_id)
    assert frozen.state is State.FROZEN and frozen.content == "I'm allergic to peanuts"
    assert frozen_id not in changes.upserted
    assert [a.kind for a in changes.alerts] == [AlertKind.FROZEN_CONFLICT]
    assert gate.get(outcome.memory_id).conflicts_with == [frozen_id]


def test_repeated_frozen_contradictions_open_one_review():
    gate = engine()
    gate.write(allergy("s1", "d1"))
    gate.write(allergy("s2", "d2"))
    kinds = []
    for n in range(4):
        text = f"peanuts are fine for me, variant {n}"
        _, changes = gate.write(allergy(f"s{3 + n}", f"d{3 + n}", polarity=Polarity.NEGATIVE, text=text))
        kinds += [a.kind for a in changes.alerts]
    # the restatements collapse onto one challenger, so only the first is a new conflict
    assert kinds.count(AlertKind.FROZEN_CONFLICT) == 1


def test_complementing_a_frozen_item_coexists_and_links():
    gate = engine()
    gate.write(allergy("s1", "d1"))
    frozen_id = gate.write(allergy("s2", "d2"))[0].memory_id
    outcome, changes = gate.write(
        cand("I'm also allergic to tree nuts", "s3", "d3", slot="basic.allergy", value="tree nut")
    )
    assert outcome.action == "created" and not changes.alerts
    assert gate.get(outcome.memory_id).complements == [frozen_id]
    assert gate.get(frozen_id).complements == []  # a frozen item does not change


def test_correction_unfreezes_supersedes_and_refreezes():
    gate = engine()
    gate.write(residence("Hangzhou", "s1", "d1"))
    frozen_id = gate.write(residence("Hangzhou", "s2", "d2"))[0].memory_id
    outcome, changes = gate.write(
        cand(
            "actually I moved to Suzhou", "s3", "d9", slot="basic.residence", value="suzhou", correction=True
        )
    )
    assert (outcome.memory_id, outcome.action, outcome.state) == (frozen_id, "corrected", State.FROZEN)
    item = gate.get(frozen_id)
    assert item.value == "suzhou" and item.source_dialog_ids == ["d9"]
    history = gate.get(item.supersedes[0])
    assert history.state is State.SUPERSEDED and history.value == "hangzhou"
    assert history.superseded_by == frozen_id and history.source_dialog_ids == ["d1", "d2"]
    actions = [e.action for e in changes.events if e.memory_id == frozen_id]
    assert actions == ["unfreeze", "modify", "freeze"]
    assert changes.events[0].source_dialog_id == "d9"


def test_ordinary_contradiction_of_unfrozen_fact_lowers_confidence_not_value():
    gate = engine()
    old_id = gate.write(residence("Hangzhou", "s1", "d1"))[0].memory_id
    before = gate.get(old_id).confidence
    new, _ = gate.write(residence("Suzhou", "s2", "d2"))
    old = gate.get(old_id)
    assert old.state is State.PENDING and old.confidence < before
    assert new.memory_id in old.conflicts_with


def test_confirmed_new_value_supersedes_old():
    gate = engine()
    old_id = gate.write(residence("Hangzhou", "s1", "d1"))[0].memory_id
    gate.write(residence("Suzhou", "s2", "d2"))
    new, _ = gate.write(residence("Suzhou", "s3", "d3"))
    assert gate.get(old_id).state is State.SUPERSEDED
    assert gate.get(old_id).superseded_by == new.memory_id
    assert new.state is State.FROZEN


def test_repeatedly_contradicted_item_expires():
    gate = engine()
    old = gate.write(
        cand("I prefer tea", "s1", "d1", slot="style.tone", value="formal", kind=Kind.PREFERENCE)
    )
    for n in range(3):
        gate.write(
            cand(
                f"be casual {n}",
                "s1",
                f"d{n + 2}",
                slot="style.tone",
                value=f"casual{n}",
                kind=Kind.PREFERENCE,
            )
        )
    assert gate.get(old[0].memory_id).state is State.EXPIRED


def test_temporary_state_stays_in_working_and_never_freezes():
    gate = engine()
    mood = dict(slot="state.mood", value="annoyed", kind=Kind.STATE, score=0.2)
    gate.write(cand("cooking is so annoying today", "s1", "d1", **mood))
    outcome, _ = gate.write(cand("cooking is so annoying today", "s2", "d2", **mood))
    item = gate.get(outcome.memory_id)
    assert item.layer is Layer.WORKING and item.state is State.CONFIRMED
    with pytest.raises(InvalidTransition):
        gate.freeze(item.memory_id, reason="try", actor="operator")


def test_new_mood_supersedes_old_mood():
    gate = engine()
    old, _ = gate.write(cand("so tired", "s1", "d1", slot="state.mood", value="tired", kind=Kind.STATE))
    gate.write(cand("feeling great", "s1", "d2", slot="state.mood", value="happy", kind=Kind.STATE))
    assert gate.get(old.memory_id).state is State.SUPERSEDED


def test_explicit_remember_goes_beyond_working():
    gate = engine()
    outcome, _ = gate.write(cand("remember my locker is 42", forced=True, score=0.3))
    assert outcome.layer is Layer.LONGTERM and gate.get(outcome.memory_id).importance >= 0.9


def test_working_overflow_merges_same_slot_keeping_dialog_ids():
    clock = Clock()
    gate = engine(working=5, clock=clock)
    ids = []
    for n in range(5):
        clock.advance(seconds=1)
        food = cand(
            f"had spicy dish number {n}",
            f"s{n}",
            f"d{n}",
            slot="preference.food",
            value=f"noodle{n}",
            kind=Kind.PREFERENCE,
            clock=clock,
        )
        ids.append(gate.write(food)[0].memory_id)
    clock.advance(seconds=1)
    gate.write(cand("I have a meeting", "s9", "d99", kind=Kind.EVENT, clock=clock))
    summaries = [i for i in gate.active() if i.merged_from]
    assert len(summaries) == 1
    assert summaries[0].source_dialog_ids == [f"d{n}" for n in range(5)]
    assert all(gate.get(i).state is State.SUPERSEDED for i in ids)
    assert gate.count(Layer.WORKING) <= 5


def test_working_overflow_evicts_lowest_value_to_archive():
    clock = Clock()
    gate = engine(working=3, clock=clock)
    low = gate.write(
        cand("random chatter about clouds", "s1", "d1", kind=Kind.EVENT, score=0.1, clock=clock)
    )[0]
    low_item = gate.get(low.memory_id)
    low_item.importance = 0.05
    for n in range(3):
        clock.advance(seconds=1)
        gate.write(cand(f"important event {n}", "s1", f"d{n + 2}", kind=Kind.EVENT, score=0.5, clock=clock))
    assert gate.get(low.memory_id).state is State.ARCHIVED
    assert gate.count(Layer.WORKING) == 3


def test_core_full_raises_alert_and_never_evicts():
    gate = engine(core=1)
    gate.write(allergy("s1", "d1"))
    gate.write(allergy("s2", "d2"))
    gate.write(residence("Hangzhou", "s1", "d3"))
    outcome, changes = gate.write(residence("Hangzhou", "s2", "d4"))
    assert outcome.state is State.CONFIRMED
    assert [a.kind for a in changes.alerts] == [AlertKind.CORE_FULL]
    assert gate.count(Layer.CORE) == 1
    with pytest.raises(CapacityError):
        gate.freeze(outcome.memory_id, reason="operator wants it", actor="operator")
    assert [a.kind for a in gate.drain().alerts] == [AlertKind.CORE_FULL]


def test_unfreeze_requires_reason_and_dialog():
    gate = engine()
    gate.write(allergy("s1", "d1"))
    frozen_id = gate.write(allergy("s2", "d2"))[0].memory_id
    with pytest.raises(InvalidInput):
        gate.unfreeze(frozen_id, reason=" ", dialog_id="d5", actor="user")
    changes = gate.unfreeze(frozen_id, reason="user asked", dialog_id="d5", actor="user")
    assert gate.get(frozen_id).state is State.UNFROZEN
    assert changes.events[0].source_dialog_id == "d5"
    gate.freeze(frozen_id, reason="checked", actor="operator")
    assert gate.get(frozen_id).state is State.FROZEN


def test_decay_skips_frozen_and_is_idempotent():
    clock = Clock()
    gate = engine(clock=clock)
    gate.write(allergy("s1", "d1"))
    frozen_id = gate.write(allergy("s2", "d2"))[0].memory_id
    other = gate.write(cand("I went hiking", "s1", "d3", kind=Kind.EVENT, clock=clock))[0].memory_id
    clock.advance(days=14)
    first = gate.decay()
    assert other in first.upserted and frozen_id not in first.upserted
    assert gate.get(other).decay_score == pytest.approx(0.5 * 0.9**14, rel=1e-4)
    assert not gate.decay()


def test_archived_item_restated_is_restored():
    clock = Clock()
    gate = engine(working=2, clock=clock)
    first = gate.write(cand("I collect stamps", "s1", "d1", kind=Kind.EVENT, score=0.1, clock=clock))[0]
    gate.get(first.memory_id).importance = 0.01
    for n in range(2):
        clock.advance(seconds=1)
        gate.write(cand(f"note {n}", "s1", f"d{n + 2}", kind=Kind.EVENT, clock=clock))
    assert gate.get(first.memory_id).state is State.ARCHIVED
    outcome, changes = gate.write(cand("I collect stamps", "s2", "d9", kind=Kind.EVENT))
    assert outcome.memory_id == first.memory_id
    assert gate.get(first.memory_id).layer is Layer.LONGTERM
    assert "restore" in [e.action for e in changes.events]
