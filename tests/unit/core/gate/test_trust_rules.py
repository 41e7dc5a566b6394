"""The state machine's trust rules, one scenario each (docs/quality.md#7-promises-that-hold-in-any-words);
``test_trust_properties.py`` holds them over random sequences."""

import pytest

from actors.core.gate.valuation import negative_weight
from schemas.enums import AlertKind, Kind, Layer, Polarity, State
from schemas.errors import CapacityError
from tests.unit.core.gate.helpers import Clock, cand, engine


def fact(slot, value, session, dialog, polarity=Polarity.POSITIVE, **kw):
    text = f"{slot} {'not ' if polarity is Polarity.NEGATIVE else ''}{value} {dialog}"
    return cand(text, session, dialog, slot=slot, value=value, polarity=polarity, **kw)


def test_a_correction_with_nothing_to_replace_is_an_ordinary_pending_statement():
    gate = engine()
    for slot, value in (("basic.residence", "rotterdam"), ("basic.allergy", "kiwi")):
        outcome, changes = gate.write(fact(slot, value, "s1", f"d-{value}", correction=True))
        assert (outcome.action, outcome.state, outcome.layer) == ("created", State.PENDING, Layer.WORKING)
        assert not any(e.action == "freeze" for e in changes.events)


def test_a_correction_replacing_a_pending_value_supersedes_it_and_stays_pending():
    gate = engine()
    old, _ = gate.write(fact("basic.residence", "berlin", "s1", "d1"))
    new, _ = gate.write(fact("basic.residence", "rotterdam", "s1", "d2", correction=True))
    assert (new.action, new.state) == ("corrected", State.PENDING)
    assert gate.get(old.memory_id).superseded_by == new.memory_id


def test_a_frozen_fact_corrected_stays_frozen_with_the_new_value():
    gate = engine()
    gate.write(fact("basic.residence", "berlin", "s1", "d1"))
    frozen, _ = gate.write(fact("basic.residence", "berlin", "s2", "d2"))
    moved, _ = gate.write(fact("basic.residence", "rotterdam", "s3", "d3", correction=True))
    assert (moved.memory_id, moved.state) == (frozen.memory_id, State.FROZEN)
    assert gate.get(frozen.memory_id).value == "rotterdam"


def test_a_vital_retraction_waits_for_another_session_then_applies():
    gate = engine(core=1)  # core full after the peanut allergy: the shrimp allergy stays confirmed, unfrozen
    gate.write(fact("basic.allergy", "peanut", "s1", "d1"))
    gate.write(fact("basic.allergy", "peanut", "s2", "d2"))
    gate.write(fact("basic.allergy", "shrimp", "s1", "d3"))
    shrimp, _ = gate.write(fact("basic.allergy", "shrimp", "s2", "d4"))
    assert gate.get(shrimp.memory_id).state is State.CONFIRMED
    denial, changes = gate.write(
        fact("basic.allergy", "shrimp", "s3", "d5", Polarity.NEGATIVE, correction=True)
    )
    assert (denial.action, denial.state) == ("conflict", State.PENDING)
    assert [a.kind for a in changes.alerts] == [AlertKind.VITAL_RETRACTION]
    # said again in the same session: still waiting
    gate.write(fact("basic.allergy", "shrimp", "s3", "d6", Polarity.NEGATIVE, correction=True))
    gate.write(fact("basic.allergy", "shrimp", "s3", "d7", Polarity.NEGATIVE, correction=True))
    assert gate.get(shrimp.memory_id).state is State.CONFIRMED
    # confirmed in another session: the allergy is superseded, the withdrawal is confirmed and never frozen
    again, _ = gate.write(fact("basic.allergy", "shrimp", "s4", "d8", Polarity.NEGATIVE, correction=True))
    assert gate.get(shrimp.memory_id).superseded_by == again.memory_id
    assert gate.get(again.memory_id).state is State.CONFIRMED


def test_a_frozen_vital_fact_is_changed_only_by_confirming_the_challenge_through_the_api():
    gate = engine()
    gate.write(fact("basic.allergy", "shrimp", "s1", "d1"))
    allergy, _ = gate.write(fact("basic.allergy", "shrimp", "s2", "d2"))
    for n in range(3, 6):  # corrections in three more sessions do not apply it
        denial, changes = gate.write(
            fact("basic.allergy", "shrimp", f"s{n}", f"d{n}", Polarity.NEGATIVE, correction=True)
        )
        assert denial.action == "conflict"
    assert gate.get(allergy.memory_id).state is State.FROZEN
    changes = gate.confirm(denial.memory_id, actor="user", reason="yes, I can eat shrimp now")
    assert gate.get(allergy.memory_id).state is State.SUPERSEDED
    withdrawn = gate.get(denial.memory_id)
    assert withdrawn.state is State.CONFIRMED and not withdrawn.conflicts_with
    assert [e.action for e in changes.events if e.memory_id == allergy.memory_id] == ["unfreeze", "supersede"]


def test_a_withdrawn_fact_is_no_caution_but_a_rejection_is():
    gate = engine()
    withdrawn, _ = gate.write(fact("basic.allergy", "shrimp", "s1", "d1", Polarity.NEGATIVE))
    rejection, _ = gate.write(
        cand(
            "stop recommending horror films",
            "s1",
            "d2",
            slot="preference.content",
            value="horror film",
            polarity=Polarity.NEGATIVE,
            kind=Kind.PREFERENCE,
        )
    )
    now = gate.clock()
    assert negative_weight(gate.get(withdrawn.memory_id), gate.policy, now) == 1.0
    assert (
        negative_weight(gate.get(rejection.memory_id), gate.policy, now) == gate.policy.fusion.negative_weight
    )


def frozen_residence(clock):
    gate = engine(clock=clock)
    gate.write(fact("basic.residence", "berlin", "s1", "d1"))
    item, _ = gate.write(fact("basic.residence", "berlin", "s2", "d2"))
    gate.unfreeze(item.memory_id, reason="check", dialog_id="d-un", actor="user")
    assert gate.get(item.memory_id).state is State.UNFROZEN
    return gate, item.memory_id


def test_a_bare_unfreeze_is_frozen_again_unchanged_when_its_window_closes():
    clock = Clock()
    gate, memory_id = frozen_residence(clock)
    clock.advance(seconds=gate.policy.unfreeze_window_seconds - 1)
    assert not gate.refreeze_due().events
    clock.advance(seconds=1)
    # two ordinary statements after the window: conflicts with the re-frozen fact, nothing replaced
    for n, session in enumerate(("s3", "s4")):
        outcome, _ = gate.write(fact("basic.residence", "paris", session, f"d{n + 3}"))
        assert outcome.action == "conflict"
    item = gate.get(memory_id)
    assert (item.state, item.value) == (State.FROZEN, "berlin")


def test_a_new_value_within_the_unfreeze_window_is_the_change_and_is_frozen():
    clock = Clock()
    gate, memory_id = frozen_residence(clock)
    clock.advance(seconds=60)
    outcome, _ = gate.write(fact("basic.residence", "paris", "s3", "d3"))
    item = gate.get(memory_id)
    assert (outcome.memory_id, outcome.action) == (memory_id, "corrected")
    assert (item.state, item.value) == (State.FROZEN, "paris")


def test_an_unfrozen_item_keeps_its_frozen_place_until_its_window_closes():
    clock = Clock()
    gate = engine(working=3, longterm=3, core=3, clock=clock)  # room for one frozen item
    assert gate.policy.capacities.frozen_limit == 1
    gate.write(fact("basic.residence", "berlin", "s1", "d1"))
    residence, _ = gate.write(fact("basic.residence", "berlin", "s2", "d2"))
    gate.unfreeze(residence.memory_id, reason="moving", dialog_id="d-un", actor="user")
    # a fact that qualifies for freezing meanwhile does not take the unfrozen item's place
    gate.write(fact("basic.allergy", "peanut", "s1", "d3"))
    allergy, changes = gate.write(fact("basic.allergy", "peanut", "s2", "d4"))
    assert gate.get(allergy.memory_id).state is State.CONFIRMED
    assert [a.kind for a in changes.alerts] == [AlertKind.CORE_FULL]
    with pytest.raises(CapacityError):
        gate.freeze(allergy.memory_id, reason="operator", actor="operator")
    # the new value within the window freezes the item again, within the limit
    moved, _ = gate.write(fact("basic.residence", "paris", "s3", "d5"))
    assert (moved.memory_id, gate.get(residence.memory_id).state) == (residence.memory_id, State.FROZEN)
    assert gate.frozen_count() == 1
