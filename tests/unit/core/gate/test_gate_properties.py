"""Property tests of the gate engine's invariants over random operation sequences (docs/design.md#gate-rules).

After every operation: no tier exceeds its capacity; nothing becomes frozen except by a freeze rule; a
frozen item changes only through unfreeze; every state or layer change has an audit event and is handed
to the store; nothing is lost (every item ever written is still held, or was forgotten explicitly).
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.core.gate.engine import FREEZE_RULES
from schemas.enums import Kind, Layer, Polarity, State
from schemas.errors import GateRejected, InvalidInput
from tests.unit.core.gate.helpers import Clock, cand, engine, numbered_ids

SLOTS = [
    ("basic.residence", ["hangzhou", "suzhou", "beijing"], Kind.FACT),
    ("basic.allergy", ["peanut", "shrimp"], Kind.FACT),
    ("preference.food", ["noodle", "tofu", "rice"], Kind.PREFERENCE),
    ("state.mood", ["tired", "happy"], Kind.STATE),
    (None, [None], Kind.EVENT),
]

write_op = st.builds(
    lambda slot_n, value_n, session, neg, correction, forced, score, word: (
        "write",
        slot_n,
        value_n,
        session,
        neg,
        correction,
        forced,
        score,
        word,
    ),
    st.integers(0, len(SLOTS) - 1),
    st.integers(0, 2),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0.2, 0.5, 0.7, 0.9]),
    st.integers(0, 5),
)
target_op = st.tuples(
    st.sampled_from(["confirm", "freeze", "unfreeze", "unfreeze_change", "restore"]),
    st.integers(0, 50),
)
clock_op = st.tuples(st.sampled_from(["decay", "access"]), st.integers(0, 30))
operations = st.lists(st.one_of(write_op, write_op, write_op, target_op, clock_op), min_size=20, max_size=80)


def _run(gate, clock, op, forgotten):
    name = op[0]
    if name == "write":
        _, slot_n, value_n, session, negative, correction, forced, score, word = op
        slot, values, kind = SLOTS[slot_n]
        value = values[value_n % len(values)]
        polarity = Polarity.NEGATIVE if negative else Polarity.POSITIVE
        text = f"{kind.value} {slot} {value} {polarity.value} {word}"
        return gate.write(
            cand(
                text,
                f"s{session}",
                f"d{session}-{word}",
                slot=slot,
                value=value,
                kind=kind,
                polarity=polarity,
                correction=correction,
                forced=forced,
                score=score,
                clock=clock,
            )
        )[1]
    if name in ("decay", "access"):
        clock.advance(days=op[1])
        if name == "decay":
            return gate.decay()
        ids = sorted(gate.items)[: op[1] % 4]
        return gate.record_access(ids)
    ids = sorted(gate.items)
    if not ids:
        return None
    memory_id = ids[op[1] % len(ids)]
    if name == "confirm":
        return gate.confirm(memory_id, session_id="s9", actor="user")
    if name == "freeze":
        return gate.freeze(memory_id, reason="operator", actor="operator")
    if name == "unfreeze":
        return gate.unfreeze(memory_id, reason="review", dialog_id="d-un", actor="user")
    if name == "unfreeze_change":
        return gate.unfreeze(
            memory_id,
            reason="moved",
            dialog_id="d-un",
            actor="user",
            new_content=f"changed {op[1]}",
            new_value=f"v{op[1]}",
        )
    return gate.restore(memory_id, actor="job:restore", reason="relevant again")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
@numbered_ids()
def test_gate_invariants_hold_over_random_operations(ops):
    clock = Clock()
    gate = engine(working=6, longterm=5, core=3, clock=clock)
    caps = gate.policy.capacities
    ever_seen: set[str] = set()
    forgotten: set[str] = set()
    for op in ops:
        before = {i: (item.state, item.layer, item.snapshot()) for i, item in gate.items.items()}
        try:
            changes = _run(gate, clock, op, forgotten)
        except (GateRejected, InvalidInput):
            changes = gate.drain()
            assert not changes.upserted, f"{op} was refused but changed items"
        events = changes.events if changes else []
        upserted = changes.upserted if changes else {}
        ever_seen |= set(gate.items)

        # bounded gate
        assert gate.count(Layer.WORKING) <= caps.working
        assert gate.count(Layer.LONGTERM) <= caps.longterm
        assert gate.count(Layer.CORE) <= caps.core
        assert gate.frozen_count() <= caps.frozen_limit

        for memory_id, item in gate.items.items():
            own = [e for e in events if e.memory_id == memory_id]
            old = before.get(memory_id)
            # frozen only through a freeze rule, from confirmed/unfrozen
            if item.state is State.FROZEN and (old is None or old[0] is not State.FROZEN):
                freezes = [e for e in own if e.action == "freeze"]
                assert freezes and freezes[-1].reason.split(":")[0] in FREEZE_RULES
                assert freezes[-1].before["state"] in (State.CONFIRMED, State.UNFROZEN)
            # a frozen item changes only through unfreeze
            if old is not None and old[0] is State.FROZEN and item.snapshot() != old[2]:
                assert any(e.action == "unfreeze" for e in own), f"frozen {memory_id} changed by {op}"
            # every state/layer change is audited and handed to the store
            if old is None or (item.state, item.layer) != old[:2]:
                assert own, f"{memory_id} changed state without an audit event ({op})"
                assert own[-1].after["state"] == item.state and own[-1].after["layer"] == item.layer
                assert memory_id in upserted
            elif item.snapshot() != old[2]:
                assert memory_id in upserted
            if item.is_frozen:
                assert item.layer is Layer.CORE

        # nothing lost
        assert ever_seen - forgotten <= set(gate.items)
        for item in gate.items.values():
            assert item.state in State
            if item.state is State.SUPERSEDED:
                assert item.superseded_by in gate.items or item.superseded_by in forgotten
