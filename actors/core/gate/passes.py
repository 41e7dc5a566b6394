"""The batch passes over one user's memory (docs/jobs.md), as plain Python on the same engine as the live
gates: the consolidation pass and restoring archived items within capacity. The jobs in ``jobs/`` decide
*which* users to visit, ``actors.app.maintenance`` runs a pass on the user's service and commits it; what
happens to a user's items is decided here, by the rules the write path uses.

The consolidation pass, in order:

1. **expire** active items contradicted ``contradictions_to_expire`` times or more (normally done at write
   time; this catches items left behind when a tenant lowered the threshold);
2. **clear stale pending** items: still pending, not an explicit "remember", idle (not stated or recalled)
   for ``stale_pending_days``, and below the write threshold (temporary states regardless of their score)
   → archived, so they stay restorable;
3. **merge** same-topic working items (same slot, polarity and kind) into one summary each, keeping every
   source dialog id — the compression the working tier otherwise does only when it overflows;
4. **promote** by the usual rules: pending items restated in enough sessions are confirmed, confirmed items
   still in working move to long-term, confirmed items that qualify are frozen (a full core raises the
   ``core_full`` alert once instead);
5. **evict** the lowest-value items of any tier over its capacity (after a tenant lowered a capacity);
6. **rescore decay**: the stored ``decay_score`` is a snapshot of a formula that recall and eviction compute
   live, so it is rewritten only where it moved by ``DECAY_TOLERANCE`` or more.

Every state or layer change is an audit event (actor ``job:consolidate``); a second pass over unchanged
items changes nothing: each step leaves no work for itself behind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import timedelta

from actors.core.gate.bounded import BoundedGate
from actors.core.gate.compression import plan_compression
from actors.core.gate.frozen import FrozenGate
from actors.core.gate.ledger import Ledger
from actors.core.memory import GateChanges, MemoryItem
from schemas.enums import Kind, Layer, State

CONSOLIDATION_ACTOR = "job:consolidate"
#: decay scores closer than this to the stored one are not rewritten (the stored value is informational)
DECAY_TOLERANCE = 0.01
_EVICTABLE_LAYERS = (Layer.WORKING, Layer.LONGTERM)


@dataclass(slots=True)
class ConsolidationCounts:
    """What one consolidation pass did to one user (``merged`` counts source items, ``summaries`` the
    items they became; ``evicted`` excludes the stale pending items ``cleared`` to the archive)."""

    merged: int = 0
    summaries: int = 0
    confirmed: int = 0
    promoted: int = 0
    frozen: int = 0
    expired: int = 0
    cleared: int = 0
    evicted: int = 0
    rescored: int = 0
    alerts: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class BatchPasses:
    """The consolidation pass and the archive restore, over the user's ledger, by the two gates' rules."""

    def __init__(self, ledger: Ledger, bounded: BoundedGate, frozen: FrozenGate):
        self.ledger = ledger
        self.bounded = bounded
        self.frozen = frozen

    def consolidate(self, actor: str = CONSOLIDATION_ACTOR) -> tuple[ConsolidationCounts, GateChanges]:
        self._expire_contradicted(actor)
        cleared = self._clear_stale_pending(actor)
        self._merge_same_topic(actor)
        self._promote(actor)
        self._evict_over_capacity(actor)
        rescored = self.bounded.rescore(tolerance=DECAY_TOLERANCE)
        changes = self.ledger.drain()
        actions = Counter(event.action for event in changes.events)
        counts = ConsolidationCounts(
            merged=actions["merge"],
            summaries=actions["create"],
            confirmed=actions["confirm"],
            promoted=actions["promote"],
            frozen=actions["freeze"],
            expired=actions["expire"],
            cleared=cleared,
            evicted=actions["archive"] - cleared,
            rescored=rescored,
            alerts=len(changes.alerts),
        )
        return counts, changes

    def _expire_contradicted(self, actor: str) -> None:
        doomed = [
            i
            for i in self.ledger.active()
            if not i.is_frozen and i.contradiction_count >= self.ledger.policy.contradictions_to_expire
        ]
        for item in doomed:
            self.ledger.transition(
                item, State.EXPIRED, "expire", "repeatedly contradicted by newer facts", actor
            )

    def _clear_stale_pending(self, actor: str) -> int:
        days = self.ledger.policy.stale_pending_days
        cutoff = self.ledger.clock() - timedelta(days=days)
        stale = [
            i
            for i in self.ledger.active(Layer.WORKING)
            if i.state is State.PENDING
            and not i.forced
            and i.last_accessed_at < cutoff
            and (i.kind is Kind.STATE or i.write_score < self.ledger.policy.write_threshold)
        ]
        reason = f"stale pending: unconfirmed and idle for {days} days, below the write threshold"
        for item in stale:
            self.bounded.archive(item, actor, reason)
        return len(stale)

    def _merge_same_topic(self, actor: str) -> None:
        working = sorted(
            (i for i in self.ledger.active(Layer.WORKING) if not i.is_frozen),
            key=lambda i: (i.created_at, i.memory_id),
        )
        for group in plan_compression(working):
            self.bounded.merge(group, actor)

    def _promote(self, actor: str) -> None:
        for item in sorted(self.ledger.active(), key=lambda i: (i.created_at, i.memory_id)):
            if not item.is_active:  # archived by a promotion's eviction earlier in this loop
                continue
            restated = len(item.confirmed_sessions) >= self.ledger.policy.confirmations_to_confirm
            if item.state is State.PENDING and restated and not self.ledger.frozen_challenged_by(item):
                self.frozen.confirm_item(item, "restated in distinct sessions (consolidation)", actor)
            elif item.state is State.CONFIRMED:
                self.frozen.place_confirmed(item, actor)

    def _evict_over_capacity(self, actor: str) -> None:
        for layer in _EVICTABLE_LAYERS:
            capacity = getattr(self.ledger.policy.capacities, layer.value)
            while self.ledger.count(layer) > capacity:
                victim = self.bounded.lowest_value(layer)
                if victim is None:
                    break  # only frozen items left: core never auto-evicts, and neither does this
                self.bounded.archive(victim, actor, f"{layer} over capacity: lowest-value item evicted")

    def restore_archived(
        self, items: Iterable[MemoryItem], *, actor: str, reason: str
    ) -> tuple[GateChanges, list[str], list[str]]:
        """Bring archived items back to long-term while it has room, best first as given, never displacing
        an active item; items archived longer ago than the retention window stay archived. Returns the
        changes and the ids restored and skipped."""
        horizon = self.ledger.clock() - timedelta(days=self.ledger.policy.archive_retention_days)
        restored: list[str] = []
        skipped: list[str] = []
        for item in items:
            item = self.ledger.items.setdefault(item.memory_id, item)
            within = item.archived_at is None or item.archived_at >= horizon
            room = self.ledger.count(Layer.LONGTERM) < self.ledger.policy.capacities.longterm
            if item.state is State.ARCHIVED and within and room:
                self.bounded.restore_item(item, actor, reason=reason)
                restored.append(item.memory_id)
            else:
                skipped.append(item.memory_id)
        return self.ledger.drain(), restored, skipped
