"""The batch jobs' operations on one user's service: a consolidation pass and restoring chosen archived items.
``UserMemoryService`` holds one ``ServiceMaintenance`` and hands it three narrow things: the user's current
gate engine, a reader of a stored item, and the commit of its unit of work (``actors.app.unit_of_work``).
Whoever calls them — the user's actor, or a job holding the user's lease — gets the gate's decision committed
in one transaction and the vector index synced for the items whose index row changed (a decay refresh alone
does not touch the index).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from actors.adapters.tracing import span
from actors.core.gate.engine import GateEngine
from actors.core.memory import GateChanges, MemoryItem
from schemas.enums import Layer, State
from schemas.errors import NotFound

RESTORE_ACTOR = "job:restore"


class MaintenanceOperations(Protocol):
    """What a batch job runs on one user's service (``UserMemoryService.maintenance``) while it holds the
    user's lease (``jobs.common.UserRunner``)."""

    def consolidate(self) -> dict[str, int]:
        """One consolidation pass; what it did, by step."""
        ...

    def restore_archived(self, memory_ids: Sequence[str], reason: str) -> dict[str, list[str]]:
        """Bring these archived items back (best first) while long-term has room; restored and skipped ids."""
        ...


class Commit(Protocol):
    def __call__(self, changes: GateChanges, *, index_items: Iterable[MemoryItem] | None = None) -> None: ...


class ServiceMaintenance:
    def __init__(
        self,
        engine: Callable[[], GateEngine],
        stored_item: Callable[[str], MemoryItem],
        commit: Commit,
    ):
        """``engine``: the user's engine now (the service replaces it on a reload); ``stored_item``: one of
        the user's items from SQL (``NotFound`` otherwise); ``commit``: the service's fenced commit."""
        self._engine = engine
        self._stored_item = stored_item
        self._commit = commit

    def consolidate(self) -> dict[str, int]:
        """One consolidation pass (``actors.core.gate.passes``); returns what it did, by step."""
        engine = self._engine()
        with span("gate.consolidate", items=len(engine.items)) as current:
            placed = {i.memory_id: (i.layer, i.state) for i in engine.active()}
            counts, changes = engine.consolidate()
            current.set_attribute("changes", len(changes.upserted))
        self._commit(changes, index_items=_moved(changes, placed))
        return counts.as_dict()

    def restore_archived(
        self, memory_ids: Sequence[str], reason: str, actor: str = RESTORE_ACTOR
    ) -> dict[str, list[str]]:
        """Bring these archived items back to long-term while it has room and they are within the retention
        window (in the order given: best first); ids that are not this user's archived items are skipped."""
        engine = self._engine()
        found: list[MemoryItem] = []
        missing: list[str] = []
        for memory_id in memory_ids:
            try:
                found.append(engine.items.get(memory_id) or self._stored_item(memory_id))
            except NotFound:
                missing.append(memory_id)
        with span("gate.restore_archived", candidates=len(found)):
            placed = {i.memory_id: (i.layer, i.state) for i in found}
            changes, restored, skipped = engine.restore_archived(found, actor=actor, reason=reason)
        self._commit(changes, index_items=_moved(changes, placed))
        return {"restored": restored, "skipped": skipped + missing}


def _moved(changes: GateChanges, placed: dict[str, tuple[Layer, State]]) -> list[MemoryItem]:
    """Upserted items whose index row (layer, state, content) differs from before: new ones included."""
    return [
        item for item in changes.upserted.values() if placed.get(item.memory_id) != (item.layer, item.state)
    ]
