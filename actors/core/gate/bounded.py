"""The bounded gate (docs/design.md#the-bounded-gate): hard tier capacities; working overflow is compressed
(same-slot items merge into a summary that keeps every source dialog id) or promoted, then the lowest-value
items are archived — never deleted; core never evicts. Also decay, recall heat, restore from the archive, and
forgetting.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from actors.core.errors import CapacityError, InvalidTransition
from actors.core.gate.base import GateBase
from actors.core.gate.compression import merge_group, plan_compression
from actors.core.gate.valuation import decay_score, eviction_value
from actors.core.memory import GateChanges, MemoryItem
from schemas.enums import Kind, Layer, State


class BoundedGate(GateBase):
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
            (i for i in self.active(Layer.WORKING) if not i.is_frozen),
            key=lambda i: (i.created_at, i.memory_id),
        )[: self.policy.compress_batch]
        if not oldest:
            return False
        groups = plan_compression(oldest)
        if groups:
            for group in groups:
                self._merge(group, actor)
            return True
        first = oldest[0]
        promotable = first.kind is not Kind.STATE and (
            first.forced or first.write_score >= self.policy.write_threshold
        )
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
        self._event(
            summary, "create", f"summary of {len(group)} same-topic working items", None, actor, dialog_ids
        )
        for source in group:
            self._supersede(source, summary, actor, action="merge")
        if len(summary.confirmed_sessions) >= self.policy.confirmations_to_confirm:
            self._transition(
                summary, State.CONFIRMED, "confirm", "merged items span distinct sessions", actor
            )
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
        self._rescore(tolerance=1e-6)
        return self.drain()

    def _rescore(self, tolerance: float) -> int:
        """Store each non-frozen item's current decay score where it moved by more than ``tolerance``;
        returns how many moved."""
        now = self.clock()
        moved = 0
        for item in self.active():
            score = round(decay_score(item, self.policy, now), 6)
            if not item.is_frozen and abs(score - item.decay_score) > tolerance:
                item.decay_score = score
                self._touch(item)
                moved += 1
        return moved

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
