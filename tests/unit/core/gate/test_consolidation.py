"""The consolidation pass and the capacity-respecting archive restore of the gate engine (plain Python):
what each step does, that every change is audited under the job's name, and that a second pass is a no-op."""

from actors.core.gate.passes import CONSOLIDATION_ACTOR
from schemas.enums import AlertKind, Kind, Layer, Polarity, State
from schemas.settings import Capacities, GatePolicy
from tests.unit.core.gate.helpers import Clock, cand, engine


def food(value, session, dialog, clock=None):
    return cand(
        f"I like {value}",
        session,
        dialog,
        slot="preference.food",
        value=value,
        kind=Kind.PREFERENCE,
        clock=clock,
    )


def written(gate, candidate):
    return gate.write(candidate)[0].memory_id


def allergy(value, session, dialog):
    return cand(f"I'm allergic to {value}", session, dialog, slot="basic.allergy", value=value)


def consolidate_twice(gate):
    counts, changes = gate.consolidate()
    again, nothing = gate.consolidate()
    assert not nothing and not any(again.as_dict().values()), "a second pass must change nothing"
    return counts, changes


def test_same_topic_working_items_merge_then_the_summary_is_confirmed_and_promoted():
    gate = engine()
    ids = [
        written(gate, food(v, s, d))
        for v, s, d in (("ramen", "s1", "d1"), ("sushi", "s2", "d2"), ("tacos", "s1", "d3"))
    ]
    counts, changes = consolidate_twice(gate)
    assert (counts.merged, counts.summaries, counts.confirmed, counts.promoted) == (3, 1, 1, 1)
    summary = next(i for i in gate.active() if i.merged_from)
    assert sorted(summary.merged_from) == sorted(ids)
    assert (summary.state, summary.layer) == (State.CONFIRMED, Layer.LONGTERM)
    assert summary.source_dialog_ids == ("d1", "d2", "d3")
    assert all(gate.get(i).state is State.SUPERSEDED for i in ids)
    assert {e.actor for e in changes.events} == {CONSOLIDATION_ACTOR}
    assert set(changes.upserted) == {*ids, summary.memory_id}


def test_promotions_catch_up_after_the_tenant_relaxes_its_rules():
    gate = engine(core=1)
    gate.write(allergy("peanut", "s1", "d1"))
    gate.write(allergy("peanut", "s2", "d2"))
    blocked = gate.get(written(gate, allergy("shellfish", "s1", "d3")))
    gate.write(allergy("shellfish", "s2", "d4"))
    assert blocked.state is State.CONFIRMED  # core full: it waits, with a core_full alert
    gate.policy = GatePolicy(capacities=Capacities(core=5))
    counts, changes = consolidate_twice(gate)
    assert counts.frozen == 1 and (blocked.state, blocked.layer) == (State.FROZEN, Layer.CORE)
    assert not changes.alerts


def test_pending_item_restated_enough_under_a_lower_threshold_is_confirmed():
    gate = engine()
    gate.policy = GatePolicy(confirmations_to_confirm=3)
    first = written(gate, food("ramen", "s1", "d1"))
    gate.write(food("ramen", "s2", "d2"))
    assert gate.get(first).state is State.PENDING
    gate.policy = GatePolicy(confirmations_to_confirm=2)
    counts, _ = consolidate_twice(gate)
    assert (counts.confirmed, counts.promoted) == (1, 1)
    assert (gate.get(first).state, gate.get(first).layer) == (State.CONFIRMED, Layer.LONGTERM)


def test_core_full_alert_is_raised_once_across_passes():
    gate = engine(core=1)
    for value, dialogs in (("peanut", ("d1", "d2")), ("shellfish", ("d3", "d4"))):
        for session, dialog in zip(("s1", "s2"), dialogs, strict=True):
            _, changes = gate.write(allergy(value, session, dialog))
    assert [a.kind for a in changes.alerts] == [AlertKind.CORE_FULL]
    counts, _ = consolidate_twice(gate)
    assert counts.alerts == 0


def test_stale_pending_items_are_archived_but_forced_and_high_value_ones_stay():
    clock = Clock()
    gate = engine(clock=clock)
    low = written(gate, cand("saw a red car", "s1", "d1", score=0.3, kind=Kind.EVENT, clock=clock))
    mood = written(
        gate,
        cand(
            "so tired today",
            "s1",
            "d2",
            score=0.9,
            kind=Kind.STATE,
            slot="state.mood",
            value="tired",
            clock=clock,
        ),
    )
    high = written(gate, cand("went to Kyoto in May", "s1", "d3", score=0.8, kind=Kind.EVENT, clock=clock))
    clock.advance(days=29)
    assert gate.consolidate()[0].cleared == 0
    clock.advance(days=2)
    counts, changes = consolidate_twice(gate)
    assert counts.cleared == 2 and counts.evicted == 0
    assert gate.get(low).state is State.ARCHIVED and gate.get(mood).state is State.ARCHIVED
    assert gate.get(high).state is State.PENDING
    archived = [e for e in changes.events if e.action == "archive"]
    assert all("stale pending" in e.reason and e.actor == CONSOLIDATION_ACTOR for e in archived)


def test_tiers_over_a_lowered_capacity_lose_their_lowest_value_items_never_frozen_ones():
    clock = Clock()
    gate = engine(clock=clock)
    for n in range(6):
        gate.write(cand(f"fact number {n}", "s1", f"d{n}", forced=True, clock=clock))
        clock.advance(days=3)
    assert gate.count(Layer.LONGTERM) == 6
    oldest = sorted(gate.active(Layer.LONGTERM), key=lambda i: i.last_accessed_at)[:2]
    gate.policy = GatePolicy(capacities=Capacities(longterm=4))
    counts, changes = consolidate_twice(gate)
    assert counts.evicted == 2 and gate.count(Layer.LONGTERM) == 4
    assert {i.state for i in oldest} == {State.ARCHIVED}
    assert [e.action for e in changes.events] == ["archive", "archive"]


def test_repeatedly_contradicted_items_expire_when_the_threshold_drops():
    gate = engine()
    old = written(gate, cand("I live in Hangzhou", "s1", "d1", slot="basic.residence", value="hangzhou"))
    gate.write(cand("I live in Suzhou", "s2", "d2", slot="basic.residence", value="suzhou"))
    assert gate.get(old).contradiction_count == 1
    gate.policy = GatePolicy(contradictions_to_expire=1)
    counts, _ = consolidate_twice(gate)
    assert counts.expired == 1 and gate.get(old).state is State.EXPIRED


def test_decay_is_rewritten_only_when_it_moved_noticeably():
    clock = Clock()
    gate = engine(clock=clock)
    gate.write(
        cand(
            "I like green tea",
            "s1",
            "d1",
            slot="preference.drink",
            value="green tea",
            kind=Kind.PREFERENCE,
            clock=clock,
        )
    )
    clock.advance(seconds=3600)
    assert gate.consolidate()[0].rescored == 0
    clock.advance(days=10)
    counts, changes = consolidate_twice(gate)
    assert counts.rescored == 1 and not changes.events  # a score refresh is not a state change


def test_restore_brings_archived_items_back_within_room_and_retention():
    clock = Clock()
    gate = engine(longterm=3, clock=clock)
    items = [written(gate, cand(f"fact {n}", "s1", f"d{n}", forced=True, clock=clock)) for n in range(4)]
    archived = [gate.get(i) for i in items if gate.get(i).state is State.ARCHIVED]
    assert len(archived) == 1 and gate.count(Layer.LONGTERM) == 3
    _, restored, skipped = gate.restore_archived(archived, actor="job:restore", reason="relevant again")
    assert (restored, skipped) == ([], [archived[0].memory_id])  # no room: nothing is displaced
    gate.policy = GatePolicy(capacities=Capacities(longterm=5))
    clock.advance(days=400)
    _, restored, skipped = gate.restore_archived(archived, actor="job:restore", reason="relevant again")
    assert restored == [] and skipped == [archived[0].memory_id]  # beyond the retention window
    gate.policy = GatePolicy(capacities=Capacities(longterm=5), archive_retention_days=500)
    changes, restored, _ = gate.restore_archived(archived, actor="job:restore", reason="relevant again")
    assert restored == [archived[0].memory_id] and archived[0].layer is Layer.LONGTERM
    assert [(e.action, e.actor) for e in changes.events] == [("restore", "job:restore")]


# ---------------------------------------------------------------------------------- the jobs' figures


def test_slot_conclusions_drift_and_digests_keep_no_values():
    from jobs.profiles import digests, drift, slot_conclusions

    gate = engine()
    for session in ("s1", "s2"):
        gate.write(food("ramen", session, f"d-{session}"))
        gate.write(
            cand("feeling low", session, f"m-{session}", slot="state.mood", value="low", kind=Kind.STATE)
        )
    assert slot_conclusions(gate.active()) == {"preference.food": ["ramen"]}  # temporary states excluded
    before = digests(slot_conclusions(gate.active()))
    assert "ramen" not in str(before)
    assert drift(None, before) is None and drift({}, {}) is None and drift(before, before) == 0.0
    gate.write(food("sushi", "s1", "d3"))
    gate.write(food("sushi", "s2", "d4"))
    gate.write(cand("I'm allergic to peanuts", "s1", "d5", slot="basic.allergy", value="peanut"))
    gate.write(cand("I'm allergic to peanuts", "s2", "d6", slot="basic.allergy", value="peanut"))
    after = digests(slot_conclusions(gate.active()))
    assert drift(before, after) == 1.0  # food changed, allergy is new: both of the two slots moved


def test_slot_conclusions_of_the_drift_metric_are_those_of_the_profile_the_api_returns():
    from datetime import UTC, datetime

    from actors.core.profile import ProfileBuilder
    from jobs.profiles import slot_conclusions

    gate = engine()
    for session in ("s1", "s2"):
        gate.write(food("ramen", session, f"d-{session}"))
    gate.write(food("durian", "s1", "d9"))  # pending, yet the profile lists it
    gate.write(cand("I live in Hangzhou", "s1", "h1", slot="basic.residence", value="hangzhou"))
    gate.write(cand("I live in Suzhou", "s2", "h2", slot="basic.residence", value="suzhou"))
    profile = ProfileBuilder(GatePolicy(), datetime.now(UTC)).build("u", gate.active(), [])
    shown = {
        s.slot: sorted(
            {c.value if c.polarity is Polarity.POSITIVE else f"not {c.value}" for c in s.conclusions}
        )
        for s in profile.slots
    }
    assert slot_conclusions(gate.active()) == shown
    assert shown["preference.food"] == ["durian", "ramen"] and len(shown["basic.residence"]) == 1


def test_eviction_outcomes_count_an_eviction_undone_by_a_later_restore_as_a_miss():
    from datetime import UTC, datetime

    from jobs.profiles import eviction_outcomes

    at = datetime(2026, 1, 1, tzinfo=UTC)
    moves = [
        ("a", "archive", at),
        ("b", "archive", at),
        ("b", "restore", at),
        ("c", "restore", at),
        ("b", "archive", at),
    ]
    outcomes = eviction_outcomes(moves)
    assert (outcomes.evicted, outcomes.restored) == (3, 1)  # c's restore undid no eviction in the window
    assert outcomes.hit_rate == 2 / 3
    assert eviction_outcomes([]).hit_rate is None


def test_an_eviction_recalled_from_the_archive_or_restated_is_a_miss():
    """Four evictions: one recalled from the archive after it (heat newer than the eviction), one restated
    by a newer item with the same slot and value, one restated in the same words, one never wanted back."""
    from datetime import UTC, datetime, timedelta

    from actors.core.memory import MemoryItem
    from jobs.profiles import eviction_outcomes

    at = datetime(2026, 1, 1, tzinfo=UTC)
    later = at + timedelta(days=3)

    def archived(memory_id, content, slot=None, value=None, accessed=at - timedelta(days=1)):
        return MemoryItem(
            tenant_id="t",
            user_id="u",
            memory_id=memory_id,
            content=content,
            kind=Kind.FACT,
            slot=slot,
            value=value,
            layer=Layer.ARCHIVE,
            state=State.ARCHIVED,
            last_accessed_at=accessed,
            created_at=at,
        )

    evicted = [
        archived("recalled", "the shed key is under the blue pot", accessed=later),
        archived("restated", "I love hiking", slot="preference.sport", value="hiking"),
        archived("same words", "the garden gate sticks in winter"),
        archived("forgotten", "we had pizza on a tuesday once"),
    ]
    active = [
        MemoryItem(
            tenant_id="t",
            user_id="u",
            content="我周末喜欢爬山",
            kind=Kind.PREFERENCE,
            slot="preference.sport",
            value="hiking",
            created_at=later,
        ),
        MemoryItem(
            tenant_id="t",
            user_id="u",
            content="the garden gate sticks in winter",
            kind=Kind.FACT,
            created_at=later,
        ),
        MemoryItem(
            tenant_id="t",
            user_id="u",
            content="we had pizza on a tuesday once",
            kind=Kind.FACT,
            created_at=at - timedelta(days=5),
        ),  # said before the eviction: no restatement
    ]
    outcomes = eviction_outcomes([(i.memory_id, "archive", at) for i in evicted], evicted, active)
    assert (outcomes.evicted, outcomes.recalled, outcomes.restated, outcomes.missed) == (4, 1, 2, 3)
    assert outcomes.hit_rate == 1 / 4


def test_cohort_claims_count_only_concluded_tastes_never_personal_facts():
    from jobs.profiles import cohort_claims

    gate = engine()
    for session in ("s1", "s2"):
        gate.write(food("ramen", session, f"d-{session}"))
        gate.write(
            cand("I live in Hangzhou", session, f"h-{session}", slot="basic.residence", value="hangzhou")
        )
    gate.write(food("durian", "s1", "d9"))  # pending: not a conclusion yet
    assert cohort_claims(gate.active()) == {("preference.food", "positive", "ramen")}


def test_a_restated_challenge_to_a_frozen_fact_stays_pending_through_consolidation():
    gate = engine()
    gate.write(cand("I'm allergic to peanuts", "s1", "d1", slot="basic.allergy", value="peanut"))
    gate.write(cand("I'm allergic to peanuts", "s2", "d2", slot="basic.allergy", value="peanut"))
    for n in (3, 4):
        challenge, _ = gate.write(
            cand(
                "peanuts are fine",
                f"s{n}",
                f"d{n}",
                slot="basic.allergy",
                value="peanut",
                polarity=Polarity.NEGATIVE,
            )
        )
    gate.consolidate()
    assert gate.get(challenge.memory_id).state is State.PENDING
