"""``UserHost``: a long-lived Ray actor that hosts many users' services as virtual actors.

Each resident user has a mailbox (an ``asyncio.Lock``, which wakes waiters in arrival order): a user's calls
run one at a time, in order, so gate logic never races; different users' calls run concurrently on the
host's threads. A call takes its place in the mailbox in the order its submitter made it (``Turnstile``,
``actors.runtime.turns``); one that has to wait is prepared meanwhile (``Command.prepare``: a write's
turns read once) and has what it will embed embedded, so it holds the mailbox for its own work only. A user is
activated on their first call — claim the user in SQL (a new fencing epoch), load the active items — and
passivated when least recently used beyond the host's user or memory budget, or idle
(docs/architecture.md).

The host owns what every resident shares: one SQL engine, one embedding model with micro-batching
(``BatchingEmbedder``), tenant policies, and a background thread that drains the vector-index outbox for
the users this host serves. A host is called with one method for every user operation,
``host.run.remote(tenant_id, user_id, command, trace_context, turn)``, which runs the command
(``actors.app.commands``) on the user's service and answers the command's response (the caller reads it
back as the command's type: ``UserCommand.answer``). ``HostActor`` is the Ray actor class of ``UserHost``
and ``HostHandle`` a handle to one: Ray types a handle as the handle or the class, so every remote call
(each method is a ``@ray.method``) is checked against the method's signature.

Errors: ``WrongHost`` when the user belongs to another host under the current pool size (the caller
refreshes its view of the pool and resends); ``OwnershipLost`` never leaves: the user is reloaded under a
fresh claim and the call runs again, or, if the user moved to another host meanwhile, ``WrongHost``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeAlias, cast

import ray
from pydantic import BaseModel
from ray.actor import ActorProxy

from actors.adapters.embedding import make_embedder
from actors.adapters.tracing import attached, span
from actors.app.commands import Command, Effect, Prepared
from actors.app.learned_reading import make_reader
from actors.app.service import UserMemoryService
from actors.app.write import ClauseReader
from actors.core.extraction import make_extractor
from actors.core.memory import utcnow
from actors.language.tokens import load_segmenter
from actors.runtime import outbox
from actors.runtime.batching import BatchingEmbedder
from actors.runtime.rendezvous import host_of
from actors.runtime.turns import Turn, Turnstile
from actors.store.sql.store import MemoryStore
from schemas.errors import HermesError, OwnershipLost, WrongHost
from schemas.settings import GatePolicy, HermesSettings

log = logging.getLogger(__name__)

UserKey = tuple[str, str]

POOL_ACTOR_NAME = "host-pool"
#: a resident user's claim is checked against SQL at most this often (a batch job may have taken it over)
FENCE_CHECK_SECONDS = 2.0
#: a tenant's policy is read again after this long
POLICY_SECONDS = 5.0
#: batched recall heat reaches SQL at least this often
ACCESS_FLUSH_SECONDS = 5.0
#: the outbox is drained at least this often even when no commit signals it (crash replay, retries)
OUTBOX_POLL_SECONDS = 1.0
#: after a commit signals it, the drain waits this long so that the commits meanwhile join its batch: each
#: drain is two SQL reads, a delete that commits and a Milvus upsert. At 0.25 s the drains still cost a host
#: 0.44 ms of CPU per request under the mixed load and the index server 0.33; at 1 s, 0.15 and 0.24. Nothing
#: a user reads waits for the index (a new item is in memory); an operator's tenant search sees it ~1 s later.
OUTBOX_GATHER_SECONDS = 1.0
#: most outbox entries applied in one batch
OUTBOX_BATCH = 1000
#: a call waits this long at most for an earlier call of its lane that never comes (its router gave up on
#: it: ``actors.runtime.pool.RETRY_SECONDS``), then goes on
TURN_PATIENCE_SECONDS = 75.0
#: a lane no call has used for this long is forgotten: longer than a router resends a call (60 s), so every
#: call of a lane arrives while the lane is known. Most calls open a lane of their own (their user had no
#: other call unanswered), so at ~120 calls a second a host holds a few thousand lanes of ~300 bytes
TURN_LANE_IDLE_SECONDS = 120.0
#: activation latencies kept for the p50 / p95 figures
LATENCY_WINDOW = 256


def host_name(index: int) -> str:
    return f"host-{index}"


@dataclass(slots=True)
class _Resident:
    mailbox: asyncio.Lock = field(default_factory=asyncio.Lock)
    service: UserMemoryService | None = None
    verified_at: float = 0.0
    last_used: float = field(default_factory=time.monotonic)
    waiting: int = 0
    bytes: int = 0


@dataclass(frozen=True, slots=True)
class HostStats:
    host: str
    pool_size: int
    live: int
    max_live: int
    resident_bytes: int
    activations: int
    passivations: int
    idle_passivations: int
    activation_seconds: tuple[float, ...]
    embed_calls: int
    embedded_texts: int
    outbox_applied: int
    #: recalls built ahead after a change, while the host was idle
    prepared_recalls: int


class UserHost:
    def __init__(self, index: int, settings_json: str, pool_size: int):
        settings = HermesSettings.model_validate_json(settings_json)
        self.index = index
        self.name = host_name(index)
        self.settings = settings
        self.pool_size = pool_size
        self.store = MemoryStore.from_settings(settings)
        model = make_embedder(
            settings.embedder, num_threads=settings.embedder_threads, spin=settings.embedder_spin
        )
        self.embedder = BatchingEmbedder(model)
        #: stateless, so one serves every resident user
        self.extractor = make_extractor(settings.extractor, settings.extractor_languages)
        self._reader: ClauseReader | None = None
        self._reader_lock = threading.Lock()
        self._residents: OrderedDict[UserKey, _Resident] = OrderedDict()
        self._bytes = 0
        self._budget_bytes = settings.host_memory_mb * 1024 * 1024
        self._policies: dict[str, tuple[float, GatePolicy]] = {}
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._activations = self._passivations = self._idle_passivations = 0
        self._outbox_applied = 0
        #: calls running (or waiting for a mailbox) on this host
        self._running = 0
        self._prepared_recalls = 0
        self._preparing: set[asyncio.Task[None]] = set()
        self._turns = Turnstile(TURN_PATIENCE_SECONDS)
        self._outbox_kick = threading.Event()
        self._drain_lock = threading.Lock()
        self._index: Any = None
        self._index_lock = threading.Lock()
        self._housekeeping: asyncio.Task[None] | None = None
        threading.Thread(target=self._drain_forever, name="outbox", daemon=True).start()
        # load the model and the segmenter's dictionary, and connect the vector index, now rather than in the
        # first user's call: over HTTP a host's first user waited ~1.2 s for jieba, and its first deep
        # archive read ~0.6 s for the index client's import and connection
        threading.Thread(target=self._warm_up, name="warm-up", daemon=True).start()
        threading.Thread(target=self._connect_index, name="index-connect", daemon=True).start()

    def _warm_up(self) -> None:
        self.embedder.embed_queries(["warm up"])
        load_segmenter()
        # the ~190,000 objects the host has built to start (the model's tables, jieba's dictionary, Ray)
        # live as long as it does: out of the collector's sight, a full collection under load walks only
        # what came since, and stops the host's calls for 6-30 ms instead of 100-190 (docs/benchmarks.md)
        gc.freeze()

    def reader(self) -> ClauseReader | None:
        """The clause reader every resident shares (``actors.app.write``), loaded on the first write that
        needs it, its shipped model checked against this host's embedder: the learned reader over the
        token states (``LearnedReader.load``) where the settings ask for it and the model gives them, else
        the semantic reader (``SemanticReader.load``); None when the settings turn it off or the embedder
        is the hashing fake."""
        if not self.settings.semantic_reader or self.settings.embedder == "hash":
            return None
        with self._reader_lock:
            if self._reader is None:
                self._reader = make_reader(self.settings.reader, self.embedder, self.embedder.model)
            return self._reader

    # ------------------------------------------------------------------------------ user commands

    @ray.method
    async def run(
        self,
        tenant_id: str,
        user_id: str,
        command: Command,
        trace_context: dict[str, str] | None,
        turn: Turn | None,
    ) -> BaseModel:
        """``command`` on the user's service, in the user's mailbox (activating the user if need be), after
        the calls of its ``turn``'s lane sent before it; it is prepared, and what it embeds embedded, while
        it waits."""
        received = utcnow()  # the moment a turn without a time was said
        self._start_housekeeping()
        if not self._serves(tenant_id, user_id):
            if turn is not None:
                self._turns.passed(turn)
            raise WrongHost(f"user {user_id!r} is not served by {self.name}", self.pool_size)
        key = (tenant_id, user_id)
        resident = self._residents.get(key)
        if resident is None:
            resident = self._residents[key] = _Resident()
        self._residents.move_to_end(key)
        resident.waiting += 1
        self._running += 1
        try:
            meanwhile = None
            try:
                waits = resident.mailbox.locked() or (turn is not None and not self._turns.ready(turn))
                if waits and command.effect is Effect.READS:
                    self.embedder.hurry(key)  # the call it waits behind may be a write still embedding
                if waits and command.embeds:
                    meanwhile = asyncio.ensure_future(
                        self._prepare_meanwhile(key, command, received, trace_context)
                    )
                if turn is not None:
                    await self._turns.wait(turn)
                await resident.mailbox.acquire()
            finally:
                if turn is not None:
                    self._turns.passed(turn)
            try:
                if not self._serves(tenant_id, user_id):  # the pool was resized while the call waited
                    raise self._moved_away(user_id)
                prepared = None if meanwhile is None else await meanwhile
                return await asyncio.to_thread(
                    self._run, key, resident, trace_context, command, prepared, received
                )
            finally:
                resident.mailbox.release()
        finally:
            resident.waiting -= 1
            self._running -= 1
            resident.last_used = time.monotonic()
            self._account(resident)
            if not self._serves(tenant_id, user_id):
                await self._passivate(key)
            await self._passivate_over_budget()
            self._prepare_recall_when_idle(key, resident)

    async def _prepare_meanwhile(
        self, key: UserKey, command: Command, received: datetime, trace_context: dict[str, str] | None
    ) -> Prepared | None:
        """``command`` prepared, with the vectors of its texts, for a call that waits behind the user's
        earlier calls: it then holds the user's mailbox for its own work only. A query the user asked lately
        is not embedded again. None when it cannot be prepared now, and no vectors when they cannot be
        embedded now: the call does it itself, or says what is wrong."""
        try:
            # on the loop: a write's extraction is ~1 ms of Python, and a worker thread may all be taken by
            # calls waiting for their own embedding
            prepared = command.prepare(self.extractor, received)
        except Exception as exc:
            log.debug("%s: a call of %s not prepared ahead: %s", self.name, key[1], exc)
            return None
        resident = self._residents.get(key)
        service = None if resident is None else resident.service
        query = prepared.query
        queries = (
            []
            if query is None or (service is not None and service.recalls.cached_query(query) is not None)
            else [query]
        )
        passages = prepared.extraction.passages
        # the token states only for a reader already loaded (loading it is no work for the event loop)
        reader = self._reader
        states_wanted = reader is not None and reader.reads_states and bool(passages)
        try:
            with attached(trace_context), span("host.embed_ahead", texts=len(queries) + len(passages)):
                asked_query = self.embedder.submit("query", queries, key)
                if states_wanted:
                    asked_states = self.embedder.submit_with_states(passages, key)
                    query_vectors = await asyncio.wrap_future(asked_query)
                    passage_vectors, states = await asyncio.wrap_future(asked_states)
                    return prepared.embedded(query_vectors[0] if queries else None, passage_vectors, states)
                asked = (asked_query, self.embedder.submit("passage", passages, key))
                query_vectors, passage_vectors = [await asyncio.wrap_future(f) for f in asked]
        except Exception as exc:
            log.debug("%s: texts of %s not embedded ahead: %s", self.name, key[1], exc)
            return prepared
        return prepared.embedded(query_vectors[0] if queries else None, passage_vectors)

    def _prepare_recall_when_idle(self, key: UserKey, resident: _Resident) -> None:
        """After a call that changed the user's memory, build what their next recall would rebuild, in their
        mailbox (a call that comes meanwhile waits for it, and finds the work done), when no other call is
        running on this host: on a busy host it would only take a core from another user's call, and the
        user's next call may be another write."""
        service = resident.service
        if self._running or service is None or not service.recalls.is_stale:
            return

        async def prepare() -> None:
            async with resident.mailbox:
                if resident.service is service and self._residents.get(key) is resident:
                    try:
                        await asyncio.to_thread(service.recalls.prepare)
                        self._prepared_recalls += 1
                    except Exception:  # the recall itself will build it, or say what is wrong
                        log.exception("%s: recall of %s not prepared", self.name, key[1])

        task = asyncio.get_running_loop().create_task(prepare())
        self._preparing.add(task)  # the loop holds tasks weakly
        task.add_done_callback(self._preparing.discard)

    def _serves(self, tenant_id: str, user_id: str) -> bool:
        return host_of(tenant_id, user_id, self.pool_size) == self.index

    # ------------------------------------------------------------------------------ pool and figures

    @ray.method
    async def set_pool_size(self, size: int) -> int:
        """The pool was resized: passivate the residents that now belong to another host; returns how many."""
        self.pool_size = size
        moved = [key for key in self._residents if not self._serves(*key)]
        for key in moved:
            await self._passivate(key)
        return len(moved)

    @ray.method
    async def passivate_all(self) -> int:
        keys = list(self._residents)
        for key in keys:
            await self._passivate(key)
        return len(keys)

    @ray.method
    async def drain_outbox(self) -> int:
        """Apply every outbox entry of this host's users now; returns how many (tests, shutdown)."""
        total = 0
        while True:
            applied = await asyncio.to_thread(self._drain_once)
            total += applied
            if applied < OUTBOX_BATCH:
                return total

    @ray.method
    def stats(self) -> HostStats:
        return HostStats(
            host=self.name,
            pool_size=self.pool_size,
            live=len(self._residents),
            max_live=self.settings.host_max_users,
            resident_bytes=self._bytes,
            activations=self._activations,
            passivations=self._passivations,
            idle_passivations=self._idle_passivations,
            activation_seconds=tuple(self._latencies),
            embed_calls=self.embedder.model_calls,
            embedded_texts=self.embedder.texts,
            outbox_applied=self._outbox_applied,
            prepared_recalls=self._prepared_recalls,
        )

    @ray.method
    def residents(self) -> list[UserKey]:
        """The users resident here now (tests check that no user is resident in two hosts)."""
        return list(self._residents)

    @ray.method
    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()

    # ------------------------------------------------------------------------------ mailboxes

    def _run(
        self,
        key: UserKey,
        resident: _Resident,
        trace_context: dict[str, str] | None,
        command: Command,
        prepared: Prepared | None,
        received: datetime,
    ) -> BaseModel:
        """In a worker thread, holding the user's mailbox; ``prepared``: None when the call did not wait."""
        with attached(trace_context), span(f"host.{command.name()}", tenant_id=key[0], host=self.name):
            if prepared is None:
                prepared = command.prepare(self.extractor, received)
            for attempt in (1, 2):
                try:  # a claim raced by another claimant's first one is lost like a commit
                    return command.run(self._current(key, resident), prepared)
                except OwnershipLost:
                    resident.service = None
                    self._refresh_pool_size()
                    if attempt == 2 or not self._serves(*key):
                        raise self._moved_away(key[1]) from None
        raise AssertionError("unreachable")

    def _moved_away(self, user_id: str) -> WrongHost:
        """For a call that found its user gone to another host while it waited or ran."""
        return WrongHost(f"user {user_id!r} moved away from {self.name}", self.pool_size)

    def _current(self, key: UserKey, resident: _Resident) -> UserMemoryService:
        """The user's service, activated if needed, and reloaded if another claimant took the user over."""
        service = resident.service
        now = time.monotonic()
        if service is not None and now - resident.verified_at >= FENCE_CHECK_SECONDS:
            if service.fence is None or self.store.fencing.epoch(*key) != service.fence.epoch:
                service = None
            resident.verified_at = now
        if service is None:
            started = time.perf_counter()
            with span("host.activate", host=self.name):
                service = UserMemoryService(
                    *key,
                    store=self.store,
                    embedder=self.embedder.owned_by(key),
                    policy=self._policy(key[0]),
                    extractor=self.extractor,
                    reader=self.reader,
                    fence=self.store.fencing.claim(*key, self.name),
                    on_index_change=self._outbox_kick.set,
                    vector_index=self._vector_index,
                )
            resident.service, resident.verified_at = service, time.monotonic()
            self._latencies.append(time.perf_counter() - started)
            self._activations += 1
        return service

    def _policy(self, tenant_id: str) -> GatePolicy:
        cached = self._policies.get(tenant_id)
        if cached is None or time.monotonic() - cached[0] > POLICY_SECONDS:
            cached = (time.monotonic(), self.store.tenants.policy(tenant_id))
            self._policies[tenant_id] = cached
        return cached[1]

    def _refresh_pool_size(self) -> None:
        try:
            pool = ray.get_actor(POOL_ACTOR_NAME, namespace=self.settings.namespace)
            self.pool_size = cast(int, ray.get(pool.size.remote(), timeout=10))
        except Exception:  # the pool actor restarting: keep the size we know
            log.warning("%s could not refresh the pool size", self.name)

    # ------------------------------------------------------------------------------ passivation

    def _account(self, resident: _Resident) -> None:
        size = 0 if resident.service is None else resident.service.resident_bytes
        self._bytes += size - resident.bytes
        resident.bytes = size

    async def _passivate_over_budget(self) -> None:
        while len(self._residents) > self.settings.host_max_users or self._bytes > self._budget_bytes:
            idle = next((k for k, r in self._residents.items() if not r.waiting), None)
            if idle is None:
                return
            await self._passivate(idle)

    async def _passivate(self, key: UserKey) -> None:
        """Flush the user's batched heat and drop them; a call already waiting keeps them resident."""
        resident = self._residents.get(key)
        if resident is None:
            return
        async with resident.mailbox:
            await self._flush_heat(key, resident)
            if resident.waiting or self._residents.get(key) is not resident:
                return
            del self._residents[key]
            self._bytes -= resident.bytes
            self._passivations += 1

    def _start_housekeeping(self) -> None:
        if self._housekeeping is None or self._housekeeping.done():
            self._housekeeping = asyncio.get_running_loop().create_task(self._keep_house_forever())

    async def _keep_house_forever(self) -> None:
        """Batched recall heat to SQL, idle users passivated, idle lanes forgotten."""
        while True:
            await asyncio.sleep(min(ACCESS_FLUSH_SECONDS, max(self.settings.actor_idle_seconds / 4, 0.05)))
            self._turns.forget_idle(TURN_LANE_IDLE_SECONDS)
            cutoff = time.monotonic() - self.settings.actor_idle_seconds
            for key, resident in list(self._residents.items()):
                if resident.waiting:
                    continue
                if resident.last_used < cutoff:
                    await self._passivate(key)
                    self._idle_passivations += 1
                elif resident.service is not None and resident.service.has_pending_access:
                    async with resident.mailbox:
                        await self._flush_heat(key, resident)

    async def _flush_heat(self, key: UserKey, resident: _Resident) -> None:
        """Write the user's batched recall heat; holding the mailbox. Heat is a hint: when it cannot be
        written it is dropped with the user's copy (reloaded from SQL on the next call), never retried."""
        if resident.service is None:
            return
        try:
            await asyncio.to_thread(resident.service.flush_access)
        except HermesError as exc:
            log.warning("%s: recall heat of %s not saved: %s", self.name, key[1], exc)
            resident.service = None

    # ------------------------------------------------------------------------------ outbox

    def _drain_once(self) -> int:
        with self._drain_lock:
            entries = outbox.pending_for(self.store, self._serves, OUTBOX_BATCH)
            if entries:
                with span("outbox.apply", host=self.name, entries=len(entries)):
                    outbox.settle(self.store, self._vector_index(), entries, self.embedder.dim)
                self._outbox_applied += len(entries)
            return len(entries)

    def _vector_index(self) -> Any:
        """Connected on first need (or at start, ``_connect_index``): a host serves recalls and writes while
        the index is down. Not under the lock: a caller does not wait out another's failing attempt; of two
        that connect at once, one client is kept."""
        if self._index is None:
            from actors.store.vectors.milvus import MilvusIndex

            index = MilvusIndex(self.settings.milvus_uri, self.settings.milvus_collection, self.embedder.dim)
            with self._index_lock:
                if self._index is None:
                    self._index = index
                else:
                    index.close()
        return self._index

    def _connect_index(self) -> None:
        try:
            self._vector_index()
        except Exception as exc:  # down now: the first read or outbox drain that needs it connects
            log.info("%s: vector index not connected at start: %s", self.name, exc)

    def _drain_forever(self) -> None:
        failures = 0
        while True:
            self._outbox_kick.wait(OUTBOX_POLL_SECONDS if not failures else min(30.0, 2.0**failures))
            self._outbox_kick.clear()
            time.sleep(OUTBOX_GATHER_SECONDS)
            try:
                while self._drain_once() >= OUTBOX_BATCH:
                    pass
                failures = 0
            except Exception as exc:  # the index or SQL is down: the entries stay and are applied later
                failures += 1
                if failures in (1, 10) or failures % 100 == 0:
                    log.warning("%s: outbox not drained (%d failures): %s", self.name, failures, exc)


HostActor = ray.remote(num_cpus=0)(UserHost)
HostHandle: TypeAlias = ActorProxy[UserHost]
