"""The ledger of one user's memory: the loaded items, the change set in progress (``GateChanges``: items to
upsert, audit events, alerts) and the open alerts. It is the one place that records a change: every state,
layer or content change a gate makes goes through ``transition``/``move``/``supersede``/``event``, which
write the audit event and mark the item for upsert. The gates (``bounded``, ``frozen``) and the engine that
composes them (``engine``) hold the same ledger; none of them keeps state of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from actors.core.memory import Alert, AuditEvent, GateChanges, MemoryItem, utcnow
from schemas.enums import AlertKind, AlertStatus, Layer, State
from schemas.errors import InvalidTransition, NotFound
from schemas.settings import GatePolicy


@dataclass(frozen=True, slots=True)
class Outcome:
    memory_id: str
    action: str  # created | confirmed | conflict | corrected | ignored
    state: State
    layer: Layer
    detail: str = ""

    @classmethod
    def of(cls, item: MemoryItem, action: str, detail: str = "") -> Outcome:
        return cls(item.memory_id, action, item.state, item.layer, detail)


class Ledger:
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

    def forget_inactive(self) -> None:
        """Let go of the items that left active memory (archived, superseded, expired): what a user's memory
        is loaded with holds none of them (``Memories.load_active``), and a long residency kept
        thousands, which every scan of the items walked."""
        for memory_id in [m for m, item in self.items.items() if not item.is_active]:
            del self.items[memory_id]

    def get(self, memory_id: str) -> MemoryItem:
        item = self.items.get(memory_id)
        if item is None:
            raise NotFound(f"memory {memory_id} not found")
        return item

    def frozen_challenged_by(self, item: MemoryItem) -> list[MemoryItem]:
        """The frozen items a statement stands against: until reviewed, it stays pending however often
        it is restated."""
        linked = (self.items.get(m) for m in item.conflicts_with)
        return [f for f in linked if f is not None and f.is_frozen]

    def require_active(self, memory_id: str) -> MemoryItem:
        item = self.get(memory_id)
        if not item.is_active:
            raise InvalidTransition(f"memory {memory_id} is {item.state}")
        return item

    def supersede(self, old: MemoryItem, new: MemoryItem, actor: str, action: str = "supersede") -> None:
        before = old.snapshot()
        old.state = State.SUPERSEDED
        old.superseded_by = new.memory_id
        old.updated_at = self.clock()
        # a replaced value hands on the values it replaced: how often a fact was corrected stays countable
        inherited = old.supersedes if action == "supersede" and old.slot == new.slot else ()
        new.supersedes = union(new.supersedes, [*inherited, old.memory_id])
        self.touch(new)
        self.event(old, action, f"superseded by {new.memory_id}", before, actor)

    def move(self, item: MemoryItem, layer: Layer, reason: str, actor: str) -> None:
        before = item.snapshot()
        item.layer = layer
        item.updated_at = self.clock()
        self.event(item, "promote", reason, before, actor)

    def transition(
        self,
        item: MemoryItem,
        state: State,
        action: str,
        reason: str,
        actor: str,
        dialog_ids: Sequence[str] = (),
    ) -> None:
        before = item.snapshot()
        item.state = state
        item.updated_at = self.clock()
        self.event(item, action, reason, before, actor, dialog_ids)

    def event(
        self,
        item: MemoryItem,
        action: str,
        reason: str,
        before: dict[str, Any] | None,
        actor: str,
        dialog_ids: Sequence[str] = (),
    ) -> None:
        self.touch(item)
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

    def alert(
        self, kind: AlertKind, memory_id: str | None, message: str, related: list[str], once: bool = False
    ) -> None:
        if once and any(a.kind is kind and a.memory_id == memory_id for a in self._open_alerts):
            return
        alert = Alert(self.tenant_id, self.user_id, kind, memory_id, message, related, AlertStatus.OPEN)
        self._open_alerts.append(alert)
        self._changes.alerts.append(alert)

    def is_open(self, kind: AlertKind, related: list[str]) -> bool:
        """Whether an alert of ``kind`` about ``related`` is open (one per tier for a capacity warning)."""
        return any(a.kind is kind and a.related_ids == related for a in self._open_alerts)

    def resolve_alert(self, alert: Alert, *, reason: str, actor: str) -> None:
        """The open ``alert`` closed by a person: no longer open here, stored resolved, audited on its
        memory (so the item's trail shows who closed it and why)."""
        resolved = replace(alert, status=AlertStatus.RESOLVED)
        self._open_alerts = [a for a in self._open_alerts if a.alert_id != alert.alert_id]
        self._changes.alerts.append(resolved)
        before = {"alert_id": alert.alert_id, "kind": alert.kind.value, "status": alert.status.value}
        self._changes.events.append(
            AuditEvent(
                tenant_id=self.tenant_id,
                user_id=self.user_id,
                memory_id=alert.memory_id,
                action="resolve_alert",
                actor=actor,
                reason=reason,
                before=before,
                after={**before, "status": resolved.status.value},
                at=self.clock(),
            )
        )

    def seed_alerts(self, alerts: Iterable[Alert]) -> None:
        """Open alerts already stored, so ``once`` alerts are not raised again after a reload."""
        self._open_alerts.extend(a for a in alerts if a.status is AlertStatus.OPEN)

    def touch(self, item: MemoryItem) -> None:
        self._changes.upserted[item.memory_id] = item

    def drain(self) -> GateChanges:
        """Hand over what changed since the last drain (after a refused operation: its alerts)."""
        changes, self._changes = self._changes, GateChanges()
        return changes

    def add(self, item: MemoryItem) -> None:
        """A new item (a write, a summary, a history row); its ``create`` event is the caller's to record."""
        self.items[item.memory_id] = item


def union(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    """Ordered union without duplicates."""
    seen = dict.fromkeys(first)
    seen.update(dict.fromkeys(second))
    return tuple(seen)


def without(ids: tuple[str, ...], removed: str) -> tuple[str, ...]:
    """The ids but ``removed``, in order."""
    return tuple(i for i in ids if i != removed)
