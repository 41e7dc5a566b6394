"""One user's operations, one manager per resource: writes, recall, memories, alerts and sessions.

Each manager is given the user's parts it needs — the unit of work (``actors.app.unit_of_work``: the gate
engine and every commit), the recall state (``actors.app.recall_state``) and the turns kept as the next
turns' context (``SessionTurns``) — and runs the stateless steps of ``actors.app.pipeline`` between them.
``UserMemoryService`` (``actors.app.service``) builds them for one user; the commands
(``actors.app.commands``) call them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime

import numpy as np

from actors.adapters.embedding import Embedder
from actors.adapters.tracing import span
from actors.app.pipeline import (
    cleaned_text,
    decide,
    embed_into,
    passage_vectors,
    recall_hit,
    structured_candidate,
    turns_preview,
    write_result,
)
from actors.app.recall_state import RecallState
from actors.app.transfer import batch_of
from actors.app.unit_of_work import UnitOfWork
from actors.app.write import (
    ClauseReader,
    Extraction,
    PreparedWrite,
    TokenStates,
    extract,
    read,
    read_into,
    with_context,
)
from actors.core.context import render_session_context
from actors.core.extraction import Extractor
from actors.core.gate.engine import GateEngine
from actors.core.memory import Candidate, GateChanges, MemoryItem
from actors.core.profile import ProfileBuilder
from actors.core.records import CohortFeature
from actors.core.said_before import SessionTurns
from actors.language.reader.reader import StatesEmbedder
from schemas import api
from schemas.api_tenant import ResolveAlertRequest
from schemas.enums import AlertStatus, Layer, State
from schemas.errors import ConcurrentUpdate, GateRejected, InvalidInput, NotFound
from schemas.settings import GatePolicy
from schemas.transfer import ImportRequest, ImportResult

FORGOTTEN = "forgotten everywhere: the item, summaries that merged it, its words in other turn texts"


class Writes:
    """The user's writes: turns read, embedded, decided through the gates and committed (the chain of
    ``actors.app.write``), a structured memory, a preview that commits nothing, and an import."""

    def __init__(
        self,
        work: UnitOfWork,
        recall: RecallState,
        said_before: SessionTurns,
        *,
        embedder: Embedder,
        extractor: Extractor,
        reader: Callable[[], ClauseReader | None],
        clock: Callable[[], datetime],
    ):
        """``said_before``: each recent session's last turns, the context of the next turn's memories;
        ``reader``: the clause reader of a write's candidates (the host's, loaded on first use), or None."""
        self.work = work
        self.recall = recall
        self.said_before = said_before
        self.embedder = embedder
        self.extractor = extractor
        self.reader = reader
        self.clock = clock

    def write_turns(self, request: api.WriteTurnsRequest, request_id: str | None = None) -> api.WriteResult:
        """The whole chain here, in one call (``actors.app.write``): the turns read now, embedded, written."""
        return self.write(self.prepared(self.extract(request)), request_id)

    def extract(self, request: api.WriteTurnsRequest) -> Extraction:
        """The request's turns read with this user's extractor, a turn without a time said now."""
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
        vectors = passage_vectors(self.embedder, passages) if ahead is None else ahead
        return PreparedWrite(extraction, np.asarray(vectors, dtype=np.float32), states if wanted else None)

    def write(self, prepared: PreparedWrite, request_id: str | None = None) -> api.WriteResult:
        """Read, decide and commit a prepared write under ``request_id``."""
        # what earlier writes archived or superseded is in SQL: memory goes back to what a load holds
        self.work.engine.forget_inactive()
        extraction = prepared.extraction
        candidates = with_context(self._read(prepared), extraction, self.said_before)
        return self._apply(candidates, prepared.vectors, extraction.ignored, request_id, extraction.not_kept)

    def preview(self, prepared: PreparedWrite) -> api.TurnsPreview:
        """What ``write`` would do now, decided on a fork of the user's memory: nothing is committed, and
        the user's memory (with what recall derived from it) is left as it was."""
        forked = copy.deepcopy(self.work.engine)
        candidates = with_context(self._read(prepared), prepared.extraction, self.said_before.copy())
        views = self.recall.forked()
        outcomes, changes = decide(forked, candidates, prepared.vectors, views, self.recall.archived_like)
        return turns_preview(self.work.user_id, forked, outcomes, changes.alerts, prepared.extraction.ignored)

    def write_memory(self, request: api.WriteMemoryRequest, request_id: str | None = None) -> api.WriteResult:
        """One structured memory through the gates, held to the instruction rule first."""
        found = structured_candidate(request)
        if not isinstance(found, Candidate):
            return write_result(self.work.user_id, [], 1, [], found)
        prepared = self.prepared(Extraction(candidates=(found,)))
        return self._apply(self._read(prepared), prepared.vectors, 0, request_id)

    def import_records(self, request: ImportRequest) -> ImportResult:
        """Add this user's exported records that are not here yet (``actors.app.transfer``), in one commit
        under the fence; the memories are embedded again and the user's memory reloaded."""
        work = self.work
        batch, refused = batch_of(work.tenant_id, work.user_id, request.records)
        embed_into(self.embedder, [item for item in batch.items if item.state is not State.DELETED])
        counts = work.add(batch)
        return ImportResult(
            user_id=work.user_id,
            memories_added=counts.memories_added,
            memories_present=counts.memories_present,
            memories_forgotten=counts.memories_forgotten,
            memories_refused=refused,
            events_added=counts.events_added,
            alerts_added=counts.alerts_added,
            tombstones_added=counts.tombstones_added,
        )

    def _read(self, prepared: PreparedWrite) -> tuple[Candidate, ...]:
        """The candidates as the clause reader reads them, on the vectors already computed for the index."""
        candidates = prepared.extraction.candidates
        reader = self.reader() if candidates else None
        if reader is None:
            return candidates
        with span("reader.read", candidates=len(candidates)):
            return read_into(candidates, read(prepared, reader))

    def _apply(
        self,
        candidates: tuple[Candidate, ...],
        vectors: np.ndarray,
        ignored: int,
        request_id: str | None,
        not_kept: tuple[api.NotKept, ...] = (),
    ) -> api.WriteResult:
        """Decide and commit the candidates under ``request_id``. A request already applied is not read for
        first: its id's row makes the commit fail (every write would otherwise pay a SQL read for the rare
        resend), and the answer is then the one stored with it; nothing of the second decision lands."""
        for attempt in (1, 2):
            try:
                engine, views = self.work.engine, self.recall
                outcomes, changes = decide(engine, candidates, vectors, views, self.recall.archived_like)
                result = write_result(self.work.user_id, outcomes, ignored, changes.alerts, not_kept)
                self.work.commit(changes, request_id=request_id, result=result.model_dump(mode="json"))
                return result
            except ConcurrentUpdate:  # the commit reloaded the engine: someone (a job) changed this user
                done = self._already_applied(request_id)
                if done is not None:
                    return done
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _already_applied(self, request_id: str | None) -> api.WriteResult | None:
        if request_id is None:
            return None
        work = self.work
        stored = work.store.memories.applied_result(work.tenant_id, work.user_id, request_id)
        return None if stored is None else api.WriteResult.model_validate(stored)


class Recalls:
    """The user's recall: the memories that answer a query, their heat batched in the unit of work."""

    def __init__(
        self, work: UnitOfWork, state: RecallState, policy: GatePolicy, clock: Callable[[], datetime]
    ):
        self.work = work
        self.state = state
        self.policy = policy
        self.clock = clock

    def recall(self, request: api.RecallRequest, ahead: np.ndarray | None = None) -> api.RecallResponse:
        """``ahead``: the query's vector, when the host embedded it while the call waited."""
        if "k" not in request.model_fields_set:  # no k asked for: the tenant's default
            request = request.model_copy(update={"k": self.policy.top_k})
        self.work.refreeze_due()
        engine = self.work.engine
        hits = self.state.hits(engine, request.query, request.k, request.include_archive, self.clock(), ahead)
        response = api.RecallResponse(query=request.query, hits=[recall_hit(h, engine.items) for h in hits])
        # the answer shows the memories as they were found; their heat is batched (it changes no layer or
        # state, and nothing for the vector index)
        for hit in hits:  # an archived item found: its heat says the eviction was missed (jobs.profiles)
            engine.items.setdefault(hit.item.memory_id, hit.item)
        self.work.record_access(h.item.memory_id for h in hits)
        return response

    @property
    def is_stale(self) -> bool:
        """Whether a change since this user's last recall dropped what recall derives from the items."""
        return self.state.is_stale

    def prepare(self) -> None:
        """Build now what the next recall would rebuild first after a change: the active items' vector
        rows, keyword postings and entity graph, and the archive's parts. The host calls it in the user's
        mailbox after a write's answer, while it has nothing else to run, so that an agent's next recall
        finds them built (for a long-lived user they were most of the service's own work in that recall:
        docs/benchmarks.md)."""
        self.state.prepare(self.work.engine)

    def cached_query(self, query: str) -> np.ndarray | None:
        """The vector of a query this user asked lately (``RecallState.cached_query``)."""
        return self.state.cached_query(query)


class Memories:
    """The user's memories one by one: read, confirmed, frozen, unfrozen, restored, forgotten, and the
    whole memory erased."""

    def __init__(self, work: UnitOfWork, said_before: SessionTurns):
        self.work = work
        self.said_before = said_before

    def item(self, memory_id: str) -> MemoryItem:
        """An item this user owns: active from memory, anything else from SQL."""
        work = self.work
        item = work.engine.items.get(memory_id)
        return item if item is not None else work.store.memories.get(work.tenant_id, work.user_id, memory_id)

    def get(self, memory_id: str) -> api.MemoryDetail:
        work = self.work
        item = work.store.memories.get(work.tenant_id, work.user_id, memory_id)
        audit = work.store.audit.events(work.tenant_id, work.user_id, memory_id)
        return api.MemoryDetail(
            memory=api.MemoryOut.model_validate(item),
            audit=[api.AuditEventOut.model_validate(e) for e in audit],
        )

    def list(
        self, layer: Layer | None = None, state: State | None = None, limit: int = 100, offset: int = 0
    ) -> api.MemoryList:
        work, memories = self.work, self.work.store.memories
        layers = [layer] if layer else None
        states = [state] if state else None
        items = memories.page(
            work.tenant_id, work.user_id, layers=layers, states=states, limit=limit, offset=offset
        )
        total = memories.count(work.tenant_id, work.user_id, layers=layers, states=states)
        return api.MemoryList(items=[api.MemoryOut.model_validate(i) for i in items], total=total)

    def confirm(self, memory_id: str, request: api.ConfirmRequest, actor: str = "user") -> api.MemoryOut:
        return self._control(
            memory_id,
            lambda engine: engine.confirm(
                memory_id, session_id=request.session_id, actor=actor, reason=request.reason
            ),
        )

    def freeze(self, memory_id: str, request: api.FreezeRequest, actor: str = "operator") -> api.MemoryOut:
        return self._control(
            memory_id, lambda engine: engine.freeze(memory_id, reason=request.reason, actor=actor)
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
            lambda engine: engine.unfreeze(
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
        work = self.work
        if memory_id not in work.engine.items:
            work.engine.items[memory_id] = work.store.memories.get(work.tenant_id, work.user_id, memory_id)
        return self._control(memory_id, lambda engine: engine.restore(memory_id, actor=actor, reason=reason))

    def _control(self, memory_id: str, operation: Callable[[GateEngine], GateChanges]) -> api.MemoryOut:
        work = self.work
        if memory_id not in work.engine.items:
            work.store.memories.get(work.tenant_id, work.user_id, memory_id)  # NotFound when not this user's
        try:
            changes = operation(work.engine)
        except GateRejected:
            work.commit(work.engine.drain())  # a refusal may still raise an alert
            raise
        work.commit(changes)
        return api.MemoryOut.model_validate(work.engine.get(memory_id))

    def forget(self, memory_id: str, request: api.ForgetRequest, actor: str = "user") -> api.ForgetResult:
        plan, contents = self.work.forget(memory_id, reason=request.reason, actor=actor)
        self.said_before.forget(contents)
        return api.ForgetResult(
            memory_id=memory_id, forgotten=True, also_forgotten=plan.memory_ids[1:], detail=FORGOTTEN
        )

    def erase(self, request: api.EraseRequest) -> api.EraseResult:
        removed = self.work.erase(request.reason)
        self.said_before.clear()  # the turns kept as the context of the next ones go with the user
        return api.EraseResult(user_id=self.work.user_id, items_removed=removed)


class Alerts:
    """The user's alerts: listed, and resolved by a person."""

    def __init__(self, work: UnitOfWork):
        self.work = work

    def list(self, status: AlertStatus | None = AlertStatus.OPEN) -> api.AlertList:
        work = self.work
        found = work.store.alerts.find(work.tenant_id, work.user_id, status)
        return api.AlertList(alerts=[api.AlertOut.model_validate(a) for a in found])

    def resolve(self, alert_id: str, request: ResolveAlertRequest, actor: str = "operator") -> api.AlertOut:
        """Close the user's alert with an audit entry (on the alert's memory, so the item's trail shows
        who did it and why), committed under the user's fence like any change; resolving a resolved alert
        records nothing new."""
        work = self.work
        found = [
            a for a in work.store.alerts.find(work.tenant_id, work.user_id, None) if a.alert_id == alert_id
        ]
        if not found:
            raise NotFound(f"alert {alert_id} not found")
        alert = found[0]
        if alert.status is AlertStatus.OPEN:
            changes = work.engine.resolve_alert(alert, reason=request.reason, actor=actor)
            alert = changes.alerts[0]
            work.commit(changes)
        return api.AlertOut.model_validate(alert)


class Sessions:
    """What an agent reads of the user as a session starts: the session's context snapshot and the profile."""

    def __init__(self, work: UnitOfWork, policy: GatePolicy, clock: Callable[[], datetime]):
        self.work = work
        self.policy = policy
        self.clock = clock

    def start(self, request: api.StartSessionRequest) -> api.SessionContext:
        """The session's context: rendered and stored on its first call, the same text for every later one."""
        work = self.work
        work.refreeze_due()
        stored = work.store.snapshots.get(work.tenant_id, work.user_id, request.session_id)
        if stored is None:
            snapshot = render_session_context(
                work.engine.active(),
                self.policy,
                request.session_id,
                self.clock(),
                budget_chars=request.budget_chars,
                cohort=self._cohort_seed(),
            )
            rendered = api.SessionContext.model_validate(snapshot).model_dump_json()
            stored = work.store.snapshots.save(work.tenant_id, work.user_id, request.session_id, rendered)
        return api.SessionContext.model_validate_json(stored)

    def _cohort_seed(self) -> list[CohortFeature]:
        """The tenant's cohort features (``jobs.group_profiles``) for a user without a profile yet."""
        engine = self.work.engine
        if engine.count(Layer.LONGTERM) or engine.count(Layer.CORE):
            return []
        return self.work.store.jobs.cohort_features(self.work.tenant_id)

    def profile(self) -> api.UserProfile:
        """The USER profile: slot conclusions with confidence, backing ids and history; relations; state."""
        work = self.work
        with span("profile.build"):
            history = work.store.memories.slot_history(work.tenant_id, work.user_id)
            builder = ProfileBuilder(self.policy, self.clock())
            return api.UserProfile.model_validate(builder.build(work.user_id, work.engine.active(), history))
