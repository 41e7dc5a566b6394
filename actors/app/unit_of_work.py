"""What one call changes of a user's memory, committed as one unit: the user's gate engine (the decided
state in memory), the fenced SQL transaction that stores its change set with the audit events, alerts and
the vector-index outbox rows, and the word to the host that the outbox has work (``on_index_change``).

``UnitOfWork`` is the one writer of a user's rows for a service: a gate change set (``commit``), an import
(``add``), a forgetting (``forget``) and an erasure (``erase``). Recall heat is batched here and joins the
next commit (or ``flush_access``). After each commit it tells its listeners what changed, as a value
(``Stored``, ``Loaded``, ``Erased``): what recall keeps (``actors.app.recall_state``) reacts to that value,
so nothing reads a flag left on an object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from actors.adapters.embedding import Embedder
from actors.adapters.tracing import span
from actors.app.pipeline import embed_into
from actors.core.forgetting import Forgetting, plan_forgetting
from actors.core.gate.compression import summary_vector
from actors.core.gate.engine import GateEngine
from actors.core.memory import GateChanges, MemoryItem
from actors.store.sql.ownership import Fence
from actors.store.sql.store import MemoryStore
from actors.store.sql.transfer import ImportBatch, ImportCounts
from schemas.enums import AlertStatus, State
from schemas.errors import HermesError
from schemas.settings import GatePolicy


@dataclass(frozen=True, slots=True)
class Stored:
    """A commit stored these items as the engine holds them: memory and SQL agree on them."""

    items: tuple[MemoryItem, ...]
    engine: GateEngine


@dataclass(frozen=True, slots=True)
class Loaded:
    """The user's memory read anew from SQL (activation, or a reload after a change made outside the
    engine or a commit that failed): what was derived from the engine before is gone."""

    engine: GateEngine
    #: the loaded items, with the vectors SQL stores for them
    items: tuple[MemoryItem, ...]


@dataclass(frozen=True, slots=True)
class Erased:
    """The user's whole memory was erased: the engine is empty."""

    engine: GateEngine


#: what a commit tells its listeners
CommitEvent = Stored | Loaded | Erased
Listener = Callable[[CommitEvent], None]


class KnownVectors(Protocol):
    """The vectors memory holds for the user's items (``RecallState``): SQL holds them too."""

    def holds(self, item: MemoryItem) -> bool: ...

    def vector_of(self, item: MemoryItem) -> np.ndarray | None: ...


class UnitOfWork:
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        *,
        store: MemoryStore,
        embedder: Embedder,
        policy: GatePolicy,
        clock: Callable[[], datetime],
        fence: Fence | None,
        known: KnownVectors,
        listeners: Sequence[Listener],
        on_index_change: Callable[[], None],
    ):
        """``fence``: the host's (or job's) claim on the user; every commit is refused once it is stale.
        ``known``: where a committed item without bytes may have its vector already; ``listeners``: told
        what every commit changed, the first load included; ``on_index_change``: called after a commit
        that left work in the vector-index outbox."""
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.store = store
        self.embedder = embedder
        self.policy = policy
        self.clock = clock
        self.fence = fence
        self._known = known
        self._listeners = tuple(listeners)
        self._on_index_change = on_index_change
        #: recall heat not yet in SQL: committed with the next change, or by ``flush_access``
        self._pending_access = GateChanges()
        self.engine = self._loaded()

    def _loaded(self) -> GateEngine:
        """The user's engine read from SQL; the heat owed to the old one goes with it."""
        with span("sql.load_active"):
            items = self.store.memories.load_active(self.tenant_id, self.user_id)
            alerts = self.store.alerts.find(self.tenant_id, self.user_id, AlertStatus.OPEN)
        engine = GateEngine(self.tenant_id, self.user_id, self.policy, items, clock=self.clock)
        engine.seed_alerts(alerts)
        self._pending_access = GateChanges()
        self._tell(Loaded(engine, tuple(items)))
        return engine

    def reload(self) -> None:
        """Read the user's memory from SQL again: a change was made there that the engine did not make."""
        self.engine = self._loaded()

    def _tell(self, event: CommitEvent) -> None:
        for listener in self._listeners:
            listener(event)

    # ------------------------------------------------------------------------------ gate changes

    def commit(
        self,
        changes: GateChanges,
        *,
        index_items: Iterable[MemoryItem] | None = None,
        request_id: str | None = None,
        result: dict[str, Any] | None = None,
    ) -> None:
        """Commit the change set under the fence with any pending recall heat, and ``result`` (the answer)
        under ``request_id``; stage ``index_items`` (default: every upserted item) in the vector-index
        outbox. On failure the engine is reloaded (its decision was not stored) and the error raised."""
        changed = list(changes.upserted.values())
        index_ids = [i.memory_id for i in (changed if index_items is None else index_items)]
        if self._pending_access:
            changes.merge(self._pending_access)
            self._pending_access = GateChanges()
        if not changes and request_id is None:
            return
        self._fill_missing_embeddings(changes.upserted.values())
        with span("sql.commit", items=len(changes.upserted), events=len(changes.events)):
            try:
                self.store.memories.commit(
                    changes,
                    tenant_id=self.tenant_id,
                    user_id=self.user_id,
                    fence=self.fence,
                    index_ids=index_ids,
                    request_id=request_id,
                    result=result,
                )
            except HermesError:
                self.reload()
                raise
        if changed:
            self._tell(Stored(tuple(changed), self.engine))
        if index_ids:
            self._on_index_change()

    def refreeze_due(self) -> None:
        """An unfreeze window that closed with no new value: the item is frozen again before it is read."""
        changes = self.engine.refreeze_due()
        if changes:
            self.commit(changes)

    def record_access(self, memory_ids: Iterable[str]) -> None:
        """Recall heat of these items: batched, it changes no layer or state and nothing for the index."""
        self._pending_access.merge(self.engine.record_access(memory_ids))

    @property
    def has_pending_access(self) -> bool:
        return bool(self._pending_access)

    def flush_access(self) -> None:
        """Write the batched recall heat now (the host does so every few seconds and before eviction)."""
        if self._pending_access:
            self.commit(GateChanges(), index_items=())

    def _fill_missing_embeddings(self, items: Iterable[MemoryItem]) -> None:
        """An item to store whose vector memory does not hold gets one: a summary's from its sources',
        else embedded now."""
        missing = [
            i
            for i in items
            if i.embedding is None and i.state is not State.DELETED and not self._known.holds(i)
        ]
        for item in missing:
            item.embedding = summary_vector(item, self._source_vector)
        embed_into(self.embedder, [i for i in missing if i.embedding is None])

    def _source_vector(self, memory_id: str) -> np.ndarray | None:
        item = self.engine.items.get(memory_id)
        return None if item is None else self._known.vector_of(item)

    # ------------------------------------------------------------------------------ changes made in SQL

    def add(self, batch: ImportBatch) -> ImportCounts:
        """Add an import's records in one commit under the fence, and read the user's memory again."""
        self.flush_access()
        with span("sql.import", items=len(batch.items), events=len(batch.events)):
            counts = self.store.transfer.add(self.tenant_id, self.user_id, batch, fence=self.fence)
        self.reload()
        if counts.added:
            self._on_index_change()
        return counts

    def forget(self, memory_id: str, *, reason: str, actor: str) -> tuple[Forgetting, list[str]]:
        """Forget the item everywhere (``actors.core.forgetting``): what went, and the contents of the items
        that went (their words leave the turns kept as context too). Every structure derived from the items
        is rebuilt from what SQL then holds."""
        self.flush_access()  # heat of the item is moot, of the others still owed
        everything = {
            i.memory_id: i for i in self.store.memories.page(self.tenant_id, self.user_id, limit=10**9)
        }
        if memory_id not in everything:
            self.store.memories.get(self.tenant_id, self.user_id, memory_id)  # NotFound
        plan = plan_forgetting(memory_id, everything)
        self.store.erasure.forget_item(
            self.tenant_id,
            self.user_id,
            memory_id,
            reason=reason,
            actor=actor,
            fence=self.fence,
            also=plan.memory_ids[1:],
            rewritten=plan.rewritten,
        )
        self.reload()
        self._on_index_change()
        return plan, [everything[m].content for m in plan.memory_ids if m in everything]

    def erase(self, reason: str) -> int:
        """Remove everything stored about the user; how many items went."""
        removed = self.store.erasure.erase_user(self.tenant_id, self.user_id, reason=reason, fence=self.fence)
        self.engine = GateEngine(self.tenant_id, self.user_id, self.policy, clock=self.clock)
        self._pending_access = GateChanges()
        self._tell(Erased(self.engine))
        self._on_index_change()
        return removed
