"""A negative memory weighs 1.2 in recall and eviction for 14 days, until the user engages positively with
the rejected thing 3 times (docs/design.md#the-bounded-gate): a positive statement about the same slot and
value counts one engagement, restatements included."""

from actors.core.gate.valuation import eviction_value, negative_weight
from schemas.enums import Kind, Polarity, State
from schemas.settings import GatePolicy
from tests.unit.core.gate.helpers import Clock, cand, engine


def horror(session, dialog, polarity, clock, text=None):
    text = text or (
        "don't recommend horror films" if polarity is Polarity.NEGATIVE else "I loved that horror film"
    )
    return cand(
        text,
        session,
        dialog,
        slot="preference.content",
        value="horror films",
        kind=Kind.PREFERENCE,
        polarity=polarity,
        clock=clock,
    )


def test_a_frozen_aversion_loses_its_priority_after_three_positive_engagements_and_stays_frozen():
    clock = Clock()
    gate = engine(clock=clock)
    for n in range(1, 4):
        outcome, _ = gate.write(horror(f"s{n}", f"d{n}", Polarity.NEGATIVE, clock))
    aversion = gate.get(outcome.memory_id)
    assert aversion.state is State.FROZEN
    policy = gate.policy
    assert negative_weight(aversion, policy, clock()) == policy.fusion.negative_weight == 1.2
    weighted = eviction_value(aversion, policy, clock(), duplicated=False)
    for n in range(4, 7):
        clock.advance(days=1)
        engaged, changes = gate.write(horror(f"s{n}", f"d{n}", Polarity.POSITIVE, clock))
        assert engaged.action == "conflict"  # the frozen aversion itself is not changed by a write
        assert aversion.positive_engagements == n - 3
        assert aversion.memory_id in changes.upserted
        if n < 6:
            assert negative_weight(aversion, policy, clock()) == 1.2
    assert aversion.state is State.FROZEN
    assert negative_weight(aversion, policy, clock()) == 1.0
    assert abs(eviction_value(aversion, policy, clock(), duplicated=False) * 1.2 - weighted) < 1e-9
    demotions = [e for e in changes.events if e.action == "demote"]
    assert [e.memory_id for e in demotions] == [aversion.memory_id]
    assert demotions[0].source_dialog_id == "d6"


def test_a_pending_aversion_is_demoted_while_it_is_still_active():
    clock = Clock()
    gate = engine(clock=clock)
    gate.policy = GatePolicy(contradictions_to_expire=5)
    outcome, _ = gate.write(horror("s1", "d1", Polarity.NEGATIVE, clock))
    aversion = gate.get(outcome.memory_id)
    for n in range(3):
        gate.write(horror("s2", f"d{n + 2}", Polarity.POSITIVE, clock))
    assert aversion.is_active and aversion.contradiction_count == 3
    assert aversion.positive_engagements == 3
    assert negative_weight(aversion, gate.policy, clock()) == 1.0


def test_only_positive_statements_of_the_same_slot_and_value_count():
    clock = Clock()
    gate = engine(clock=clock)
    outcome, _ = gate.write(horror("s1", "d1", Polarity.NEGATIVE, clock))
    aversion = gate.get(outcome.memory_id)
    gate.write(horror("s2", "d2", Polarity.NEGATIVE, clock, text="horror films are not for me"))
    other = cand("I like jazz", "s2", "d3", slot="preference.content", value="jazz", kind=Kind.PREFERENCE)
    gate.write(other)
    gate.write(cand("I like horror films", "s2", "d4", slot="preference.music", value="horror films"))
    assert aversion.positive_engagements == 0
    gate.write(horror("s3", "d5", Polarity.POSITIVE, clock))
    assert aversion.positive_engagements == 1
    assert aversion.contradiction_count == 1  # the contradiction rules still apply to it
