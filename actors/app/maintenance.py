"""The batch jobs' operations on one user's service, mixed into ``UserMemoryService``: a consolidation pass
and restoring chosen archived items. Whoever calls them — the user's actor, or a job holding the user's
lease — gets the gate's decision committed in one transaction and the vector index synced for the items
whose index row changed (a decay refresh alone does not touch the index).
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.adapters.tracing import span
from actors.core.errors import NotFound
from actors.core.memory import GateChanges, MemoryItem

RESTORE_ACTOR = "job:restore"


class ServiceMaintenance:
    """Relies on the host's ``engine``, ``store``, ``tenant_id``, ``user_id`` and ``_commit``."""

    def consolidate(self) -> dict[str, int]:
        """One consolidation pass (``actors.core.gate.maintenance``); returns what it did, by step."""
        with span("gate.consolidate", items=len(self.engine.items)) as current:
            placed = {i.memory_id: (i.layer, i.state) for i in self.engine.active()}
            counts, changes = self.engine.consolidate()
            current.set_attribute("changes", len(changes.upserted))
        self._commit(changes, index_items=_moved(changes, placed))
        return counts.as_dict()

    def restore_archived(
        self, memory_ids: Sequence[str], reason: str, actor: str = RESTORE_ACTOR
    ) -> dict[str, list[str]]:
        """Bring these archived items back to long-term while it has room and they are within the retention
        window (in the order given: best first); ids that are not this user's archived items are skipped."""
        found: list[MemoryItem] = []
        missing: list[str] = []
        for memory_id in memory_ids:
            try:
                found.append(self.engine.items.get(memory_id) or self.store.get_item(
                    self.tenant_id, self.user_id, memory_id))
            except NotFound:
                missing.append(memory_id)
        with span("gate.restore_archived", candidates=len(found)):
            placed = {i.memory_id: (i.layer, i.state) for i in found}
            changes, restored, skipped = self.engine.restore_archived(found, actor=actor, reason=reason)
        self._commit(changes, index_items=_moved(changes, placed))
        return {"restored": restored, "skipped": skipped + missing}


def _moved(changes: GateChanges, placed: dict) -> list[MemoryItem]:
    """Upserted items whose index row (layer, state, content) differs from before: new ones included."""
    return [
        item
        for item in changes.upserted.values()
        if placed.get(item.memory_id) != (item.layer, item.state)
    ]
