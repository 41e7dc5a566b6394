"""Scenario tests of the gate engine: both gates, the state machine, audit and alerts."""

import pytest

from actors.core.gate.engine import GateEngine
from schemas.enums import AlertKind, Kind, Layer, Polarity, State
from schemas.errors import CapacityError, FrozenItemError, InvalidInput, InvalidTransition
from schemas.settings import Capacities, GatePolicy
from tests.unit.core.gate.helpers import Clock, cand, engine


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
    assert gate.get(first.memory_id).source_dialog_ids == ("d1", "d2")


def test_declared_core_attribute_freezes_after_two_sessions_across_languages():
    gate = engine()
    first, _ = gate.write(allergy("s1", "d1"))
    second, changes = gate.write(allergy("s2", "d7", text="我对花生过敏"))
    assert second.memory_id == first.memory_id
    item = gate.get(first.memory_id)
    assert (item.state, item.layer) == (State.FROZEN, Layer.CORE)
    assert [e.action for e in changes.events] == ["restate", "confirm", "promote", "freeze"]
    assert changes.events[-1].reason.startswith("declared_core_attribute")


def test_a_member_named_later_confirms_the_unnamed_one_and_takes_its_name():
    gate = engine()
    dog, _ = gate.write(cand("I have a golden retriever", "s1", slot="basic.pet", value="dog"))
    named, _ = gate.write(cand("My dog is called Max", "s2", "d2", slot="basic.pet", value="dog:max"))
    assert (named.memory_id, named.action) == (dog.memory_id, "confirmed")
    item = gate.get(dog.memory_id)
    assert (item.value, item.confirmed_sessions, item.state) == ("dog:max", ("s1", "s2"), State.FROZEN)
    # a second dog by another name is another member, not a restatement
    other, _ = gate.write(cand("My other dog is called Rex", "s3", "d3", slot="basic.pet", value="dog:rex"))
    assert other.memory_id != dog.memory_id


def test_a_more_precise_occupation_restates_the_plain_one_rather_than_contradicting_it():
    gate = engine()
    job, _ = gate.write(cand("I'm a teacher", "s1", slot="basic.occupation", value="teacher"))
    gate.write(cand("I teach at a school", "s2", "d2", slot="basic.occupation", value="teacher"))
    assert gate.get(job.memory_id).state is State.FROZEN
    precise, changes = gate.write(
        cand("I'm a high school teacher", "s3", "d3", slot="basic.occupation", value="high school teacher")
    )
    assert (precise.memory_id, precise.action) == (job.memory_id, "confirmed")
    assert not changes.alerts
    # another job with the same head is another job: a contradiction of the frozen one
    other, changes = gate.write(
        cand("I'm a software engineer", "s4", "d4", slot="basic.occupation", value="software engineer")
    )
    assert other.action == "conflict" and [a.kind for a in changes.alerts] == [AlertKind.FROZEN_CONFLICT]


def test_an_explicit_correction_applies_the_challenge_it_restates():
    gate = engine()
    name, _ = gate.write(cand("My name is Alex", "s1", slot="basic.name", value="alex"))
    gate.write(cand("My name is Alex", "s2", "d2", slot="basic.name", value="alex"))
    challenge, _ = gate.write(cand("Call me Sam", "s3", "d3", slot="basic.name", value="sam"))
    assert challenge.action == "conflict"
    fixed, _ = gate.write(
        cand("actually my name is Sam", "s4", "d4", slot="basic.name", value="sam", correction=True)
    )
    assert (fixed.memory_id, fixed.action) == (name.memory_id, "corrected")
    item = gate.get(name.memory_id)
    assert (item.value, item.state) == ("sam", State.FROZEN)
    assert gate.get(challenge.memory_id).state is State.SUPERSEDED  # one fact, not a pending twin


def test_a_pet_denied_in_general_contradicts_the_named_one():
    gate = engine()
    cat, _ = gate.write(cand("I have a cat named Luna", "s1", slot="basic.pet", value="cat:luna"))
    gate.write(cand("I have a cat named Luna", "s2", "d2", slot="basic.pet", value="cat:luna"))
    denied, changes = gate.write(
        cand(
            "I don't have a cat anymore",
            "s3",
            "d3",
            slot="basic.pet",
            value="cat",
            polarity=Polarity.NEGATIVE,
            correction=True,
        )
    )
    assert denied.action == "conflict" and [a.kind for a in changes.alerts] == [AlertKind.FROZEN_CONFLICT]
    assert gate.get(cat.memory_id).state is State.FROZEN


@pytest.mark.parametrize(
    ("first", "again"),
    [("sci-fi", "sci-fi movie"), ("科幻电影", "科幻片"), ("cooking italian food", "cooking italian dish")],
)
def test_a_taste_named_with_or_without_its_kind_is_one_taste(first, again):
    gate = engine()
    liked, _ = gate.write(cand(f"I love {first}", "s1", slot="preference.content", value=first))
    restated, _ = gate.write(
        cand(f"{again} is my favourite", "s2", "d2", slot="preference.content", value=again)
    )
    assert (restated.memory_id, restated.action) == (liked.memory_id, "confirmed")


def test_a_denial_of_nothing_known_is_a_plain_statement_not_a_correction():
    gate = engine()
    denial = dict(slot="basic.pet", value="dog", polarity=Polarity.NEGATIVE, correction=True)
    nothing, _ = gate.write(cand("I don't have a dog anymore", "s1", **denial))
    assert (nothing.action, nothing.state, nothing.layer) == ("created", State.PENDING, Layer.WORKING)
    # restated in a later session, after the user did mention a dog, it is confirmed and ends that dog
    dog, _ = gate.write(cand("I have a dog", "s2", "d2", slot="basic.pet", value="dog"))
    denied, _ = gate.write(cand("I don't have the dog any more", "s3", "d3", **denial))
    assert (denied.memory_id, denied.action) == (nothing.memory_id, "confirmed")
    assert gate.get(dog.memory_id).state is State.SUPERSEDED


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
    assert gate.get(outcome.memory_id).conflicts_with == (frozen_id,)


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
    assert gate.get(outcome.memory_id).complements == (frozen_id,)
    assert gate.get(frozen_id).complements == ()  # a frozen item does not change


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
    assert item.value == "suzhou" and item.source_dialog_ids == ("d9",)
    history = gate.get(item.supersedes[0])
    assert history.state is State.SUPERSEDED and history.value == "hangzhou"
    assert history.superseded_by == frozen_id and history.source_dialog_ids == ("d1", "d2")
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
    assert summaries[0].source_dialog_ids == tuple(f"d{n}" for n in range(5))
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


# --- issue 9: what a user sees of the gates -------------------------------------------------------------


def frozen_allergy(gate):
    gate.write(allergy("s1", "d1"))
    return gate.write(allergy("s2", "d2"))[0].memory_id


def test_an_explicit_retraction_of_a_frozen_fact_is_kept_pending_with_an_alert():
    gate = engine()
    frozen_id = frozen_allergy(gate)
    retraction = allergy(
        "s3", "d3", polarity=Polarity.NEGATIVE, text="actually peanuts are fine", correction=True
    )
    outcome, changes = gate.write(retraction)
    assert (outcome.action, outcome.state) == ("conflict", State.PENDING)
    assert gate.get(frozen_id).state is State.FROZEN and gate.get(frozen_id).polarity is Polarity.POSITIVE
    assert [a.kind for a in changes.alerts] == [AlertKind.FROZEN_CONFLICT]
    assert gate.get(outcome.memory_id).conflicts_with == (frozen_id,)


def test_one_challenge_restated_in_three_sessions_opens_one_review_and_stays_pending():
    gate = engine()
    frozen_id = frozen_allergy(gate)
    kinds = []
    for n in range(4):
        outcome, changes = gate.write(
            allergy(f"s{n + 3}", f"d{n + 3}", polarity=Polarity.NEGATIVE, text="peanuts are fine for me")
        )
        kinds += [a.kind for a in changes.alerts]
        assert (outcome.action, outcome.state) == ("conflict", State.PENDING)
    assert kinds == [AlertKind.FROZEN_CONFLICT, AlertKind.CONTRADICTION_REVIEW]
    assert gate.get(frozen_id).state is State.FROZEN
    assert len(gate.get(outcome.memory_id).confirmed_sessions) == 4


def test_a_value_replaced_by_correction_still_goes_through_unfreeze():
    gate = engine()
    gate.write(residence("Hangzhou", "s1", "d1"))
    frozen_id = gate.write(residence("Hangzhou", "s2", "d2"))[0].memory_id
    outcome, changes = gate.write(residence("Suzhou", "s3", "d3", correction=True))
    assert (outcome.memory_id, outcome.action) == (frozen_id, "corrected") and not changes.alerts


@pytest.mark.parametrize("frozen", [True, False])
def test_a_fact_corrected_three_times_asks_for_one_review(frozen):
    gate = engine()
    gate.write(residence("Hangzhou", "s1", "d1"))
    if frozen:
        gate.write(residence("Hangzhou", "s2", "d2"))
    alerts, ids = [], set()
    for n, city in enumerate(["Suzhou", "Ningbo", "Wuxi", "Xiamen"]):
        outcome, changes = gate.write(residence(city, f"s{n + 3}", f"d{n + 3}", correction=True))
        alerts += changes.alerts
        ids.add(outcome.memory_id)
    assert [a.kind for a in alerts] == [AlertKind.REPEATED_CORRECTION]
    current = gate.get(outcome.memory_id)
    assert current.value == "xiamen" and len(current.supersedes) == 4
    assert alerts[0].memory_id in ids and set(alerts[0].related_ids) <= set(current.supersedes)


def remembered(text, session, dialog, confidence=0.85):
    found = cand(text, session, dialog, forced=True)
    found.confidence = confidence
    return found


def test_a_remembered_fact_restated_in_three_sessions_freezes():
    gate = engine()
    first, _ = gate.write(remembered("I park on level three", "s1", "d1"))
    assert (first.state, first.layer) == (State.PENDING, Layer.LONGTERM)
    second, _ = gate.write(remembered("I park on level three", "s2", "d2"))
    assert (second.state, second.layer) == (State.CONFIRMED, Layer.LONGTERM)
    third, changes = gate.write(remembered("I park on level three", "s3", "d3"))
    assert (third.state, third.layer) == (State.FROZEN, Layer.CORE)
    assert gate.get(third.memory_id).confidence > 0.9
    assert changes.events[-1].reason.startswith("declared_restated")


def test_a_remembered_fact_needs_confidence_above_the_bar_to_freeze():
    gate = engine()
    for n in range(3):
        outcome, _ = gate.write(remembered("my locker is 27", f"s{n + 1}", f"d{n + 1}", confidence=0.8))
    assert outcome.state is State.CONFIRMED  # 0.8 + 2 × 0.05 = 0.9: not above 0.9


def test_a_full_core_names_its_lowest_value_item_and_evicts_nothing():
    gate = engine(core=2)
    frozen_allergy(gate)
    gate.write(residence("Hangzhou", "s1", "d3"))
    weak = gate.write(residence("Hangzhou", "s2", "d4"))[0].memory_id
    gate.get(weak).importance = 0.1  # worth less than the allergy
    for n in range(2):
        gate.write(remembered("I park on level three", f"s{n + 1}", f"d{n + 5}"))
    outcome, changes = gate.write(remembered("I park on level three", "s3", "d7"))
    assert (outcome.state, outcome.layer) == (State.CONFIRMED, Layer.LONGTERM)
    (alert,) = changes.alerts
    assert (alert.kind, alert.memory_id, alert.related_ids) == (
        AlertKind.CORE_FULL,
        outcome.memory_id,
        [weak],
    )
    assert gate.count(Layer.CORE) == 2 and gate.get(weak).is_frozen


def test_the_bounded_gate_refuses_to_archive_a_frozen_item():
    gate = engine()
    gate.write(allergy("s1", "d1"))
    outcome, _ = gate.write(allergy("s2", "d2"))
    frozen = gate.get(outcome.memory_id)
    assert frozen.state is State.FROZEN
    with pytest.raises(FrozenItemError):
        gate.bounded.archive(frozen, "user", "an eviction that must not happen")
    assert frozen.state is State.FROZEN and not gate.drain()


def test_a_tier_past_its_warning_share_raises_one_capacity_warning():
    """Working holds 10: the 8th item (80 % > 70 %) raises one ``capacity_warning`` naming the tier; later
    writes into the same tier raise no second one while it is open; a lower share warns earlier."""
    for share, first_warned in ((0.7, 8), (0.5, 6)):
        policy = GatePolicy(
            capacities=Capacities(working=10, longterm=100, core=10), capacity_warning_share=share
        )
        gate = GateEngine("t", "u", policy, clock=Clock())
        warned_at = []
        for n in range(1, 11):
            text = f"ordinary note number {n}: the {['shed', 'roof', 'gate', 'path', 'pond'][n % 5]} again"
            _, changes = gate.write(cand(text, session=f"s{n}", dialog=f"d{n}", score=0.3))
            warnings = [a for a in changes.alerts if a.kind is AlertKind.CAPACITY_WARNING]
            warned_at += [n for _ in warnings]
            assert all(a.related_ids == ["working"] for a in warnings)
        assert warned_at == [first_warned], (share, warned_at)
