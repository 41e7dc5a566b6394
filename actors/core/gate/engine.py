"""The two gates for one user's memory, as plain Python (no Ray, no I/O).

``GateEngine`` holds the user's loaded items and applies every rule of the two gates
(docs/design.md#gate-rules) to them. Each public operation returns the ``GateChanges`` it made (items to
upsert, audit events, alerts); the caller commits them to SQL in one transaction before acknowledging, and
reloads the engine if that commit fails.

Write path, in the order the spec fixes: restatement (dedup → confirm instead of insert), then the
frozen-conflict check, then the bounded capacity check, then insertion. The gates themselves live in
``actors.core.gate.frozen`` and ``actors.core.gate.bounded``; shared bookkeeping in ``actors.core.gate.base``;
the batch jobs' consolidation pass and archive restore in ``actors.core.gate.maintenance``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from actors.core.errors import InvalidInput
from actors.core.gate.base import Outcome, union
from actors.core.gate.bounded import BoundedGate
from actors.core.gate.frozen import FREEZE_RULES, FrozenGate
from actors.core.gate.maintenance import MaintenanceGate
from actors.core.gate.scoring import content_units
from actors.core.gate.valuation import decay_score
from actors.core.memory import Candidate, GateChanges, MemoryItem, content_hash
from actors.core.slots import spec
from schemas.enums import AlertKind, Kind, Layer, Source, State

__all__ = ["FREEZE_RULES", "GateEngine", "Outcome"]


class GateEngine(MaintenanceGate, FrozenGate, BoundedGate):
    # ------------------------------------------------------------------ write path

    def write(
        self, cand: Candidate, *, near_duplicates: Sequence[tuple[str, float]] = (), actor: str = "user"
    ) -> tuple[Outcome, GateChanges]:
        now = self.clock()
        if not cand.content.strip():
            raise InvalidInput("empty memory content")
        restated = self._find_restatement(cand, near_duplicates)
        if restated is not None:
            outcome = self._restate(restated, cand, now, actor)
            return outcome, self.drain()
        frozen_conflicts = [i for i in self._contradicted_by(cand) if i.is_frozen]
        if frozen_conflicts and cand.is_correction and not retracts(cand, frozen_conflicts):
            target = frozen_conflicts[0]
            self._modify_frozen(target, cand, reason="explicit correction", actor=actor, now=now)
            self._after_statement(target, now, actor)
            self._review_if_corrected_often(target)
            return self._outcome(
                target, "corrected", "frozen item unfrozen, changed and re-frozen"
            ), self.drain()
        item = self._insert(cand, now, actor)
        if frozen_conflicts:
            self._record_frozen_conflict(item, frozen_conflicts, actor)
            return self._outcome(item, "conflict", "contradicts a frozen item; kept pending"), self.drain()
        if cand.is_correction and item.kind is not Kind.STATE:
            self._transition(
                item, State.CONFIRMED, "confirm", "explicit correction takes effect at once", actor
            )
            self._place_confirmed(item, actor)
            self._review_if_corrected_often(item)
        elif len(item.confirmed_sessions) >= self.policy.confirmations_to_confirm:
            self._confirm(item, "restated in distinct sessions", actor)
        self._after_statement(item, now, actor)
        action = "corrected" if cand.is_correction else "created"
        return self._outcome(item, action), self.drain()

    def _find_restatement(
        self, cand: Candidate, near_duplicates: Sequence[tuple[str, float]]
    ) -> MemoryItem | None:
        digest = content_hash(cand.content)
        candidates = [i for i in self.items.values() if i.is_active or i.state is State.ARCHIVED]
        for item in candidates:
            if item.content_hash == digest and item.polarity is cand.polarity:
                return item
        if cand.slot and cand.value:
            for item in candidates:
                if (item.slot, item.value, item.polarity) == (cand.slot, cand.value, cand.polarity):
                    return item
        for memory_id, similarity in sorted(near_duplicates, key=lambda p: -p[1]):
            item = self.items.get(memory_id)
            if item is None or similarity < self.policy.near_duplicate_similarity:
                continue
            if item.value and cand.value:
                same_claim = item.value == cand.value
            else:  # no value to compare: the words must say the same thing too
                same_claim = same_words(item.content, cand.content)
            same_claim = same_claim and item.polarity is cand.polarity
            if same_claim and (item.is_active or item.state is State.ARCHIVED):
                return item
        return None

    def _restate(self, item: MemoryItem, cand: Candidate, now: datetime, actor: str) -> Outcome:
        if item.is_frozen:
            return self._outcome(item, "confirmed", "already frozen")
        challenged = self._frozen_challenged_by(item)
        if item.state is State.ARCHIVED:
            self._restore(item, actor, reason="restated by the user")
        before = item.snapshot()
        item.source_dialog_ids = union(item.source_dialog_ids, cand.dialog_ids)
        new_session = cand.session_id not in item.confirmed_sessions
        if new_session:
            item.confirmed_sessions.append(cand.session_id)
            item.source = Source.USER_REPEATED if item.source is not Source.INFERRED else item.source
        # rounded: 0.8 restated twice is 0.9, not 0.9000000000000001 (which would pass "above 0.9")
        item.importance = round(min(1.0, max(item.importance, cand.importance) + 0.05), 6)
        item.confidence = round(min(1.0, max(item.confidence, cand.confidence) + 0.05), 6)
        item.forced = item.forced or cand.forced
        item.last_accessed_at = now
        item.updated_at = now
        self._event(item, "restate", f"restated in session {cand.session_id}", before, actor, cand.dialog_ids)
        if (
            item.state is State.PENDING
            and len(item.confirmed_sessions) >= self.policy.confirmations_to_confirm
            and not challenged  # a challenge to a frozen fact stays pending until someone reviews it
        ):
            self._confirm(item, "restated in distinct sessions", actor)
        elif item.state is State.CONFIRMED:
            self._maybe_freeze(item, actor)
        self._touch(item)
        self._after_statement(item, now, actor)
        if challenged:
            # a statement against a frozen fact, made again: still not applied; each session counts
            for target in challenged:
                self._review_if_contested(target)
            return self._outcome(item, "conflict", "restates a challenge to a frozen item; kept apart")
        return self._outcome(item, "confirmed", "restatement of an existing memory")

    def _insert(self, cand: Candidate, now: datetime, actor: str) -> MemoryItem:
        self._make_room(Layer.WORKING, actor)
        item = MemoryItem(
            tenant_id=self.tenant_id,
            user_id=self.user_id,
            content=cand.content,
            kind=cand.kind,
            polarity=cand.polarity,
            slot=cand.slot,
            value=cand.value,
            importance=max(cand.importance, 0.9) if cand.forced else cand.importance,
            confidence=cand.confidence,
            write_score=cand.write_score,
            source=cand.source,
            source_session_id=cand.session_id,
            source_dialog_ids=list(cand.dialog_ids),
            confirmed_sessions=[cand.session_id],
            forced=cand.forced,
            created_at=cand.observed_at,
            updated_at=now,
            last_accessed_at=cand.observed_at,
            source_text=cand.source_text,
        )
        item.decay_score = decay_score(item, self.policy, now)
        self.items[item.memory_id] = item
        self._event(item, "create", "new memory enters working as pending", None, actor, cand.dialog_ids)
        if cand.forced and item.kind is not Kind.STATE:
            self._make_room(Layer.LONGTERM, actor)
            self._move(item, Layer.LONGTERM, "explicit remember: kept beyond working memory", actor)
        return item

    def _after_statement(self, item: MemoryItem, now: datetime, actor: str) -> None:
        """Apply what a statement implies for the items it contradicts or complements."""
        for other in self._contradicted_by(item):
            if other.is_frozen or other.memory_id == item.memory_id:
                continue
            settled = item.state in (State.CONFIRMED, State.FROZEN)
            if item.kind is Kind.STATE or settled:
                self._supersede(other, item, actor)
                continue
            before = other.snapshot()
            other.contradiction_count += 1
            other.confidence = round(other.confidence * 0.8, 6)
            other.conflicts_with = union(other.conflicts_with, [item.memory_id])
            item.conflicts_with = union(item.conflicts_with, [other.memory_id])
            self._event(other, "contradicted", f"contradicted by {item.memory_id}", before, actor)
            self._touch(item)
            if other.contradiction_count >= self.policy.contradictions_to_expire:
                self._transition(
                    other, State.EXPIRED, "expire", "repeatedly contradicted by newer facts", actor
                )
        for other in self._complemented_by(item):
            if other.memory_id not in item.complements:
                item.complements.append(other.memory_id)
                self._touch(item)
                if not other.is_frozen:
                    other.complements = union(other.complements, [item.memory_id])
                    self._touch(other)
        if item.state is State.CONFIRMED:
            self._maybe_freeze(item, actor)

    def _contradicted_by(self, stmt: Candidate | MemoryItem) -> list[MemoryItem]:
        if not stmt.slot or not stmt.value:
            return []
        slot_spec = spec(stmt.slot)
        found = []
        for item in self.active():
            if getattr(stmt, "memory_id", None) == item.memory_id or item.slot != stmt.slot or not item.value:
                continue
            if item.value == stmt.value:
                if item.polarity is not stmt.polarity:
                    found.append(item)
            elif slot_spec is not None and slot_spec.single_valued and item.polarity is stmt.polarity:
                found.append(item)
        return found

    def _complemented_by(self, item: MemoryItem) -> list[MemoryItem]:
        slot_spec = spec(item.slot)
        if slot_spec is None or slot_spec.single_valued or not item.value:
            return []
        return [
            o
            for o in self.active()
            if o.memory_id != item.memory_id
            and o.slot == item.slot
            and o.value
            and o.value != item.value
            and o.polarity is item.polarity
        ]

    def _record_frozen_conflict(self, item: MemoryItem, frozen: list[MemoryItem], actor: str) -> None:
        item.conflicts_with = union(item.conflicts_with, [f.memory_id for f in frozen])
        self._touch(item)
        for target in frozen:
            self._alert(
                AlertKind.FROZEN_CONFLICT,
                target.memory_id,
                f"new statement {item.memory_id} contradicts frozen item {target.memory_id}; not applied",
                [item.memory_id],
            )
            self._review_if_contested(target)

    def _review_if_contested(self, target: MemoryItem) -> None:
        """A frozen item contradicted in ``contradictions_to_review`` statements — distinct challengers, or
        one challenge restated in distinct sessions — opens a review (once); the fact itself stays."""
        challengers = [i for i in self.active() if target.memory_id in i.conflicts_with and not i.is_frozen]
        statements = sum(max(len(c.confirmed_sessions), 1) for c in challengers)
        if statements >= self.policy.contradictions_to_review:
            self._alert(
                AlertKind.CONTRADICTION_REVIEW,
                target.memory_id,
                f"frozen item {target.memory_id} contradicted {statements} times: review it",
                [c.memory_id for c in challengers],
                once=True,
            )

    def _review_if_corrected_often(self, item: MemoryItem) -> None:
        """A fact the user corrected ``contradictions_to_review`` times (each correction leaves the old value
        in ``supersedes``) raises a review once: which value holds, or is something misread?"""
        if len(item.supersedes) >= self.policy.contradictions_to_review:
            self._alert(
                AlertKind.REPEATED_CORRECTION,
                item.memory_id,
                f"{item.slot or 'memory'} {item.memory_id} corrected {len(item.supersedes)} times: review it",
                list(item.supersedes),
                once=True,
            )


def retracts(cand: Candidate, frozen: list[MemoryItem]) -> bool:
    """The candidate denies a frozen fact ("shellfish is fine for me now" against a shellfish allergy) rather
    than replacing its value ("actually I moved to Suzhou"): even worded as a correction it is not applied
    at once — a wrongly retracted allergy costs more than a late one — but kept pending for review."""
    return any(f.value == cand.value and f.polarity is not cand.polarity for f in frozen)


#: share of content words two unvalued statements must share to be one restated memory: an embedding alone
#: calls "I really appreciate your help" and "I feel the same way!" near-duplicates (E5 cosine ~0.9)
SAME_WORDS_SHARE = 0.5


def same_words(first: str, second: str) -> bool:
    a, b = set(content_units(first)), set(content_units(second))
    return bool(a and b) and len(a & b) / len(a | b) >= SAME_WORDS_SHARE
