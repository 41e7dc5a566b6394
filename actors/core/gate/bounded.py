"""The bounded gate (docs/design.md#the-bounded-gate): hard tier capacities; working overflow is compressed
(same-slot items merge into a summary that keeps every source dialog id) or promoted, then the lowest-value
items are archived — never deleted; core never evicts. Also decay, recall heat, restore from the archive
(forgetting is ``actors.core.forgetting``'s: the service reloads the engine after it).

It records every change in the user's ``Ledger``. The one thing it asks of the frozen gate — whether a
merged summary that is confirmed at once should freeze — it asks through the ``on_confirmed`` callback the
engine wires in, so the two gates never reach into each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from actors.core.gate.compression import merge_group, plan_compression
from actors.core.gate.ledger import Ledger
from actors.core.gate.valuation import decay_score, eviction_value
from actors.core.memory import GateChanges, MemoryItem
from schemas.enums import Kind, Layer, State
from schemas.errors import CapacityError, FrozenItemError, InvalidTransition

#: what the bounded gate calls when one of its merges confirms a summary (the frozen gate's freeze rules)
ConfirmedHook = Callable[[MemoryItem, str], None]


class BoundedGate:
    def __init__(self, ledger: Ledger, on_confirmed: ConfirmedHook | None = None):
        self.ledger = ledger
        self.on_confirmed = on_confirmed

    # ------------------------------------------------------------------ capacity

    def make_room(self, layer: Layer, actor: str) -> None:
        """Make room for one more active item in ``layer``: compress working, else archive the lowest-value
        non-frozen item; a tier full of frozen items refuses (``CapacityError``)."""
        ledger = self.ledger
        capacity = getattr(ledger.policy.capacities, layer.value)
        while ledger.count(layer) >= capacity:
            if layer is Layer.WORKING and self._compress_working(actor):
                continue
            victim = self.lowest_value(layer)
            if victim is None:
                raise CapacityError(f"{layer} is full of frozen items and cannot make room")
            self.archive(victim, actor, f"{layer} over capacity: lowest-value item evicted")

    def _compress_working(self, actor: str) -> bool:
        """Merge same-slot items among the oldest working items; else promote or evict the oldest one."""
        ledger = self.ledger
        policy = ledger.policy
        oldest = sorted(
            (i for i in ledger.active(Layer.WORKING) if not i.is_frozen),
            key=lambda i: (i.created_at, i.memory_id),
        )[: policy.compress_batch]
        if not oldest:
            return False
        groups = plan_compression(oldest)
        if groups:
            for group in groups:
                self.merge(group, actor)
            return True
        first = oldest[0]
        promotable = first.kind is not Kind.STATE and (
            first.forced or first.write_score >= policy.write_threshold
        )
        if promotable and ledger.count(Layer.LONGTERM) < policy.capacities.longterm:
            ledger.move(first, Layer.LONGTERM, "working overflow: high-value item promoted", actor)
            return True
        return False

    def merge(self, group: list[MemoryItem], actor: str) -> MemoryItem:
        """One summary for a same-topic group; the sources are superseded by it. A summary whose sources
        span enough sessions is confirmed at once (and handed to ``on_confirmed``)."""
        ledger = self.ledger
        now = ledger.clock()
        summary = merge_group(group, now)
        summary.decay_score = decay_score(summary, ledger.policy, now)
        ledger.add(summary)
        dialog_ids = summary.source_dialog_ids
        ledger.event(
            summary, "create", f"summary of {len(group)} same-topic working items", None, actor, dialog_ids
        )
        for source in group:
            ledger.supersede(source, summary, actor, action="merge")
        if len(summary.confirmed_sessions) >= ledger.policy.confirmations_to_confirm:
            ledger.transition(
                summary, State.CONFIRMED, "confirm", "merged items span distinct sessions", actor
            )
            if self.on_confirmed is not None:
                self.on_confirmed(summary, actor)
        return summary

    def lowest_value(self, layer: Layer) -> MemoryItem | None:
        """The non-frozen active item of ``layer`` worth least by the eviction value (ties: least recently
        accessed)."""
        ledger = self.ledger
        now = ledger.clock()
        pool = [i for i in ledger.active(layer) if not i.is_frozen]
        if not pool:
            return None
        claims: dict[tuple[str, str], int] = {}
        for item in ledger.active():
            if item.slot and item.value:
                key = (item.slot, item.value)
                claims[key] = claims.get(key, 0) + 1

        def value(item: MemoryItem) -> tuple[float, datetime]:
            duplicated = claims.get((item.slot, item.value), 0) > 1 if item.slot and item.value else False
            return eviction_value(item, ledger.policy, now, duplicated=duplicated), item.last_accessed_at

        return min(pool, key=value)

    def archive(self, item: MemoryItem, actor: str, reason: str) -> None:
        """Move an item to the archive (restorable, never deleted). Frozen items are never archived."""
        if item.is_frozen:
            raise FrozenItemError(f"memory {item.memory_id} is frozen: core never evicts (unfreeze it first)")
        before = item.snapshot()
        item.layer = Layer.ARCHIVE
        item.state = State.ARCHIVED
        item.archived_at = self.ledger.clock()
        item.updated_at = item.archived_at
        self.ledger.event(item, "archive", reason, before, actor)

    def restore_item(self, item: MemoryItem, actor: str, *, reason: str) -> None:
        """An archived item back to long-term (making room there), confirmed if it was."""
        ledger = self.ledger
        self.make_room(Layer.LONGTERM, actor)
        before = item.snapshot()
        item.layer = Layer.LONGTERM
        confirmed = len(item.confirmed_sessions) >= ledger.policy.confirmations_to_confirm
        item.state = State.CONFIRMED if confirmed else State.PENDING
        item.archived_at = None
        item.last_accessed_at = ledger.clock()
        item.updated_at = item.last_accessed_at
        ledger.event(item, "restore", reason, before, actor)

    # ------------------------------------------------------------------ operations

    def restore(self, memory_id: str, *, actor: str, reason: str) -> GateChanges:
        item = self.ledger.get(memory_id)
        if item.state is not State.ARCHIVED:
            raise InvalidTransition(f"memory {memory_id} is {item.state}, not archived")
        self.restore_item(item, actor, reason=reason)
        return self.ledger.drain()

    def decay(self) -> GateChanges:
        """Recompute decay scores (frozen items exempt); unchanged items are not written."""
        self.rescore(tolerance=1e-6)
        return self.ledger.drain()

    def rescore(self, tolerance: float) -> int:
        """Store each non-frozen item's current decay score where it moved by more than ``tolerance``;
        returns how many moved."""
        ledger = self.ledger
        now = ledger.clock()
        moved = 0
        for item in ledger.active():
            score = round(decay_score(item, ledger.policy, now), 6)
            if not item.is_frozen and abs(score - item.decay_score) > tolerance:
                item.decay_score = score
                ledger.touch(item)
                moved += 1
        return moved

    def record_access(self, memory_ids: Iterable[str]) -> GateChanges:
        """Recall heat: access count and last access (frozen items too: heat is not content)."""
        ledger = self.ledger
        now = ledger.clock()
        for memory_id in memory_ids:
            item = ledger.items.get(memory_id)
            if item is not None and item.is_active:
                item.access_count += 1
                item.last_accessed_at = now
                ledger.touch(item)
        return ledger.drain()
