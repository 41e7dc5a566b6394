"""One user's memory service: the gate engine wired to the SQL store, the embedder and the extractor.

Plain Python, no Ray import: a host (``actors.runtime.host``) runs one instance per resident (tenant, user)
and serializes the user's calls. Order of every mutation: gate decision in memory → one SQL transaction,
fenced by the host's claim on the user and carrying the vector-index outbox rows (the write is acknowledged
only after it commits) → ``on_index_change`` tells the host there is outbox work. Recall reads only memory:
the active items' matrix and keyword postings (``actors.core.recall.view``) and the newest part of the
archive, and reaches the rest of a larger archive through the vector index (``actors.app.archive``) only
when a query needs it; recall heat is batched and reaches SQL with the next commit or ``flush_access``.
"""

from __future__ import annotations

import copy
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast, overload

import numpy as np

from actors.adapters.embedding import Embedder
from actors.adapters.tracing import span
from actors.app.archive import IndexedArchive
from actors.app.maintenance import RESTORE_ACTOR, ServiceMaintenance
from actors.app.transfer import batch_of
from actors.app.write import (
    ClauseReader,
    Extraction,
    PreparedWrite,
    TokenStates,
    extract,
    not_kept_detail,
    read,
    read_into,
    with_context,
)
from actors.core.context import challenge_note, render_session_context, slot_template
from actors.core.extraction import Dropped, Extractor, make_extractor
from actors.core.forgetting import plan_forgetting
from actors.core.gate.compression import summary_vector
from actors.core.gate.engine import GateEngine, Outcome
from actors.core.memory import Alert, Candidate, GateChanges, MemoryItem, content_hash, utcnow
from actors.core.profile import ProfileBuilder
from actors.core.recall.engine import Hit, RecallEngine
from actors.core.recall.vectors import VectorRows, item_vector, vector_bytes
from actors.core.recall.view import ActiveKeywords, ActiveView, ArchiveView
from actors.core.records import CohortFeature
from actors.core.said_before import SessionTurns
from actors.core.slots import is_style
from actors.core.style import canonical_style
from actors.language.reader.reader import StatesEmbedder
from actors.language.redaction import (
    Neutralized,
    addressed_to_assistant,
    neutralize_injection,
    plain_value,
)
from actors.language.safety.secrets import redact
from actors.store.sql.ownership import Fence
from actors.store.sql.store import MemoryStore
from actors.store.vectors.index import VectorIndex
from schemas import api
from schemas.api_tenant import ResolveAlertRequest
from schemas.enums import AlertStatus, Layer, Polarity, State
from schemas.errors import ConcurrentUpdate, GateRejected, HermesError, InvalidInput, NotFound
from schemas.settings import GatePolicy
from schemas.transfer import ImportRequest, ImportResult

log = logging.getLogger(__name__)
#: recent query vectors kept per user: an agent often asks the same thing again within a session
QUERY_CACHE_SIZE = 32


def cleaned_text(text: str) -> Neutralized:
    """Caller-written text as it may be stored: secrets and identifiers redacted, invisible characters
    dropped, instruction-like spans flagged (the extractor does the same for conversation turns)."""
    return neutralize_injection(redact(text).text)


@overload
def as_vector(blob: bytes) -> np.ndarray: ...


@overload
def as_vector(blob: bytes | None) -> np.ndarray | None: ...


def as_vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


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
        archive beyond ``policy.archive_memory_items``; without it recall reads only what memory holds."""
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.store = store
        self.embedder = embedder
        self.policy = policy
        self.extractor = extractor or make_extractor()  # the host passes the one its settings name
        #: the clause reader of a write's candidates (the host's, loaded on first use), or None
        self.reader = reader
        self.clock = clock
        self.fence = fence
        self._on_index_change = on_index_change
        self._deep_archive = (
            None if vector_index is None else IndexedArchive(tenant_id, user_id, store, vector_index)
        )
        #: recall heat not yet in SQL: committed with the next change, or by ``flush_access``
        self._pending_access = GateChanges()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._view: ActiveView | None = None
        self._keywords = ActiveKeywords()
        #: whether this user has recalled since activation (then a change's rebuild is worth doing early)
        self._recalls = False
        self._archive: ArchiveView | None = None
        #: each recent session's last turns, the context of the next turn's memories (memory only)
        self._said_before = SessionTurns()
        self.engine = self._load()
        self.maintenance = ServiceMaintenance(
            engine=lambda: self.engine,
            stored_item=lambda memory_id: self.store.memories.get(self.tenant_id, self.user_id, memory_id),
            commit=self._commit,
        )

    def _load(self) -> GateEngine:
        with span("sql.load_active"):
            items = self.store.memories.load_active(self.tenant_id, self.user_id)
            alerts = self.store.alerts.find(self.tenant_id, self.user_id, AlertStatus.OPEN)
        engine = GateEngine(self.tenant_id, self.user_id, self.policy, items, clock=self.clock)
        engine.seed_alerts(alerts)
        self._forget_derived()
        self._vectors.hold(items)  # stored: their vectors are in SQL, and from now on only in these rows
        return engine

    # ------------------------------------------------------- batch jobs (maintenance.MaintenanceOperations)

    def consolidate(self) -> dict[str, int]:
        """One consolidation pass; what it did, by step (``actors.app.maintenance``)."""
        return self.maintenance.consolidate()

    def restore_archived(
        self, memory_ids: Sequence[str], reason: str, actor: str = RESTORE_ACTOR
    ) -> dict[str, list[str]]:
        """Bring these archived items back to long-term while it has room (``actors.app.maintenance``)."""
        return self.maintenance.restore_archived(memory_ids, reason, actor)

    # ------------------------------------------------------------------------------------ import

    def import_records(self, request: ImportRequest) -> ImportResult:
        """Add this user's exported records that are not here yet (``actors.app.transfer``), in one commit
        under the fence; the memories are embedded again and the user's memory reloaded."""
        batch, refused = batch_of(self.tenant_id, self.user_id, request.records)
        to_embed = [item for item in batch.items if item.state is not State.DELETED]
        for item, vector in zip(to_embed, self._embed([i.content for i in to_embed]), strict=True):
            item.embedding = vector_bytes(vector)
        self.flush_access()
        with span("sql.import", items=len(batch.items), events=len(batch.events)):
            counts = self.store.transfer.add(self.tenant_id, self.user_id, batch, fence=self.fence)
        self.engine = self._load()
        if counts.added:
            self._on_index_change()
        return ImportResult(
            user_id=self.user_id,
            memories_added=counts.memories_added,
            memories_present=counts.memories_present,
            memories_forgotten=counts.memories_forgotten,
            memories_refused=refused,
            events_added=counts.events_added,
            alerts_added=counts.alerts_added,
            tombstones_added=counts.tombstones_added,
        )

    def _forget_derived(self) -> None:
        """A new engine: the heat and recall structures derived from the old one's items go."""
        self._pending_access = GateChanges()
        self._view = self._archive = None
        self._keywords = ActiveKeywords()
        self._vectors = VectorRows(self.embedder.dim)

    def active_view(self) -> ActiveView:
        """The active items and their recall structures; rebuilt only after the items changed."""
        if self._view is None:
            active = self.engine.active()
            self._vectors.keep_only(self.engine.items)  # what the engine still holds keeps its exact row
            self._view = ActiveView(active, self.embedder.dim, self._keywords, self._vectors)
        return self._view

    def archive_view(self) -> ArchiveView:
        """The archive for recall: its newest ``archive_memory_items`` read from SQL on first need and kept in
        step afterwards, the rest through the vector index."""
        if self._archive is None:
            with span("sql.archived"):
                self._archive = ArchiveView(
                    self.newest_archived,
                    self.embedder.dim,
                    self.policy.archive_memory_items,
                    deep=self._deep_archive,
                    known=self._vector_of,
                )
        return self._archive

    def _vector_of(self, item: MemoryItem) -> np.ndarray | None:
        """The item's vector: its own bytes, else the rows that hold it for its current content."""
        carried = item_vector(item, self.embedder.dim)
        if carried is not None:
            return carried
        for rows in self._held_by():
            if rows.holds(item):
                return rows.vector(item.memory_id)
        return None

    def _held_by(self) -> list[VectorRows]:
        return [self._vectors] if self._archive is None else [self._vectors, self._archive.vectors]

    def _holds(self, item: MemoryItem) -> bool:
        """Whether memory holds the stored vector of the item's content (then SQL has it too)."""
        return any(rows.holds(item) for rows in self._held_by())

    def _changed(self, items: Iterable[MemoryItem] = (), forgotten: Iterable[str] = ()) -> None:
        """Items changed in memory (and SQL): what recall derived from them is stale."""
        self._view = None
        items = list(items)
        if self._archive is not None:
            self._archive.apply(items, forgotten)
        self._vectors.hold(item for item in items if item.memory_id in self.engine.items)

    @property
    def resident_bytes(self) -> int:
        """Rough bytes this user holds in memory: the vector rows, and per item its record, texts, keyword
        postings and entity-graph share (calibrated with tracemalloc on seeded users: docs/benchmarks.md,
        tests/unit/app/test_resident_memory.py)."""
        per_active, per_archived = 1400, 1350
        vectors = sum(rows.nbytes for rows in self._held_by())
        archived = 0 if self._archive is None else len(self._archive.items) * per_archived
        held = [*self.engine.items.values(), *([] if self._archive is None else self._archive.items.values())]
        # a context is the one text whose size varies most (none to two turns): its string, its tokens and
        # its keyword postings take about 4 bytes a character (tracemalloc, items of two 150-character turns)
        contexts = 4 * sum(len(item.context) for item in held if item.context) + self._said_before.nbytes
        return vectors + len(self.engine.items) * per_active + archived + contexts

    # ------------------------------------------------------------------ writes

    def write_turns(self, request: api.WriteTurnsRequest, request_id: str | None = None) -> api.WriteResult:
        """The whole chain here, in one call (``actors.app.write``): the turns read now, embedded, written."""
        return self.write(self.prepared(self.extract(request)), request_id)

    def extract(self, request: api.WriteTurnsRequest) -> Extraction:
        """The request's turns read with this service's extractor, a turn without a time said now."""
        with span("extract", turns=len(request.turns)):
            return extract(self.extractor, request, self.clock())

    def prepared(
        self, extraction: Extraction, ahead: np.ndarray | None = None, states: TokenStates | None = None
    ) -> PreparedWrite:
        """The extraction with its candidates' vectors, and their token states when the clause reader reads
        them: ``ahead`` (and ``states``) when the host embedded them while the call waited, else embedded
        now, vectors and states in one forward pass."""
        passages = extraction.passages
        reader = self.reader() if passages else None
        with_states = self.embedder if isinstance(self.embedder, StatesEmbedder) else None
        wanted = reader is not None and reader.reads_states and with_states is not None
        if wanted and states is None and with_states is not None:
            with span("embedder.embed_passages_with_states", texts=len(passages)):
                vectors, token_states, spans = with_states.embed_passages_with_states(passages)
            states = tuple(zip(token_states, spans, strict=True))
            ahead = vectors
        vectors = self._embed(passages) if ahead is None else ahead
        return PreparedWrite(extraction, np.asarray(vectors, dtype=np.float32), states if wanted else None)

    def write(self, prepared: PreparedWrite, request_id: str | None = None) -> api.WriteResult:
        """Read, decide and commit a prepared write under ``request_id``."""
        # what earlier writes archived or superseded is in SQL: memory goes back to what a load holds
        self.engine.forget_inactive()
        extraction = prepared.extraction
        candidates = with_context(self._read(prepared), extraction, self._said_before)
        return self._apply(candidates, prepared.vectors, extraction.ignored, request_id, extraction.not_kept)

    def preview(self, prepared: PreparedWrite) -> api.TurnsPreview:
        """What ``write`` would do now, decided on a fork of the user's memory: nothing is committed, and
        the user's memory (with what recall derived from it) is left as it was."""
        forked, rows = copy.deepcopy(self.engine), copy.deepcopy(self._vectors)
        candidates = with_context(self._read(prepared), prepared.extraction, self._said_before.copy())
        outcomes, changes = self._decide(forked, candidates, prepared.vectors, rows)
        return api.TurnsPreview(
            user_id=self.user_id,
            outcomes=[
                api.PreviewOutcome(
                    **self._outcome(o).model_dump(),
                    memory=api.MemoryOut.model_validate(forked.get(o.memory_id)),
                )
                for o in outcomes
            ],
            alerts=[api.AlertOut.model_validate(a) for a in changes.alerts],
            ignored_turns=prepared.extraction.ignored,
        )

    def _read(self, prepared: PreparedWrite) -> tuple[Candidate, ...]:
        """The candidates as the clause reader reads them, on the vectors already computed for the index."""
        candidates = prepared.extraction.candidates
        reader = self.reader() if candidates else None
        if reader is None:
            return candidates
        with span("reader.read", candidates=len(candidates)):
            return read_into(candidates, read(prepared, reader))

    def write_memory(self, request: api.WriteMemoryRequest, request_id: str | None = None) -> api.WriteResult:
        cleaned = cleaned_text(request.content)
        value = None if request.value is None else cleaned_text(request.value)
        if cleaned.flagged or (value is not None and value.flagged):
            return self._result([], 1, [])
        content, slot_value = cleaned.text, None if value is None else value.text
        refused = _refusal(request.slot, slot_value, request.polarity, content)
        if isinstance(refused, str):
            dialog_id = request.dialog_ids[0] if request.dialog_ids else ""
            return self._result([], 1, [], [api.NotKept(dialog_id=dialog_id, detail=refused)])
        if refused is not None:  # a style value or an order's slot: stored as the service's template
            content, slot_value = refused
        cand = Candidate(
            content=content,
            kind=request.kind,
            session_id=request.session_id,
            dialog_ids=list(request.dialog_ids),
            polarity=request.polarity,
            slot=request.slot,
            value=slot_value,
            importance=request.importance,
            confidence=request.confidence,
            source=request.source,
            forced=request.remember,
            write_score=max(request.importance, 0.9 if request.remember else 0.0),
        )
        prepared = self.prepared(Extraction(candidates=(cand,)))
        return self._apply(self._read(prepared), prepared.vectors, 0, request_id)

    def _apply(
        self,
        candidates: Sequence[Candidate],
        vectors: np.ndarray,
        ignored: int,
        request_id: str | None,
        not_kept: Sequence[api.NotKept] = (),
    ) -> api.WriteResult:
        """Decide and commit the candidates under ``request_id``. A request already applied is not read for
        first: its id's row makes the commit fail (every write would otherwise pay a SQL read for the rare
        resend), and the answer is then the one stored with it; nothing of the second decision lands."""
        for attempt in (1, 2):
            try:
                outcomes, changes = self._decide(self.engine, candidates, vectors)
                result = self._result(outcomes, ignored, changes.alerts, not_kept)
                self._commit(changes, request_id=request_id, result=result.model_dump(mode="json"))
                return result
            except ConcurrentUpdate:
                done = self._already_applied(request_id)
                if done is not None:
                    return done
                if attempt == 2:
                    raise
                self.engine = self._load()  # someone (a job) changed this user under the optimistic lock
        raise AssertionError("unreachable")

    def _decide(
        self,
        engine: GateEngine,
        candidates: Sequence[Candidate],
        vectors: np.ndarray,
        fork_rows: VectorRows | None = None,
    ) -> tuple[list[Outcome], GateChanges]:
        """The candidates through ``engine``'s gates, one by one: the user's own engine, or a fork of it (a
        preview) with a copy of the vector rows, where its views keep the vectors of what it changed."""
        changes = GateChanges()
        outcomes: list[Outcome] = []
        view: ActiveView | None = None
        with span("gate.write", candidates=len(candidates)):
            for cand, vector in zip(candidates, vectors, strict=True):
                self._bring_back_archived(engine, cand)
                if view is None:
                    view = (
                        self.active_view()
                        if fork_rows is None
                        else ActiveView(engine.active(), self.embedder.dim, vectors=fork_rows)
                    )
                outcome, step = engine.write(cand, near_duplicates=view.nearest(vector, 3))
                for item in step.upserted.values():
                    if item.embedding is None and item.content_hash == content_hash(cand.content):
                        item.embedding = vector_bytes(vector)
                outcomes.append(outcome)
                changes.merge(step)
                if step.upserted:  # the next candidate's near-duplicates include this one
                    view = None
                    if fork_rows is None:
                        self._view = None
        return outcomes, changes

    def _bring_back_archived(self, engine: GateEngine, cand: Candidate) -> None:
        """Archived items the candidate may restate, so the gate can restore instead of duplicating. When
        memory already holds the whole archive (a recall loaded it) it names them, and SQL is read only for
        those (the two searches in SQL were a fifth of a write's CPU, and most writes restate nothing
        archived); a write does not load the archive into memory for this."""
        digest, slot = content_hash(cand.content), cand.slot if cand.slot and cand.value else None
        archive = self._archive
        if archive is not None and archive.complete:
            ids = archive.newest_ids(content_hash=digest, limit=1)
            ids += archive.newest_ids(slot=slot, limit=20) if slot else []
            found = (
                self.store.memories.archived(self.tenant_id, self.user_id, memory_ids=ids, limit=len(ids))
                if ids
                else []
            )
        else:
            found = self.store.memories.archived(self.tenant_id, self.user_id, content_hash=digest, limit=1)
            found += (
                self.store.memories.archived(self.tenant_id, self.user_id, slot=slot, limit=20)
                if slot
                else []
            )
        for item in found:
            engine.items.setdefault(item.memory_id, item)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Passage vectors of ``texts``, float32, one row each."""
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        with span("embedder.embed_passages", texts=len(texts)):
            return np.asarray(self.embedder.embed_passages(texts), dtype=np.float32)

    def _commit(
        self, changes: GateChanges, *, index_items: Iterable[MemoryItem] | None = None, **kwargs: Any
    ) -> None:
        """Commit under the fence with any pending recall heat; stage ``index_items`` (default: every upserted
        item) in the vector-index outbox."""
        changed = list(changes.upserted.values())
        index_ids = [i.memory_id for i in (changed if index_items is None else index_items)]
        if self._pending_access:
            changes.merge(self._pending_access)
            self._pending_access = GateChanges()
        if not changes and kwargs.get("request_id") is None:
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
                    **kwargs,
                )
            except HermesError:
                self.engine = self._load()  # the in-memory decision was not stored: forget it
                raise
        if changed:
            self._changed(changed)
        if index_ids:
            self._on_index_change()

    @property
    def has_pending_access(self) -> bool:
        return bool(self._pending_access)

    def flush_access(self) -> None:
        """Write the batched recall heat now (the host does so every few seconds and before eviction)."""
        if self._pending_access:
            self._commit(GateChanges(), index_items=())

    def _fill_missing_embeddings(self, items: Iterable[MemoryItem]) -> None:
        missing = [
            i for i in items if i.embedding is None and i.state is not State.DELETED and not self._holds(i)
        ]
        for item in missing:
            item.embedding = summary_vector(item, self._source_vector)
        missing = [i for i in missing if i.embedding is None]
        if missing:
            for item, vector in zip(missing, self._embed([i.content for i in missing]), strict=True):
                item.embedding = vector_bytes(vector)

    def _source_vector(self, memory_id: str) -> np.ndarray | None:
        item = self.engine.items.get(memory_id)
        return None if item is None else self._vector_of(item)

    def _already_applied(self, request_id: str | None) -> api.WriteResult | None:
        if request_id is None:
            return None
        stored = self.store.memories.applied_result(self.tenant_id, self.user_id, request_id)
        return None if stored is None else api.WriteResult.model_validate(stored)

    def _result(
        self,
        outcomes: list[Outcome],
        ignored: int,
        alerts: list[Alert],
        not_kept: Sequence[api.NotKept] = (),
    ) -> api.WriteResult:
        return api.WriteResult(
            user_id=self.user_id,
            outcomes=[self._outcome(o) for o in outcomes],
            alerts=[api.AlertOut.model_validate(a) for a in alerts],
            ignored_turns=ignored,
            not_kept=list(not_kept),
        )

    @staticmethod
    def _outcome(outcome: Outcome) -> api.WriteOutcome:
        return api.WriteOutcome(
            memory_id=outcome.memory_id,
            action=outcome.action,
            state=outcome.state,
            layer=outcome.layer,
            detail=outcome.detail,
        )

    # ------------------------------------------------------------------ recall and sessions

    def recall(self, request: api.RecallRequest, ahead: np.ndarray | None = None) -> api.RecallResponse:
        """``ahead``: the query's vector, when the host embedded it while the call waited."""
        if "k" not in request.model_fields_set:  # no k asked for: the tenant's default
            request = request.model_copy(update={"k": self.policy.top_k})
        self._refreeze_due()
        query_vector = self._embed_query(request.query, ahead)
        self._recalls = True
        engine = RecallEngine(
            self.active_view(), self.archive_view, self.policy, self.clock(), vector_of=self._vector_of
        )
        hits = engine.recall(request.query, query_vector, request.k, request.include_archive)
        items = self.engine.items
        response = api.RecallResponse(query=request.query, hits=[recall_hit(h, items) for h in hits])
        # the answer shows the memories as they were found; their heat is batched (it changes no layer or
        # state, and nothing for the vector index)
        for hit in hits:  # an archived item found: its heat says the eviction was missed (jobs.profiles)
            self.engine.items.setdefault(hit.item.memory_id, hit.item)
        self._pending_access.merge(self.engine.record_access(h.item.memory_id for h in hits))
        return response

    @property
    def recall_is_stale(self) -> bool:
        """Whether a change since this user's last recall dropped what recall derives from the items."""
        return self._recalls and self._view is None

    def prepare_recall(self) -> None:
        """Build now what the next recall would rebuild first after a change: the active items' vector
        rows, keyword postings and entity graph, and the archive's parts. The host calls it in the user's
        mailbox after a write's answer, while it has nothing else to run, so that an agent's next recall
        finds them built (for a long-lived user they were most of the service's own work in that recall:
        docs/benchmarks.md, sixth and seventh rounds)."""
        self.active_view().build()
        if self._archive is not None:
            self._archive.parts()

    def _refreeze_due(self) -> None:
        """An unfreeze window that closed with no new value: the item is frozen again before it is read."""
        changes = self.engine.refreeze_due()
        if changes:
            self._commit(changes)

    def cached_query(self, query: str) -> np.ndarray | None:
        """The vector of a query this user asked lately. One dict read: a host may ask from its event loop
        while the user's call runs in a thread."""
        return self._queries.get(query)

    def _embed_query(self, query: str, ahead: np.ndarray | None) -> np.ndarray:
        """The query's vector: ``ahead``, else one of the user's recent queries, else embedded now; it joins
        the recent ones."""
        vector = self._queries.get(query) if ahead is None else ahead
        if vector is None:
            with span("embedder.embed_queries"):
                vector = np.asarray(self.embedder.embed_queries([query]), dtype=np.float32)[0]
        self._remember_query(query, vector)
        return vector

    def _remember_query(self, query: str, vector: np.ndarray) -> None:
        self._queries[query] = vector
        self._queries.move_to_end(query)
        if len(self._queries) > QUERY_CACHE_SIZE:
            self._queries.popitem(last=False)

    def start_session(self, request: api.StartSessionRequest) -> api.SessionContext:
        self._refreeze_due()
        stored = self.store.snapshots.get(self.tenant_id, self.user_id, request.session_id)
        if stored is None:
            snapshot = render_session_context(
                self.engine.active(),
                self.policy,
                request.session_id,
                self.clock(),
                budget_chars=request.budget_chars,
                cohort=self._cohort_seed(),
            )
            rendered = api.SessionContext.model_validate(snapshot).model_dump_json()
            session_id = request.session_id
            text = self.store.snapshots.save(self.tenant_id, self.user_id, session_id, rendered)
        else:
            text = stored
        return api.SessionContext.model_validate_json(text)

    def _cohort_seed(self) -> list[CohortFeature]:
        """The tenant's cohort features (``jobs.group_profiles``) for a user without a profile yet."""
        if self.engine.count(Layer.LONGTERM) or self.engine.count(Layer.CORE):
            return []
        return self.store.jobs.cohort_features(self.tenant_id)

    def profile(self) -> api.UserProfile:
        """The USER profile: slot conclusions with confidence, backing ids and history; relations; state."""
        with span("profile.build"):
            history = self.store.memories.slot_history(self.tenant_id, self.user_id)
            builder = ProfileBuilder(self.policy, self.clock())
            return api.UserProfile.model_validate(builder.build(self.user_id, self.engine.active(), history))

    # ------------------------------------------------------------------ inspection and explicit control

    def get_memory(self, memory_id: str) -> api.MemoryDetail:
        item = self.store.memories.get(self.tenant_id, self.user_id, memory_id)
        audit = self.store.audit.events(self.tenant_id, self.user_id, memory_id)
        return api.MemoryDetail(
            memory=api.MemoryOut.model_validate(item),
            audit=[api.AuditEventOut.model_validate(e) for e in audit],
        )

    def list_memories(
        self, layer: Layer | None = None, state: State | None = None, limit: int = 100, offset: int = 0
    ) -> api.MemoryList:
        layers = [layer] if layer else None
        states = [state] if state else None
        items = self.store.memories.page(
            self.tenant_id, self.user_id, layers=layers, states=states, limit=limit, offset=offset
        )
        total = self.store.memories.count(self.tenant_id, self.user_id, layers=layers, states=states)
        return api.MemoryList(items=[api.MemoryOut.model_validate(i) for i in items], total=total)

    def confirm(self, memory_id: str, request: api.ConfirmRequest, actor: str = "user") -> api.MemoryOut:
        return self._control(
            memory_id,
            lambda: self.engine.confirm(
                memory_id, session_id=request.session_id, actor=actor, reason=request.reason
            ),
        )

    def freeze(self, memory_id: str, request: api.FreezeRequest, actor: str = "operator") -> api.MemoryOut:
        return self._control(
            memory_id, lambda: self.engine.freeze(memory_id, reason=request.reason, actor=actor)
        )

    def unfreeze(self, memory_id: str, request: api.UnfreezeRequest, actor: str = "user") -> api.MemoryOut:
        # a correction is content like any other: secrets redacted, instructions to a model refused
        corrections = (request.new_content, request.new_value)
        changed = [None if text is None else cleaned_text(text) for text in corrections]
        if any(text is not None and text.flagged for text in changed):
            raise InvalidInput("the correction reads as an instruction to a model; refused")
        new_content, new_value = (None if text is None else text.text for text in changed)
        return self._control(
            memory_id,
            lambda: self.engine.unfreeze(
                memory_id,
                reason=request.reason,
                dialog_id=request.dialog_id,
                actor=actor,
                new_content=new_content,
                new_value=new_value,
            ),
        )

    def restore(
        self, memory_id: str, actor: str = "job:restore", reason: str = "relevant again"
    ) -> api.MemoryOut:
        if memory_id not in self.engine.items:
            self.engine.items[memory_id] = self.store.memories.get(self.tenant_id, self.user_id, memory_id)
        return self._control(memory_id, lambda: self.engine.restore(memory_id, actor=actor, reason=reason))

    def _control(self, memory_id: str, operation: Callable[[], GateChanges]) -> api.MemoryOut:
        if memory_id not in self.engine.items:
            self.store.memories.get(self.tenant_id, self.user_id, memory_id)  # NotFound when not this user's
        try:
            changes = operation()
        except GateRejected:
            self._commit(self.engine.drain())  # a refusal may still raise an alert
            raise
        self._commit(changes)
        return api.MemoryOut.model_validate(self.engine.get(memory_id))

    def forget(self, memory_id: str, request: api.ForgetRequest, actor: str = "user") -> api.ForgetResult:
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
            reason=request.reason,
            actor=actor,
            fence=self.fence,
            also=plan.memory_ids[1:],
            rewritten=plan.rewritten,
        )
        self._said_before.forget([everything[m].content for m in plan.memory_ids if m in everything])
        # every structure derived from the items (recall views, keyword postings, the archive) is rebuilt
        # from what SQL now holds
        self.engine = self._load()
        self._on_index_change()
        return api.ForgetResult(
            memory_id=memory_id, forgotten=True, also_forgotten=plan.memory_ids[1:], detail=FORGOTTEN
        )

    def erase_user(self, request: api.EraseRequest) -> api.EraseResult:
        removed = self.store.erasure.erase_user(
            self.tenant_id, self.user_id, reason=request.reason, fence=self.fence
        )
        self.engine = GateEngine(self.tenant_id, self.user_id, self.policy, clock=self.clock)
        self._forget_derived()
        self._queries.clear()  # the user's own questions go with them
        self._said_before.clear()  # and the turns kept as the context of the next ones
        self._on_index_change()
        return api.EraseResult(user_id=self.user_id, items_removed=removed)

    def alerts(self, status: AlertStatus | None = AlertStatus.OPEN) -> api.AlertList:
        found = self.store.alerts.find(self.tenant_id, self.user_id, status)
        return api.AlertList(alerts=[api.AlertOut.model_validate(a) for a in found])

    def resolve_alert(
        self, alert_id: str, request: ResolveAlertRequest, actor: str = "operator"
    ) -> api.AlertOut:
        """Close the user's alert with an audit entry (on the alert's memory, so the item's trail shows
        who did it and why), committed under the user's fence like any change; resolving a resolved alert
        records nothing new."""
        found = [
            a for a in self.store.alerts.find(self.tenant_id, self.user_id, None) if a.alert_id == alert_id
        ]
        if not found:
            raise NotFound(f"alert {alert_id} not found")
        alert = found[0]
        if alert.status is AlertStatus.OPEN:
            changes = self.engine.resolve_alert(alert, reason=request.reason, actor=actor)
            alert = changes.alerts[0]
            self._commit(changes)
        return api.AlertOut.model_validate(alert)

    # ------------------------------------------------------------------ reads for recall and the jobs

    def newest_archived(self, limit: int) -> list[MemoryItem]:
        """The user's ``limit`` most recently archived items."""
        return self.store.memories.archived(self.tenant_id, self.user_id, limit=limit)

    def item(self, memory_id: str) -> MemoryItem:
        """An item this user owns: active from memory, anything else from SQL."""
        item = self.engine.items.get(memory_id)
        return item if item is not None else self.store.memories.get(self.tenant_id, self.user_id, memory_id)


FORGOTTEN = "forgotten everywhere: the item, summaries that merged it, its words in other turn texts"
NOT_AN_INSTRUCTION = not_kept_detail(Dropped.INSTRUCTION.value)
OUTSIDE_VOCABULARY = "not kept: a style value outside the closed vocabulary (actors.core.style)"


def _refusal(
    slot: str | None, value: str | None, polarity: Polarity, content: str
) -> str | tuple[str, str] | None:
    """How a structured write obeys the instruction rule: a detail why it is not kept, or the (content,
    value) it is kept as (the service's template), or None when it is an ordinary statement."""
    if is_style(slot):
        style = canonical_style(cast(str, slot), value)
        if style is None:
            return OUTSIDE_VOCABULARY
        return cast(str, slot_template(slot, style, polarity, content)), style
    if not addressed_to_assistant(content):
        return None
    if slot and plain_value(value):
        return cast(str, slot_template(slot, value, polarity, content)), cast(str, value)
    return NOT_AN_INSTRUCTION


def recall_hit(hit: Hit, items: Mapping[str, MemoryItem]) -> api.RecallHit:
    """A recalled memory as the API shows it, its scores rounded; a pending challenge to confirmed facts
    carries its caution (``context.challenge_note``)."""
    breakdown = api.ScoreBreakdown(
        semantic=round(hit.scores.get("semantic", 0.0), 4),
        time_decay=round(hit.time_decay, 4),
        importance=round(hit.item.importance, 4),
        routes={route: round(score, 4) for route, score in hit.scores.items()},
        relevance=round(hit.relevance, 4),
        boosts=hit.boosts,
        total=round(hit.total, 6),
    )
    return api.RecallHit(
        memory=api.MemoryOut.model_validate(hit.item),
        score=breakdown,
        routes=sorted(hit.routes),
        contradicts=hit.contradicts,
        caution=challenge_note(hit.item, items),
    )
