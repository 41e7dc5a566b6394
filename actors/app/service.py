"""One user's memory service: the user's parts wired together, and the resource managers over them.

Plain Python, no Ray import: a host (``actors.runtime.host``) runs one instance per resident (tenant, user)
and serializes the user's calls; a batch job runs one while it holds the user's lease. The parts, each with
one job:

* ``work`` (``actors.app.unit_of_work.UnitOfWork``): the gate engine and every commit. Order of every
  mutation: gate decision in memory → one SQL transaction, fenced by the host's claim on the user and
  carrying the vector-index outbox rows (a write is acknowledged only after it commits) →
  ``on_index_change`` tells the host there is outbox work. Recall heat is batched there and reaches SQL
  with the next commit or ``flush_access``.
* ``recall_state`` (``actors.app.recall_state.RecallState``): what recall keeps between calls — the active
  items' matrix and keyword postings, the newest part of the archive (the rest of a larger archive reached
  through the vector index only when a query needs it), recent query vectors — kept in step by the unit of
  work's commit events.
* ``said_before``: each recent session's last turns, the context of the next turn's memories.

The commands (``actors.app.commands``) call the managers of ``actors.app.resources``: ``writes``,
``recalls``, ``memories``, ``alerts``, ``sessions``; the batch jobs call ``maintenance``
(``actors.app.maintenance``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from actors.adapters.embedding import Embedder
from actors.app.maintenance import ServiceMaintenance
from actors.app.recall_state import RecallState, held_bytes
from actors.app.resources import Alerts, Memories, Recalls, Sessions, Writes
from actors.app.unit_of_work import UnitOfWork
from actors.app.write import ClauseReader
from actors.core.extraction import Extractor, make_extractor
from actors.core.memory import utcnow
from actors.core.said_before import SessionTurns
from actors.store.sql.ownership import Fence
from actors.store.sql.store import MemoryStore
from actors.store.vectors.index import VectorIndex
from schemas.settings import GatePolicy

#: rough bytes of an active item held in memory: its record, texts, keyword postings and entity-graph share
#: (calibrated with tracemalloc on seeded users: docs/benchmarks.md, tests/unit/app/test_resident_memory.py)
ACTIVE_ITEM_BYTES = 1400


class UserMemoryService:
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        *,
        store: MemoryStore,
        embedder: Embedder,
        policy: GatePolicy,
        extractor: Extractor | None = None,
        reader: Callable[[], ClauseReader | None] = lambda: None,
        clock: Callable[[], datetime] = utcnow,
        fence: Fence | None = None,
        on_index_change: Callable[[], None] = lambda: None,
        vector_index: Callable[[], VectorIndex] | None = None,
    ):
        """``fence``: the host's (or job's) claim on the user; every commit is refused once it is stale.
        ``on_index_change``: called after a commit that left work in the vector-index outbox.
        ``vector_index``: the index (connected on first call) that recall searches for the part of a large
        archive beyond ``policy.archive_memory_items``; without it recall reads only what memory holds.
        ``extractor``: the host passes the one its settings name; ``reader``: the clause reader of a write's
        candidates (the host's, loaded on first use), or None."""
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.said_before = SessionTurns()
        self.recall_state = RecallState(
            tenant_id, user_id, store=store, embedder=embedder, policy=policy, vector_index=vector_index
        )
        self.work = UnitOfWork(
            tenant_id,
            user_id,
            store=store,
            embedder=embedder,
            policy=policy,
            clock=clock,
            fence=fence,
            known=self.recall_state,
            listeners=(self.recall_state.on_commit,),
            on_index_change=on_index_change,
        )
        self.writes = Writes(
            self.work,
            self.recall_state,
            self.said_before,
            embedder=embedder,
            extractor=extractor or make_extractor(),
            reader=reader,
            clock=clock,
        )
        self.recalls = Recalls(self.work, self.recall_state, policy, clock)
        self.memories = Memories(self.work, self.said_before)
        self.alerts = Alerts(self.work)
        self.sessions = Sessions(self.work, policy, clock)
        work = self.work
        self.maintenance = ServiceMaintenance(
            engine=lambda: work.engine,
            stored_item=lambda memory_id: store.memories.get(tenant_id, user_id, memory_id),
            commit=work.commit,
        )

    @property
    def fence(self) -> Fence | None:
        """The claim on the user the service commits under (the host checks it is still current)."""
        return self.work.fence

    @property
    def resident_bytes(self) -> int:
        """Rough bytes this user holds in memory: per active item its record, texts, keyword postings and
        entity-graph share, and its context; what the recall state holds; the turns kept as context."""
        active = held_bytes(self.work.engine.items.values(), ACTIVE_ITEM_BYTES)
        return active + self.recall_state.nbytes + self.said_before.nbytes

    @property
    def has_pending_access(self) -> bool:
        return self.work.has_pending_access

    def flush_access(self) -> None:
        """Write the batched recall heat now (the host does so every few seconds and before eviction)."""
        self.work.flush_access()
