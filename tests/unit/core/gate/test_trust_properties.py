"""Property tests of the state machine's trust promises (docs/quality.md#7-promises-that-hold-in-any-words)
over random sequences of statements, corrections, denials, API confirmations and unfreezes, in any order
and across sessions:

* nothing becomes frozen on fewer than ``confirmations_to_confirm`` distinct sessions, except an item that
  was frozen before (the audited unfreeze → modify → freeze) or an operator's explicit freeze;
* a withdrawn fact ("allergy: not shrimp") never freezes;
* no vital fact (allergy, diet, health; a pending denial of one may give way to the fact restated) is
  changed by a write unless the statement that changes it was
  confirmed in another session, or the fact was opened by an audited unfreeze;
* an unfreeze window that closed leaves no item unfrozen after the next write or re-freeze check.
"""

from datetime import timedelta

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from actors.core.memory import ID_TUPLES
from actors.core.slots import is_vital, is_withdrawal
from schemas.enums import Kind, Polarity, State
from schemas.errors import GateRejected, InvalidInput
from tests.unit.core.gate.helpers import Clock, cand, engine, numbered_ids

SLOTS = [
    ("basic.allergy", ["shrimp", "peanut"], Kind.FACT),
    ("basic.diet_restriction", ["vegetarian", "vegan"], Kind.FACT),
    ("basic.health", ["asthma", "diabetes"], Kind.FACT),
    ("basic.residence", ["rotterdam", "qingdao", "berlin"], Kind.FACT),
    ("preference.food", ["noodle", "tofu"], Kind.PREFERENCE),
]
WINDOW = 3600

statement = st.tuples(
    st.just("say"),
    st.integers(0, len(SLOTS) - 1),
    st.integers(0, 2),
    st.integers(1, 4),  # session
    st.booleans(),  # negative (a denial)
    st.booleans(),  # marked as a correction ("actually …")
    st.booleans(),  # "remember this"
)
api = st.tuples(
    st.sampled_from(["confirm", "confirm_in_session", "freeze", "unfreeze", "unfreeze_change"]),
    st.integers(0, 40),
)
clock = st.tuples(st.sampled_from(["wait", "recall"]), st.sampled_from([60, WINDOW // 2, WINDOW, 2 * WINDOW]))
operations = st.lists(st.one_of(statement, statement, statement, api, clock), min_size=10, max_size=40)


def _say(gate, tick, op):
    _, slot_n, value_n, session, negative, correction, forced = op
    slot, values, kind = SLOTS[slot_n]
    value = values[value_n % len(values)]
    polarity = Polarity.NEGATIVE if negative else Polarity.POSITIVE
    text = f"{'actually ' if correction else ''}{slot} {'not ' if negative else ''}{value} #{tick}"
    return gate.write(
        cand(
            text,
            f"s{session}",
            f"d{tick}",
            slot=slot,
            value=value,
            kind=kind,
            polarity=polarity,
            correction=correction,
            forced=forced,
        )
    )[1]


def _api(gate, op):
    name, n = op
    ids = sorted(gate.items)
    memory_id = ids[n % len(ids)]
    if name == "confirm":
        return gate.confirm(memory_id, actor="user")
    if name == "confirm_in_session":
        return gate.confirm(memory_id, session_id="s-api", actor="user")
    if name == "freeze":
        return gate.freeze(memory_id, reason="operator", actor="operator")
    if name == "unfreeze":
        return gate.unfreeze(memory_id, reason="review", dialog_id="d-un", actor="user")
    return gate.unfreeze(
        memory_id,
        reason="moved",
        dialog_id="d-un",
        actor="user",
        new_content=f"changed {n}",
        new_value=f"v{n}",
    )


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
@numbered_ids()
def test_no_freeze_without_confirmations_and_no_vital_flip_on_one_utterance(ops):
    tick = Clock()
    gate = engine(clock=tick)
    gate.policy = gate.policy.model_copy(update={"unfreeze_window_seconds": WINDOW})
    ever_frozen: set[str] = set()
    api_confirmed: set[str] = set()  # confirmed by the user through the API: that is a confirmation too
    for n, op in enumerate(ops):
        before = {
            i: (item.state, item.value, item.polarity, item.is_active, item.slot)
            for i, item in gate.items.items()
        }
        kind = op[0]
        note(f"{n}: {op}")
        try:
            if kind == "say":
                _say(gate, n, op)
            elif kind == "wait":
                tick.advance(seconds=op[1])
            elif kind == "recall":
                tick.advance(seconds=op[1])
                gate.refreeze_due()
            elif gate.items:
                confirmed = _api(gate, op)
                if kind.startswith("confirm"):
                    api_confirmed.update(
                        i for i, it in confirmed.upserted.items() if it.state is State.CONFIRMED
                    )
        except (GateRejected, InvalidInput):
            gate.drain()

        for memory_id, item in gate.items.items():
            for name in ID_TUPLES:  # replaced, never mutated: so a tuple, whatever the step, with no repeats
                ids = getattr(item, name)
                assert type(ids) is tuple and len(set(ids)) == len(ids), (name, ids)
            old = before.get(memory_id)
            newly_frozen = item.is_frozen and memory_id not in ever_frozen
            if newly_frozen and kind != "freeze":
                # the operator's explicit freeze is the one door that needs no sessions
                assert len(item.confirmed_sessions) >= gate.policy.confirmations_to_confirm, (op, item)
            if item.is_frozen:
                assert not is_withdrawal(item.slot, item.polarity), item
                ever_frozen.add(memory_id)
            if kind == "say" and old is not None and old[3] and is_vital(old[4]):
                changed = (item.value, item.polarity, item.is_active) != (old[1], old[2], True)
                # a pending denial may give way to the fact restated (the cautious direction)
                challenger = old[2] is Polarity.NEGATIVE and old[0] is State.PENDING
                if changed and old[0] is not State.UNFROZEN and not challenger:
                    replacer = gate.items.get(item.superseded_by or "")
                    assert replacer is not None, f"vital {memory_id} {old} ended by {op} with no replacement"
                    confirmed = len(replacer.confirmed_sessions) >= 2 or replacer.memory_id in api_confirmed
                    assert confirmed, f"vital {memory_id} flipped by one {op}"
        if kind in ("say", "recall"):
            window = timedelta(seconds=WINDOW)
            for item in gate.active():
                if item.state is State.UNFROZEN:
                    assert item.frozen_at is not None and tick.now - item.frozen_at < window
