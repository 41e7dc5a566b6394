"""The two gates for one user's memory, as plain Python (no Ray, no I/O).

``GateEngine`` holds the user's loaded items and applies every rule of SPEC §3–§4 to them. Each public
operation returns the ``GateChanges`` it made (items to upsert, audit events, alerts); the caller commits
them to SQL in one transaction before acknowledging, and reloads the engine if that commit fails.

Write path, in the order the spec fixes: restatement (dedup → confirm instead of insert), then the
frozen-conflict check, then the bounded capacity check, then insertion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from actors.compression import merge_group, plan_compression
from actors.errors import CapacityError, InvalidInput, InvalidTransition, NotFound
from actors.memory import Alert, AuditEvent, Candidate, GateChanges, MemoryItem, content_hash, utcnow
from actors.slots import is_temporary, spec
from actors.valuation import decay_score, eviction_value
from schemas.enums import AlertKind, AlertStatus, Kind, Layer, Source, State
from schemas.ids import new_memory_id
from schemas.settings import GatePolicy

#: reasons recorded on freeze events; the only ways into ``frozen``
FREEZE_RULES = ("declared_core_attribute", "preference_restated", "inferred_high_confidence", "explicit_freeze")


@dataclass(frozen=True, slots=True)
class Outcome:
    memory_id: str
    action: str  # created | confirmed | conflict | corrected | ignored
    state: State
    layer: Layer
    detail: str = ""


class GateEngine:
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        policy: GatePolicy,
        items: Iterable[MemoryItem] = (),
        clock: Callable[[], datetime] = utcnow,
    ):
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.policy = policy
        self.clock = clock
        self.items: dict[str, MemoryItem] = {i.memory_id: i for i in items}
        self._changes = GateChanges()
        self._open_alerts: list[Alert] = []

    # ------------------------------------------------------------------ queries

    def active(self, layer: Layer | None = None) -> list[MemoryItem]:
        return [i for i in self.items.values() if i.is_active and (layer is None or i.layer is layer)]

    def count(self, layer: Layer) -> int:
        return sum(1 for i in self.items.values() if i.is_active and i.layer is layer)

    def frozen_count(self) -> int:
        return sum(1 for i in self.items.values() if i.is_frozen)

    def get(self, memory_id: str) -> MemoryItem:
        item = self.items.get(memory_id)
        if item is None:
            raise NotFound(f"memory {memory_id} not found")
        return item

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
        if frozen_conflicts and cand.is_correction:
            target = frozen_conflicts[0]
            self._modify_frozen(target, cand, reason="explicit correction", actor=actor, now=now)
            self._after_statement(target, now, actor)
            return self._outcome(target, "corrected", "frozen item unfrozen, changed and re-frozen"), self.drain()
        item = self._insert(cand, now, actor)
        if frozen_conflicts:
            self._record_frozen_conflict(item, frozen_conflicts, actor)
            return self._outcome(item, "conflict", "contradicts a frozen item; kept pending"), self.drain()
        if cand.is_correction and item.kind is not Kind.STATE:
            self._transition(item, State.CONFIRMED, "confirm", "explicit correction takes effect at once", actor)
            self._place_confirmed(item, actor)
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
            same_claim = item.polarity is cand.polarity and (
                not (item.value and cand.value) or item.value == cand.value
            )
            if same_claim and (item.is_active or item.state is State.ARCHIVED):
                return item
        return None

    def _restate(self, item: MemoryItem, cand: Candidate, now: datetime, actor: str) -> Outcome:
        if item.is_frozen:
            return self._outcome(item, "confirmed", "already frozen")
        if item.state is State.ARCHIVED:
            self._restore(item, actor, reason="restated by the user")
        before = item.snapshot()
        item.source_dialog_ids = _union(item.source_dialog_ids, cand.dialog_ids)
        new_session = cand.session_id not in item.confirmed_sessions
        if new_session:
            item.confirmed_sessions.append(cand.session_id)
            item.source = Source.USER_REPEATED if item.source is not Source.INFERRED else item.source
        item.importance = min(1.0, max(item.importance, cand.importance) + 0.05)
        item.confidence = min(1.0, max(item.confidence, cand.confidence) + 0.05)
        item.forced = item.forced or cand.forced
        item.last_accessed_at = now
        item.updated_at = now
        self._event(item, "restate", f"restated in session {cand.session_id}", before, actor, cand.dialog_ids)
        if item.state is State.PENDING and len(item.confirmed_sessions) >= self.policy.confirmations_to_confirm:
            self._confirm(item, "restated in distinct sessions", actor)
        elif item.state is State.CONFIRMED:
            self._maybe_freeze(item, actor)
        self._touch(item)
        self._after_statement(item, now, actor)
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
            other.conflicts_with = _union(other.conflicts_with, [item.memory_id])
            item.conflicts_with = _union(item.conflicts_with, [other.memory_id])
            self._event(other, "contradicted", f"contradicted by {item.memory_id}", before, actor)
            self._touch(item)
            if other.contradiction_count >= self.policy.contradictions_to_expire:
                self._transition(other, State.EXPIRED, "expire", "repeatedly contradicted by newer facts", actor)
        for other in self._complemented_by(item):
            if other.memory_id not in item.complements:
                item.complements.append(other.memory_id)
                self._touch(item)
                if not other.is_frozen:
                    other.complements = _union(other.complements, [item.memory_id])
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
        item.conflicts_with = _union(item.conflicts_with, [f.memory_id for f in frozen])
        self._touch(item)
        for target in frozen:
            self._alert(
                AlertKind.FROZEN_CONFLICT,
                target.memory_id,
                f"new statement {item.memory_id} contradicts frozen item {target.memory_id}; not applied",
                [item.memory_id],
            )
            challengers = [
                i for i in self.active() if target.memory_id in i.conflicts_with and not i.is_frozen
            ]
            if len(challengers) >= self.policy.contradictions_to_review:
                self._alert(
                    AlertKind.CONTRADICTION_REVIEW,
                    target.memory_id,
                    f"frozen item {target.memory_id} contradicted {len(challengers)} times: review it",
                    [c.memory_id for c in challengers],
                    once=True,
                )

    # ------------------------------------------------------------------ state machine

    def confirm(self, memory_id: str, *, session_id: str | None = None, actor: str = "user", reason: str = "") -> GateChanges:
        item = self._require_active(memory_id)
        if item.state is not State.PENDING:
            raise InvalidTransition(f"memory {memory_id} is {item.state}, only pending items can be confirmed")
        if session_id and session_id not in item.confirmed_sessions:
            item.confirmed_sessions.append(session_id)
        self._confirm(item, reason or "explicitly confirmed", actor)
        return self.drain()

    def freeze(self, memory_id: str, *, reason: str, actor: str) -> GateChanges:
        item = self._require_active(memory_id)
        if item.state not in (State.CONFIRMED, State.UNFROZEN):
            raise InvalidTransition(f"memory {memory_id} is {item.state}: only confirmed items can be frozen")
        if item.kind is Kind.STATE or is_temporary(item.slot):
            raise InvalidTransition("temporary states never freeze")
        if not self._core_has_room(item):
            self._alert(AlertKind.CORE_FULL, item.memory_id, "core is full: freeze refused", [])
            raise CapacityError(f"core holds {self.count(Layer.CORE)} items: freeze refused (alert raised)")
        self._freeze(item, "explicit_freeze", actor, reason)
        return self.drain()

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
        item = self.get(memory_id)
        if item.state is not State.FROZEN:
            raise InvalidTransition(f"memory {memory_id} is {item.state}: only frozen items can be unfrozen")
        if not reason.strip() or not dialog_id.strip():
            raise InvalidInput("unfreeze needs a reason and the source dialog id")
        if new_content is None:
            self._transition(item, State.UNFROZEN, "unfreeze", reason, actor, [dialog_id])
            return self.drain()
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
        self._modify_frozen(item, cand, reason=reason, actor=actor, now=self.clock())
        return self.drain()

    def _modify_frozen(self, item: MemoryItem, cand: Candidate, *, reason: str, actor: str, now: datetime) -> None:
        """frozen → unfrozen → modified → frozen; the old value stays as a superseded history row."""
        self._transition(item, State.UNFROZEN, "unfreeze", reason, actor, cand.dialog_ids)
        history = item.copy()
        history.memory_id = new_memory_id()
        history.state = State.SUPERSEDED
        history.superseded_by = item.memory_id
        history.version = 1
        history.created_at = item.created_at
        self.items[history.memory_id] = history
        self._event(history, "supersede", f"old value kept as history of {item.memory_id}", None, actor, cand.dialog_ids)
        before = item.snapshot()
        item.content = cand.content
        item.content_hash = content_hash(cand.content)
        item.embedding = None  # the new content is embedded before the commit
        item.value = cand.value
        item.polarity = cand.polarity
        item.source_dialog_ids = list(cand.dialog_ids)
        item.source_session_id = cand.session_id
        item.confirmed_sessions = _union([cand.session_id], [])
        item.supersedes = _union(item.supersedes, [history.memory_id])
        item.confidence = max(item.confidence, cand.confidence)
        item.contradiction_count = 0
        item.conflicts_with = []
        item.updated_at = now
        self._event(item, "modify", reason, before, actor, cand.dialog_ids)
        self._freeze(item, "explicit_freeze", actor, "re-frozen after audited change")
        for challenger in self.active():
            if item.memory_id in challenger.conflicts_with and challenger.value == item.value:
                challenger.conflicts_with.remove(item.memory_id)
                self._touch(challenger)

    def _confirm(self, item: MemoryItem, reason: str, actor: str) -> None:
        self._transition(item, State.CONFIRMED, "confirm", reason, actor)
        self._place_confirmed(item, actor)

    def _place_confirmed(self, item: MemoryItem, actor: str) -> None:
        promotable = item.forced or item.write_score >= self.policy.write_threshold or item.slot is not None
        if item.layer is Layer.WORKING and item.kind is not Kind.STATE and promotable:
            self._make_room(Layer.LONGTERM, actor)
            self._move(item, Layer.LONGTERM, "confirmed: distilled into the profile layer", actor)
        self._maybe_freeze(item, actor)

    def _freeze_rule(self, item: MemoryItem) -> str | None:
        if item.state is not State.CONFIRMED or item.kind is Kind.STATE or is_temporary(item.slot):
            return None
        if any(self.items.get(c) is not None and self.items[c].is_active for c in item.conflicts_with):
            return None
        slot_spec = spec(item.slot)
        if slot_spec is not None and slot_spec.core and item.source in (Source.USER_DECLARED, Source.USER_REPEATED):
            return "declared_core_attribute"
        if item.kind is Kind.PREFERENCE and len(item.confirmed_sessions) >= self.policy.sessions_to_freeze_preference:
            return "preference_restated"
        if item.source is Source.INFERRED and item.confidence > self.policy.inferred_freeze_confidence:
            return "inferred_high_confidence"
        return None

    def _maybe_freeze(self, item: MemoryItem, actor: str) -> None:
        rule = self._freeze_rule(item)
        if rule is None:
            return
        if not self._core_has_room(item):
            self._alert(
                AlertKind.CORE_FULL,
                item.memory_id,
                f"memory {item.memory_id} qualifies for freezing ({rule}) but core is full: review",
                [],
                once=True,
            )
            return
        self._freeze(item, rule, actor, f"freeze rule: {rule}")

    def _freeze(self, item: MemoryItem, rule: str, actor: str, reason: str) -> None:
        assert rule in FREEZE_RULES
        before = item.snapshot()
        item.state = State.FROZEN
        item.layer = Layer.CORE
        item.frozen_at = self.clock()
        item.decay_score = item.importance
        item.updated_at = item.frozen_at
        self._event(item, "freeze", f"{rule}: {reason}", before, actor)

    def _core_has_room(self, item: MemoryItem | None = None) -> bool:
        """Room for one more frozen item (an unfrozen item already in core keeps its own place)."""
        caps = self.policy.capacities
        in_core = item is not None and item.is_active and item.layer is Layer.CORE
        return (in_core or self.count(Layer.CORE) < caps.core) and self.frozen_count() < caps.frozen_limit

    # ------------------------------------------------------------------ bounded gate

    def _make_room(self, layer: Layer, actor: str) -> None:
        capacity = getattr(self.policy.capacities, layer.value)
        while self.count(layer) >= capacity:
            if layer is Layer.WORKING and self._compress_working(actor):
                continue
            victim = self._lowest_value(layer)
            if victim is None:
                raise CapacityError(f"{layer} is full of frozen items and cannot make room")
            self._archive(victim, actor, f"{layer} over capacity: lowest-value item evicted")

    def _compress_working(self, actor: str) -> bool:
        """Merge same-slot items among the oldest working items; else promote or evict the oldest one."""
        oldest = sorted(
            (i for i in self.active(Layer.WORKING) if not i.is_frozen), key=lambda i: (i.created_at, i.memory_id)
        )[: self.policy.compress_batch]
        if not oldest:
            return False
        groups = plan_compression(oldest)
        if groups:
            for group in groups:
                self._merge(group, actor)
            return True
        first = oldest[0]
        promotable = first.kind is not Kind.STATE and (first.forced or first.write_score >= self.policy.write_threshold)
        if promotable and self.count(Layer.LONGTERM) < self.policy.capacities.longterm:
            self._move(first, Layer.LONGTERM, "working overflow: high-value item promoted", actor)
            return True
        return False

    def _merge(self, group: list[MemoryItem], actor: str) -> MemoryItem:
        now = self.clock()
        summary = merge_group(group, now)
        summary.decay_score = decay_score(summary, self.policy, now)
        self.items[summary.memory_id] = summary
        dialog_ids = summary.source_dialog_ids
        self._event(summary, "create", f"summary of {len(group)} same-topic working items", None, actor, dialog_ids)
        for source in group:
            self._supersede(source, summary, actor, action="merge")
        if len(summary.confirmed_sessions) >= self.policy.confirmations_to_confirm:
            self._transition(summary, State.CONFIRMED, "confirm", "merged items span distinct sessions", actor)
            self._maybe_freeze(summary, actor)
        return summary

    def _lowest_value(self, layer: Layer) -> MemoryItem | None:
        now = self.clock()
        pool = [i for i in self.active(layer) if not i.is_frozen]
        if not pool:
            return None
        claims: dict[tuple, int] = {}
        for item in self.active():
            if item.slot and item.value:
                key = (item.slot, item.value)
                claims[key] = claims.get(key, 0) + 1

        def value(item: MemoryItem) -> tuple[float, datetime]:
            duplicated = claims.get((item.slot, item.value), 0) > 1 if item.slot and item.value else False
            return eviction_value(item, self.policy, now, duplicated=duplicated), item.last_accessed_at

        return min(pool, key=value)

    def _archive(self, item: MemoryItem, actor: str, reason: str) -> None:
        before = item.snapshot()
        item.layer = Layer.ARCHIVE
        item.state = State.ARCHIVED
        item.archived_at = self.clock()
        item.updated_at = item.archived_at
        self._event(item, "archive", reason, before, actor)

    def _restore(self, item: MemoryItem, actor: str, *, reason: str) -> None:
        self._make_room(Layer.LONGTERM, actor)
        before = item.snapshot()
        item.layer = Layer.LONGTERM
        confirmed = len(item.confirmed_sessions) >= self.policy.confirmations_to_confirm
        item.state = State.CONFIRMED if confirmed else State.PENDING
        item.archived_at = None
        item.last_accessed_at = self.clock()
        item.updated_at = item.last_accessed_at
        self._event(item, "restore", reason, before, actor)

    def restore(self, memory_id: str, *, actor: str, reason: str) -> GateChanges:
        item = self.get(memory_id)
        if item.state is not State.ARCHIVED:
            raise InvalidTransition(f"memory {memory_id} is {item.state}, not archived")
        self._restore(item, actor, reason=reason)
        return self.drain()

    def decay(self) -> GateChanges:
        """Recompute decay scores (frozen items exempt); unchanged items are not written."""
        now = self.clock()
        for item in self.active():
            score = round(decay_score(item, self.policy, now), 6)
            if not item.is_frozen and abs(score - item.decay_score) > 1e-6:
                item.decay_score = score
                self._touch(item)
        return self.drain()

    def record_access(self, memory_ids: Iterable[str]) -> GateChanges:
        """Recall heat: access count and last access (frozen items too: heat is not content)."""
        now = self.clock()
        for memory_id in memory_ids:
            item = self.items.get(memory_id)
            if item is not None and item.is_active:
                item.access_count += 1
                item.last_accessed_at = now
                self._touch(item)
        return self.drain()

    def forget(self, memory_id: str) -> MemoryItem:
        """Drop an item from the engine; the store deletes it and leaves the tombstone."""
        item = self.get(memory_id)
        del self.items[memory_id]
        for other in self.items.values():
            for links in (other.conflicts_with, other.complements, other.merged_from, other.supersedes):
                if memory_id in links:
                    links.remove(memory_id)
        return item

    # ------------------------------------------------------------------ helpers

    def _require_active(self, memory_id: str) -> MemoryItem:
        item = self.get(memory_id)
        if not item.is_active:
            raise InvalidTransition(f"memory {memory_id} is {item.state}")
        return item

    def _supersede(self, old: MemoryItem, new: MemoryItem, actor: str, action: str = "supersede") -> None:
        before = old.snapshot()
        old.state = State.SUPERSEDED
        old.superseded_by = new.memory_id
        old.updated_at = self.clock()
        new.supersedes = _union(new.supersedes, [old.memory_id])
        self._touch(new)
        self._event(old, action, f"superseded by {new.memory_id}", before, actor)

    def _move(self, item: MemoryItem, layer: Layer, reason: str, actor: str) -> None:
        before = item.snapshot()
        item.layer = layer
        item.updated_at = self.clock()
        self._event(item, "promote", reason, before, actor)

    def _transition(
        self, item: MemoryItem, state: State, action: str, reason: str, actor: str, dialog_ids: Sequence[str] = ()
    ) -> None:
        before = item.snapshot()
        item.state = state
        item.updated_at = self.clock()
        self._event(item, action, reason, before, actor, dialog_ids)

    def _event(
        self,
        item: MemoryItem,
        action: str,
        reason: str,
        before: dict | None,
        actor: str,
        dialog_ids: Sequence[str] = (),
    ) -> None:
        self._touch(item)
        self._changes.events.append(
            AuditEvent(
                tenant_id=self.tenant_id,
                user_id=self.user_id,
                memory_id=item.memory_id,
                action=action,
                actor=actor,
                reason=reason,
                before=before,
                after=item.snapshot(),
                source_dialog_id=dialog_ids[0] if dialog_ids else None,
                at=self.clock(),
            )
        )

    def _alert(self, kind: AlertKind, memory_id: str | None, message: str, related: list[str], once: bool = False) -> None:
        if once and any(a.kind is kind and a.memory_id == memory_id for a in self._open_alerts):
            return
        alert = Alert(self.tenant_id, self.user_id, kind, memory_id, message, related, AlertStatus.OPEN)
        self._open_alerts.append(alert)
        self._changes.alerts.append(alert)

    def seed_alerts(self, alerts: Iterable[Alert]) -> None:
        """Open alerts already stored, so ``once`` alerts are not raised again after a reload."""
        self._open_alerts.extend(a for a in alerts if a.status is AlertStatus.OPEN)

    def _touch(self, item: MemoryItem) -> None:
        self._changes.upserted[item.memory_id] = item

    def drain(self) -> GateChanges:
        """Hand over what changed since the last drain (after a refused operation: its alerts)."""
        changes, self._changes = self._changes, GateChanges()
        return changes

    def _outcome(self, item: MemoryItem, action: str, detail: str = "") -> Outcome:
        return Outcome(item.memory_id, action, item.state, item.layer, detail)


def _union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    seen = dict.fromkeys(first)
    seen.update(dict.fromkeys(second))
    return list(seen)
