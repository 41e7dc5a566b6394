"""Shared by the trust tests (faults, erasure, isolation, hostile input) and ``tests/bench/bench_load.py``:
a private Hermes app on the session's Ray, a stream of idempotent writes that retries until acknowledged,
and the checks that look into every store directly (SQL rows, the Milvus index) instead of trusting the API.

Process safety: everything here kills only what it started — the private app's detached actors (its host
pool), by name in its own namespace, and processes whose pid came from an actor of that app.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import numpy as np
import ray

from actors.runtime.host import POOL_ACTOR_NAME, host_name
from actors.runtime.rendezvous import host_of
from actors.store.sql.store import MemoryStore
from actors.store.vectors.milvus import MilvusIndex
from schemas.errors import StoreUnavailable
from schemas.settings import HermesSettings

#: statuses a write may get while something is being killed; anything else fails the stream at once
RETRYABLE = {500, 502, 503, 504}
E5_DIM = 384


@dataclass
class PrivateApp:
    """A Hermes app of its own (namespace, SQLite file, Milvus collection, Serve route prefix)."""

    name: str
    base_url: str
    settings: HermesSettings
    store: MemoryStore

    def index(self) -> MilvusIndex:
        """A client of the app's Milvus. Under load, milvus-lite sometimes refuses a new connection
        ("too many pings"), so connecting is retried for a while before the check gives up."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return MilvusIndex(self.settings.milvus_uri, self.settings.milvus_collection, E5_DIM)
            except StoreUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)


@contextmanager
def private_app(serve_base: str, make_stack_settings, name: str, **overrides) -> Iterator[PrivateApp]:
    """Deploy a second Hermes app on the running Serve instance (``serve_base`` = the session app's URL)."""
    from ray import serve

    from serve.app import build_app

    settings = make_stack_settings(namespace=f"hermes-{name}", **overrides)
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    serve.run(build_app(settings), name=f"hermes-{name}", route_prefix=f"/{name}")
    try:
        yield PrivateApp(name, f"{serve_base}/{name}", settings, store)
    finally:
        serve.delete(f"hermes-{name}")
        kill_app_actors(settings.namespace)
        store.dispose()


def kill_app_actors(namespace: str) -> None:
    """The app's detached actors outlive ``serve.delete``: its hosts (users passivated first), then
    the pool."""
    try:
        pool = ray.get_actor(POOL_ACTOR_NAME, namespace=namespace)
    except ValueError:
        return
    size = ray.get(pool.size.remote(), timeout=60)
    for index in range(size):
        try:
            host = ray.get_actor(host_name(index), namespace=namespace)
            ray.get(host.passivate_all.remote(), timeout=60)
            ray.kill(host, no_restart=True)
        except (ValueError, ray.exceptions.RayError):
            pass
    ray.kill(pool, no_restart=True)


def user_host(settings: HermesSettings, tenant_id: str, user_id: str) -> ray.actor.ActorHandle:
    """The host that serves this user now."""
    pool = ray.get_actor(POOL_ACTOR_NAME, namespace=settings.namespace)
    size = ray.get(pool.size.remote(), timeout=60)
    return ray.get_actor(host_name(host_of(tenant_id, user_id, size)), namespace=settings.namespace)


def new_tenant(store: MemoryStore, **limits) -> tuple[str, str]:
    """(tenant id, API key) of a fresh tenant."""
    from actors.core.tenancy import TenantLimits

    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    return tenant_id, store.tenants.create(tenant_id, limits=TenantLimits(**limits))


# ------------------------------------------------------------------------------------- killing processes


def actor_pid(actor: ray.actor.ActorHandle) -> int:
    """The OS pid of an actor's worker process (asked of the actor itself: no state API needed)."""
    return ray.get(actor.__ray_call__.remote(lambda _self: os.getpid()), timeout=60)


def user_host_pid(settings: HermesSettings, tenant_id: str, user_id: str) -> int:
    return actor_pid(user_host(settings, tenant_id, user_id))


def replica_pids(app_name: str) -> list[int]:
    """Pids of the Serve replicas of one app (replica actors are named ``SERVE_REPLICA::<app>#...``)."""
    prefix = f"SERVE_REPLICA::{app_name}#"
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == "serve"]
    return [actor_pid(ray.get_actor(n, namespace="serve")) for n in names if n.startswith(prefix)]


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------------------------------ write stream


@dataclass
class Ack:
    """One acknowledged write: what the caller was told was stored."""

    user_id: str
    dialog_id: str
    text: str
    memory_ids: list[str]
    attempts: int


@dataclass
class StreamReport:
    acks: list[Ack] = field(default_factory=list)
    #: status (or exception name) → how many times an attempt got it before succeeding
    refusals: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)


WORDS = (
    "amber basil cedar dune ember fjord garnet harbor indigo juniper kelp lagoon maple nectar onyx pepper "
    "quartz rye saffron tundra umber violet willow yarrow zinnia"
).split()


def fact_text(n: int) -> str:
    """A distinct, memorable declaration per n (the extractor keeps "remember" turns). Its two made-up words
    are its own: sentences sharing most of their words would be taken for restatements of one fact."""
    a, b, c = WORDS[n % len(WORDS)], WORDS[(n // len(WORDS)) % len(WORDS)], WORDS[(n * 7 + 3) % len(WORDS)]
    return f"Remember this: locker {a}{n} is painted {c}{b}"


async def write_until_acknowledged(
    client: httpx.AsyncClient,
    key: str,
    user_id: str,
    n: int,
    report: StreamReport,
    deadline: float,
) -> None:
    """POST one turn with an Idempotency-Key, resending the same key until a 200 (or the deadline)."""
    dialog_id = f"d{n}"
    text = fact_text(n)
    body = {"session_id": f"s{n % 3}", "turns": [{"text": text, "dialog_id": dialog_id}]}
    headers = {"X-API-Key": key, "Idempotency-Key": f"{user_id}-w{n}"}
    attempts = 0
    while True:
        attempts += 1
        started = time.perf_counter()
        try:
            response = await client.post(f"/v1/users/{user_id}/turns", json=body, headers=headers)
            outcome = str(response.status_code)
        except httpx.HTTPError as exc:
            response, outcome = None, type(exc).__name__
        if response is not None and response.status_code == 200:
            report.latencies.append(time.perf_counter() - started)
            ids = [o["memory_id"] for o in response.json()["outcomes"]]
            report.acks.append(Ack(user_id, dialog_id, text, ids, attempts))
            return
        if response is not None and response.status_code not in RETRYABLE:
            raise AssertionError(f"write {n} of {user_id}: {response.status_code} {response.text[:300]}")
        report.refusals[outcome] = report.refusals.get(outcome, 0) + 1
        if time.monotonic() > deadline:
            raise AssertionError(f"write {n} of {user_id} never acknowledged; last: {outcome}")
        await asyncio.sleep(min(2.0, 0.2 * attempts))


# ---------------------------------------------------------------------------------------------- checks


def missing_acknowledged(
    store: MemoryStore, index: MilvusIndex, tenant_id: str, acks: list[Ack]
) -> list[str]:
    """Every acknowledged write, item by item: its memory in SQL carrying its dialog id, and the same memory
    found in Milvus by a search with its own stored vector. Returns what is missing (empty = all there)."""
    problems: list[str] = []
    by_user: dict[str, list[Ack]] = {}
    for ack in acks:
        by_user.setdefault(ack.user_id, []).append(ack)
    for user_id, user_acks in by_user.items():
        rows = {i.memory_id: i for i in store.memories.page(tenant_id, user_id, limit=100_000)}
        indexed = index.ids(tenant_id, user_id)
        for ack in user_acks:
            if not ack.memory_ids:
                problems.append(f"{user_id}/{ack.dialog_id}: acknowledged without a memory")
            for memory_id in ack.memory_ids:
                item = rows.get(memory_id)
                if item is None:
                    problems.append(f"{user_id}/{ack.dialog_id}: {memory_id} not in SQL")
                    continue
                if ack.dialog_id not in item.source_dialog_ids:
                    problems.append(f"{user_id}/{ack.dialog_id}: {memory_id} lost its dialog id")
                if memory_id not in indexed:
                    problems.append(f"{user_id}/{ack.dialog_id}: {memory_id} not in Milvus")
                    continue
                vector = np.frombuffer(item.embedding, dtype=np.float32)
                hits = index.search(tenant_id, user_id, vector, 3)
                if memory_id not in {h.memory_id for h in hits}:
                    problems.append(f"{user_id}/{ack.dialog_id}: {memory_id} not recallable by its vector")
    return problems


def duplicated_dialogs(store: MemoryStore, tenant_id: str, user_id: str) -> list[str]:
    """Dialog ids carried by more than one stored item: a write applied twice."""
    seen: dict[str, int] = {}
    for item in store.memories.page(tenant_id, user_id, limit=100_000):
        for dialog_id in item.source_dialog_ids:
            seen[dialog_id] = seen.get(dialog_id, 0) + 1
    return sorted(d for d, count in seen.items() if count > 1)


async def stream_writes(
    base_url: str,
    key: str,
    users: list[str],
    per_user: int,
    *,
    concurrency: int = 4,
    fault=None,
    fault_after: int = 0,
    timeout: float = 240.0,
    first: int = 0,
) -> StreamReport:
    """Write turns ``first`` .. ``per_user - 1`` for each user, ``concurrency`` at a time, each resent until
    acknowledged. Once ``fault_after`` writes are acknowledged, ``fault()`` runs (in a thread) while the
    stream goes on."""
    report = StreamReport()
    deadline = time.monotonic() + timeout
    gate = asyncio.Semaphore(concurrency)
    jobs = [(user, n) for n in range(first, per_user) for user in users]

    async def one(user: str, n: int) -> None:
        async with gate:
            await write_until_acknowledged(client, key, user, n, report, deadline)

    async def inject() -> None:
        while len(report.acks) < fault_after:
            await asyncio.sleep(0.05)
        await asyncio.to_thread(fault)

    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:
        tasks = [one(user, n) for user, n in jobs]
        if fault is not None:
            tasks.append(inject())
        await asyncio.gather(*tasks)
    return report


def converge(settings: HermesSettings) -> int:
    """Apply every pending vector-index outbox entry now (what the hosts do within a second by themselves);
    returns how many were applied."""
    pool = ray.get_actor(POOL_ACTOR_NAME, namespace=settings.namespace)
    return ray.get(pool.drain_outboxes.remote(), timeout=300)


def sql_traces(url: str, needles: list[str]) -> list[str]:
    """Every (table, needle) where a needle appears in any column of any row, across every table (rows are
    matched as their tuple repr, so ``"'t1', 'alice'"`` finds rows scoped to tenant t1 and user alice)."""
    from sqlalchemy import create_engine, select

    from actors.store.sql.tables import Base

    engine = create_engine(url)
    found = []
    try:
        with engine.connect() as connection:
            for table in Base.metadata.sorted_tables:
                for row in connection.execute(select(table)):
                    text = repr(tuple(row))
                    found += [f"{table.name}: {needle}" for needle in needles if needle in text]
    finally:
        engine.dispose()
    return found


def file_traces(paths: list, needles: list[str]) -> list[str]:
    """Needles present in the raw bytes of these files (a database and its write-ahead log)."""
    found = []
    for path in paths:
        if path.exists():
            data = path.read_bytes()
            found += [f"{path.name}: {needle}" for needle in needles if needle.encode() in data]
    return found
