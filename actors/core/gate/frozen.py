"""The frozen gate (docs/design.md#the-frozen-gate): pending → confirmed → frozen by the rules only, explicit
confirm/freeze, and the audited unfreeze (frozen → unfrozen → modified → frozen) that keeps the old value as
superseded history; and the frozen conflicts (a statement against a frozen item is kept apart, and
enough of them open a review).

It records every change in the user's ``Ledger``. Placing a confirmed item in long-term needs room there,
which it asks of the bounded gate (``BoundedGate.make_room``) — the one call it makes into the other gate.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from actors.core.gate.bounded import BoundedGate
from actors.core.gate.ledger import Ledger, union, without
from actors.core.gate.valuation import eviction_value
from actors.core.memory import Candidate, GateChanges, MemoryItem, content_hash
from actors.core.slots import is_temporary, is_withdrawal, spec
from schemas.enums import AlertKind, Kind, Layer, Source, State
from schemas.errors import CapacityError, InvalidInput, InvalidTransition
from schemas.ids import new_memory_id

#: reasons recorded on freeze events; the only ways into ``frozen``
FREEZE_RULES = (
    "declared_core_attribute",
    "declared_restated",
    "preference_restated",
    "inferred_high_confidence",
    "explicit_freeze",
    "unfreeze_window_closed",
)


class FrozenGate:
    def __init__(self, ledger: Ledger, bounded: BoundedGate):
        self.ledger = ledger
        self.bounded = bounded

    def freeze(self, memory_id: str, *, reason: str, actor: str) -> GateChanges:
        item = self.ledger.require_active(memory_id)
        if item.state not in (State.CONFIRMED, State.UNFROZEN):
            raise InvalidTransition(f"memory {memory_id} is {item.state}: only confirmed items can be frozen")
        if item.kind is Kind.STATE or is_temporary(item.slot):
            raise InvalidTransition("temporary states never freeze")
        if is_withdrawal(item.slot, item.polarity):
            raise InvalidTransition("a withdrawn fact never freezes")
        if not self._core_has_room(item):
            self.ledger.alert(AlertKind.CORE_FULL, item.memory_id, "core is full: freeze refused", [])
            held = self.ledger.count(Layer.CORE)
            raise CapacityError(f"core holds {held} items: freeze refused (alert raised)")
        self._freeze(item, "explicit_freeze", actor, reason)
        return self.ledger.drain()

    def unfreeze(
        self,
        memory_id: str,
        *,
        reason: str,
        dialog_id: str,
        actor: str,
        new_content: str | None = None,
        new_value: str | None = None,
    ) -> GateChanges:
        item = self.ledger.get(memory_id)
        if item.state is not State.FROZEN:
            raise InvalidTransition(f"memory {memory_id} is {item.state}: only frozen items can be unfrozen")
        if not reason.strip() or not dialog_id.strip():
            raise InvalidInput("unfreeze needs a reason and the source dialog id")
        if new_content is None:
            # the window opens: a statement of a new value in it is the change (``GateEngine``); when it
            # closes, ``refreeze_due`` freezes the item again unchanged. ``frozen_at`` of an unfrozen item
            # is when its window opened.
            self.ledger.transition(item, State.UNFROZEN, "unfreeze", reason, actor, [dialog_id])
            item.frozen_at = self.ledger.clock()
            return self.ledger.drain()
        cand = Candidate(
            content=new_content,
            kind=item.kind,
            session_id=item.source_session_id or "unfreeze",
            dialog_ids=[dialog_id],
            polarity=item.polarity,
            slot=item.slot,
            value=new_value if new_value is not None else item.value,
            importance=item.importance,
            confidence=1.0,
            is_correction=True,
        )
        self.modify_frozen(item, cand, reason=reason, actor=actor, now=self.ledger.clock())
        return self.ledger.drain()

    def modify_frozen(
        self, item: MemoryItem, cand: Candidate, *, reason: str, actor: str, now: datetime
    ) -> None:
        """frozen → unfrozen → modified → frozen; the old value stays as a superseded history row. An item
        already unfrozen (its window open) is modified and frozen again."""
        if item.state is State.FROZEN:
            self.ledger.transition(item, State.UNFROZEN, "unfreeze", reason, actor, cand.dialog_ids)
        history = item.copy()
        history.memory_id = new_memory_id()
        history.state = State.SUPERSEDED
        history.superseded_by = item.memory_id
        history.version = 1
        history.created_at = item.created_at
        self.ledger.add(history)
        self.ledger.event(
            history,
            "supersede",
            f"old value kept as history of {item.memory_id}",
            None,
            actor,
            cand.dialog_ids,
        )
        before = item.snapshot()
        item.content = cand.content
        item.content_hash = content_hash(cand.content)
        item.embedding = None  # the new content is embedded before the commit
        item.value = cand.value
        item.polarity = cand.polarity
        item.source_dialog_ids = tuple(cand.dialog_ids)
        item.source_session_id = cand.session_id
        item.confirmed_sessions = (cand.session_id,)
        item.supersedes = union(item.supersedes, [history.memory_id])
        item.confidence = max(item.confidence, cand.confidence)
        item.contradiction_count = 0
        item.conflicts_with = ()
        item.updated_at = now
        self.ledger.event(item, "modify", reason, before, actor, cand.dialog_ids)
        self._freeze(item, "explicit_freeze", actor, "re-frozen after audited change")
        for challenger in self.ledger.active():
            if item.memory_id in challenger.conflicts_with and challenger.value == item.value:
                challenger.conflicts_with = without(challenger.conflicts_with, item.memory_id)
                self.ledger.touch(challenger)

    def confirm_item(self, item: MemoryItem, reason: str, actor: str) -> None:
        """pending → confirmed, then placed: long-term for what is worth keeping, frozen if a rule says so."""
        self.ledger.transition(item, State.CONFIRMED, "confirm", reason, actor)
        self.place_confirmed(item, actor)

    def place_confirmed(self, item: MemoryItem, actor: str) -> None:
        policy = self.ledger.policy
        promotable = item.forced or item.write_score >= policy.write_threshold or item.slot is not None
        if item.layer is Layer.WORKING and item.kind is not Kind.STATE and promotable:
            self.bounded.make_room(Layer.LONGTERM, actor)
            self.ledger.move(item, Layer.LONGTERM, "confirmed: distilled into the profile layer", actor)
        self.freeze_if_due(item, actor)

    def record_frozen_conflict(self, item: MemoryItem, frozen: list[MemoryItem], actor: str) -> None:
        """A new statement against frozen items: linked to them, kept pending, an alert per frozen item."""
        item.conflicts_with = union(item.conflicts_with, [f.memory_id for f in frozen])
        self.ledger.touch(item)
        for target in frozen:
            self.ledger.alert(
                AlertKind.FROZEN_CONFLICT,
                target.memory_id,
                f"new statement {item.memory_id} contradicts frozen item {target.memory_id}; not applied",
                [item.memory_id],
            )
            self.review_if_contested(target)

    def record_vital_retraction(self, item: MemoryItem, vital: list[MemoryItem], actor: str) -> None:
        """A statement that denies or changes an allergy, health or diet fact not frozen: linked to it and
        kept pending, with a ``vital_retraction`` alert; it takes effect once confirmed in another session
        or through the API (``GateEngine.confirm``), never on its own."""
        item.conflicts_with = union(item.conflicts_with, [v.memory_id for v in vital])
        self.ledger.touch(item)
        for target in vital:
            self.ledger.alert(
                AlertKind.VITAL_RETRACTION,
                target.memory_id,
                f"new statement {item.memory_id} contradicts vital fact {target.memory_id} ({target.slot}); "
                "kept pending until confirmed in another session or through the API",
                [item.memory_id],
            )

    def refreeze_due(self, actor: str) -> None:
        """Every unfrozen item whose unfreeze window has closed is frozen again, unchanged."""
        window = timedelta(seconds=self.ledger.policy.unfreeze_window_seconds)
        now = self.ledger.clock()
        for item in self.ledger.active():
            if item.state is not State.UNFROZEN or (
                item.frozen_at is not None and now - item.frozen_at < window
            ):
                continue
            self._freeze(item, "unfreeze_window_closed", actor, "no new value within the unfreeze window")

    def review_if_contested(self, target: MemoryItem) -> None:
        """A frozen item contradicted in ``contradictions_to_review`` statements — distinct challengers, or
        one challenge restated in distinct sessions — opens a review (once); the fact itself stays."""
        challengers = [
            i for i in self.ledger.active() if target.memory_id in i.conflicts_with and not i.is_frozen
        ]
        statements = sum(max(len(c.confirmed_sessions), 1) for c in challengers)
        if statements >= self.ledger.policy.contradictions_to_review:
            self.ledger.alert(
                AlertKind.CONTRADICTION_REVIEW,
                target.memory_id,
                f"frozen item {target.memory_id} contradicted {statements} times: review it",
                [c.memory_id for c in challengers],
                once=True,
            )

    def _freeze_rule(self, item: MemoryItem) -> str | None:
        """The rule that freezes a confirmed item, if any. Every rule needs the confirmations of
        ``confirmations_to_confirm`` distinct sessions, so no single utterance (however worded: a
        correction, "remember this", an API confirm) freezes anything; a withdrawn fact never freezes."""
        if item.state is not State.CONFIRMED or item.kind is Kind.STATE or is_temporary(item.slot):
            return None
        if len(item.confirmed_sessions) < self.ledger.policy.confirmations_to_confirm:
            return None
        if is_withdrawal(item.slot, item.polarity):
            return None
        items = self.ledger.items
        if any(items.get(c) is not None and items[c].is_active for c in item.conflicts_with):
            return None
        slot_spec = spec(item.slot)
        if (
            slot_spec is not None
            and slot_spec.core
            and item.source in (Source.USER_DECLARED, Source.USER_REPEATED)
        ):
            return "declared_core_attribute"
        restated = len(item.confirmed_sessions) >= self.ledger.policy.sessions_to_freeze_preference
        if item.forced and restated and item.confidence > self.ledger.policy.inferred_freeze_confidence:
            # "remember this", said again in later sessions: 2 confirmations, >= 3 sessions, confidence > 0.9
            return "declared_restated"
        if item.kind is Kind.PREFERENCE and restated:
            return "preference_restated"
        if item.source is Source.INFERRED and item.confidence > self.ledger.policy.inferred_freeze_confidence:
            return "inferred_high_confidence"
        return None

    def freeze_if_due(self, item: MemoryItem, actor: str) -> None:
        """Freeze a confirmed item a freeze rule covers; a full core raises ``core_full`` (once) instead."""
        rule = self._freeze_rule(item)
        if rule is None:
            return
        if not self._core_has_room(item):
            # core never evicts on its own: the alert names the core item of lowest value, the one a
            # reviewer would unfreeze to make room, and the item waits in long-term meanwhile
            weakest = self._lowest_value_frozen()
            self.ledger.alert(
                AlertKind.CORE_FULL,
                item.memory_id,
                f"memory {item.memory_id} qualifies for freezing ({rule}) but core is full; lowest-value "
                f"core item: {weakest.memory_id if weakest else 'none'}: review",
                [weakest.memory_id] if weakest else [],
                once=True,
            )
            return
        self._freeze(item, rule, actor, f"freeze rule: {rule}")

    def _freeze(self, item: MemoryItem, rule: str, actor: str, reason: str) -> None:
        assert rule in FREEZE_RULES
        before = item.snapshot()
        item.state = State.FROZEN
        item.layer = Layer.CORE
        item.frozen_at = self.ledger.clock()
        item.decay_score = item.importance
        item.updated_at = item.frozen_at
        self.ledger.event(item, "freeze", f"{rule}: {reason}", before, actor)

    def _lowest_value_frozen(self) -> MemoryItem | None:
        """The core item worth least by the eviction value (frozen items do not decay)."""
        now = self.ledger.clock()
        return min(
            (i for i in self.ledger.active() if i.is_frozen),
            key=lambda i: (eviction_value(i, self.ledger.policy, now, duplicated=False), i.memory_id),
            default=None,
        )

    def _core_has_room(self, item: MemoryItem | None = None) -> bool:
        """Room for one more frozen item. An unfrozen item keeps its place while its window is open — in
        core and under the frozen limit, which counts it — so freezing it again always fits, and nothing
        frozen meanwhile can take its place."""
        if item is not None and item.is_active and item.state is State.UNFROZEN:
            return True
        caps = self.ledger.policy.capacities
        in_core = item is not None and item.is_active and item.layer is Layer.CORE
        held = sum(1 for i in self.ledger.active() if i.state in (State.FROZEN, State.UNFROZEN))
        return (in_core or self.ledger.count(Layer.CORE) < caps.core) and held < caps.frozen_limit
