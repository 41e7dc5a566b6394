"""What every batch job shares: joining the cluster, reading SQL with Ray Data, running a user's maintenance
operation without racing live writes, run records with a root span, progress reporting, and the skeleton
the four jobs run on (``batch_job``).

**One skeleton** (``BatchJob``). Every job opens the store, resolves the tenants and the worker count,
records the run under a root span (``record``), reads SQL as a Ray Data dataset (``users``, ``read``), maps
a worker over it (``map``: a class in a fixed pool of actors, one CPU each, or a function in a pool of
tasks) while reporting progress, and disposes of the store; a job module only says what its worker does
and how its report adds up.

**Never racing live writes** (``UserRunner``). A job changes a user's memory the way a host does: it takes
the user's *lease* (so two jobs never work on one user), then *claims* the user (a new fencing epoch, which
makes any host's resident copy stale), runs the service operation in the Ray Data worker on freshly loaded
state and commits under that claim. A host that still holds the user notices the newer epoch at its next
check or commit, reloads from SQL and claims the user back; a job whose claim was taken meanwhile has its
commit refused (``OwnershipLost``) and tries the user once more. Either way no decision is ever committed
from stale state (docs/architecture.md, "Fencing").
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import ray

from actors.adapters.embedding import make_embedder
from actors.adapters.tracing import attached, inject_context, span
from actors.app.maintenance import MaintenanceOperations
from actors.app.service import UserMemoryService
from actors.core.memory import MemoryItem
from actors.store.sql.jobs import SqlRead
from actors.store.sql.store import MemoryStore
from schemas.errors import InvalidInput, OwnershipLost, StoreUnavailable, UserBusy
from schemas.ids import check_tenant_id
from schemas.settings import GatePolicy, HermesSettings

log = logging.getLogger("hermes.jobs")

T = TypeVar("T")

#: how long a job may hold a user's lease; one user's operation takes well under a second, and another job
#: waits at most this long if the job died holding it
LEASE_SECONDS = 120.0
#: users per Ray Data batch: small enough for even load and frequent progress, big enough to amortise
USERS_PER_BATCH = 16
#: the file ``hermes-memory up`` writes with its Ray address, so ``hermes-memory jobs`` can join that cluster
RAY_ADDRESS_FILE = "ray.address"


# ------------------------------------------------------------------------------------------- cluster


def connect(settings: HermesSettings) -> None:
    """Join the cluster (``HERMES_RAY_ADDRESS``, ``RAY_ADDRESS`` as under ``ray job submit``, or the local
    stack of ``settings.home``); a process already connected stays as it is."""
    if ray.is_initialized():
        return
    address = settings.ray_address or os.environ.get("RAY_ADDRESS")
    if not address:
        address = _stack_address(settings.home)
        if address:
            _same_auth_as_a_local_cluster()
    if not address:
        raise StoreUnavailable(
            "no Ray cluster to run on: start the stack (hermes-memory up), or set HERMES_RAY_ADDRESS"
        )
    ray.init(address=address, namespace=settings.namespace, log_to_driver=False)


def _stack_address(home: Path) -> str:
    recorded = Path(home) / RAY_ADDRESS_FILE
    return recorded.read_text().strip() if recorded.exists() else ""


def _same_auth_as_a_local_cluster() -> None:
    """The stack's private Ray turned token auth on as it started (Ray's default for a new local cluster);
    Ray turns it on by itself for a cluster it discovers, not for one given by address: do what it does
    for a discovered one (token auth when a token exists, unless ``RAY_AUTH_MODE`` says otherwise)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token auth
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def resolve_tenants(store: MemoryStore, tenants: list[str] | None) -> list[str]:
    known = store.tenants.ids()
    if not tenants:
        return known
    unknown = [t for t in tenants if check_tenant_id(t) not in known]
    if unknown:
        raise InvalidInput(f"unknown tenant(s): {', '.join(unknown)}")
    return list(dict.fromkeys(tenants))


# ---------------------------------------------------------------------------------------- SQL reads


def read_sql(read: SqlRead) -> ray.data.Dataset:
    """A Ray Data dataset of the rows of a read the store prepared (``actors.store.sql.jobs``)."""
    return ray.data.read_sql(read.sql, read.connect, sql_params=read.params)


def rows_of(batch: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of a Ray Data batch in ``numpy`` format."""
    columns = list(batch)
    for values in zip(*(batch[c] for c in columns), strict=True):
        yield {c: (v.item() if hasattr(v, "item") else v) for c, v in zip(columns, values, strict=True)}


# ------------------------------------------------------------------------------ one user, safely


@dataclass(slots=True)
class UserOutcome:
    result: Any
    #: the user's active items after the operation
    active: list[MemoryItem]


class UserRunner:
    """Runs a maintenance operation of one user's ``UserMemoryService`` (``ServiceMaintenance``), fenced
    against live writes."""

    def __init__(self, settings: HermesSettings, holder: str):
        self.settings = settings
        self.holder = holder
        self.store = MemoryStore.from_settings(settings)
        # loaded on first use: most passes embed nothing (summaries reuse their sources' vectors)
        self.embedder = make_embedder(settings.embedder, num_threads=1)
        self._policies: dict[str, GatePolicy] = {}

    def run(
        self, tenant_id: str, user_id: str, operation: Callable[[MaintenanceOperations], T]
    ) -> UserOutcome:
        """``operation(maintenance)`` calls one maintenance operation of the user's service, e.g.
        ``lambda m: m.consolidate()``."""
        if not self.store.jobs.acquire_lease(tenant_id, user_id, self.holder, LEASE_SECONDS):
            raise UserBusy(f"user {user_id!r} of {tenant_id!r} is held by another job")
        try:
            for attempt in (1, 2):
                service = self._service(tenant_id, user_id)
                try:
                    return UserOutcome(operation(service.maintenance), service.work.engine.active())
                except OwnershipLost:
                    if attempt == 2:
                        raise UserBusy(f"user {user_id!r} of {tenant_id!r} is too busy to maintain") from None
        finally:
            self.store.jobs.release_lease(tenant_id, user_id, self.holder)
        raise AssertionError("unreachable")

    def _service(self, tenant_id: str, user_id: str) -> UserMemoryService:
        if tenant_id not in self._policies:
            self._policies[tenant_id] = self.store.tenants.policy(tenant_id)
        return UserMemoryService(
            tenant_id,
            user_id,
            store=self.store,
            embedder=self.embedder,
            policy=self._policies[tenant_id],
            fence=self.store.fencing.claim(tenant_id, user_id, f"job:{self.holder}"[:64]),
        )


# ------------------------------------------------------------------------------ runs and progress


@contextmanager
def traced_batch(name: str, trace_context: dict[str, str], **attributes: object) -> Iterator[None]:
    """A Ray Data batch as a child span of the job's root span; spans are flushed when it ends, since
    Ray Data stops its workers without a shutdown that would flush a batching exporter."""
    from actors.adapters.telemetry import flush

    try:
        with attached(trace_context), span(name, **attributes):
            yield
    finally:
        flush()


@dataclass
class JobRun:
    run_id: str
    trace_context: dict[str, str]
    report: dict[str, Any]


@contextmanager
def job_run(store: MemoryStore, job: str, params: dict[str, Any]) -> Iterator[JobRun]:
    """Record the run (``job_runs``) and trace it: the root span ``job.<name>``, whose context the workers
    receive. The run ends ``succeeded`` with ``run.report``, or ``failed`` with the error."""
    run = JobRun(store.jobs.start_run(job, params), {}, {})
    started = time.monotonic()
    with span(f"job.{job}", run_id=run.run_id) as root:
        run.trace_context = inject_context()
        try:
            yield run
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            store.jobs.finish_run(run.run_id, "failed", {**run.report, "error": error})
            raise
        seconds = time.monotonic() - started
        run.report = {"run_id": run.run_id, **run.report, "seconds": round(seconds, 2)}
        if "memories" in run.report:
            run.report["memories_per_second"] = round(run.report["memories"] / max(seconds, 1e-9), 1)
        for key, value in run.report.items():
            if isinstance(value, int | float | str):
                root.set_attribute(f"report.{key}", value)
    store.jobs.finish_run(run.run_id, "succeeded", run.report)
    log.info("%s %s: %s", job, run.run_id, run.report)


class Progress:
    """Counts in the job log every few seconds, and optionally a tqdm bar (the CLI)."""

    def __init__(
        self, job: str, total: int, bar: bool = False, unit: str = "user", every_seconds: float = 5.0
    ):
        self.job, self.total, self.done, self.unit = job, total, 0, unit
        self._every = every_seconds
        self._last = time.monotonic()
        self._bar = None
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=job, unit=unit, dynamic_ncols=True)

    def update(self, count: int, **figures: object) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(count)
            if figures:
                self._bar.set_postfix(figures, refresh=False)
        if time.monotonic() - self._last >= self._every or self.done >= self.total:
            self._last = time.monotonic()
            log.info("%s: %d/%d %ss %s", self.job, self.done, self.total, self.unit, figures or "")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# ------------------------------------------------------------------------------ the job skeleton


@contextmanager
def batch_job(
    settings: HermesSettings,
    name: str,
    tenants: list[str] | None,
    parallelism: int | None,
    progress_bar: bool,
) -> Iterator[BatchJob]:
    """The store open for one job over the tenants (default: all), disposed of when the job ends."""
    store = MemoryStore.from_settings(settings)
    try:
        checked = resolve_tenants(store, tenants)
        yield BatchJob(settings, name, store, checked, parallelism or cluster_cpus(), progress_bar)
    finally:
        store.dispose()


@dataclass
class BatchJob:
    settings: HermesSettings
    name: str
    store: MemoryStore
    #: the tenants the job runs over, checked
    tenants: list[str]
    #: Ray Data workers at most (default: one per CPU of the cluster)
    workers: int
    progress_bar: bool

    def record(self, **params: Any) -> AbstractContextManager[JobRun]:
        """The run recorded in ``job_runs`` with its parameters, under the root span ``job.<name>``."""
        params = {"tenants": self.tenants, "parallelism": self.workers, **params}
        return job_run(self.store, self.name, params)

    def progress(self, total: int, unit: str = "user") -> Progress:
        return Progress(self.name, total, bar=self.progress_bar, unit=unit)

    def read(self, read: SqlRead) -> ray.data.Dataset:
        """The read's rows, read once and kept (``materialize``): counted, then mapped."""
        return read_sql(read).materialize()

    def users(
        self,
        tenants: list[str],
        holding: str = "any",
        only: list[str] | None = None,
        consenting_only: bool = False,
    ) -> ray.data.Dataset | None:
        """The tenants' users that hold items (``JobRecords.users_read``), only the users named in ``only``
        when given; None without tenants."""
        if not tenants:
            return None
        users = read_sql(self.store.jobs.users_read(tenants, holding, consenting_only))
        if only:
            wanted = set(only)
            users = users.filter(lambda row: row["user_id"] in wanted)
        return users.materialize()

    def map(
        self,
        rows: ray.data.Dataset,
        worker: Callable[..., Any],
        run: JobRun,
        batch_size: int = USERS_PER_BATCH,
        **arguments: Any,
    ) -> Iterator[list[dict[str, Any]]]:
        """The rows ``worker`` returns for each batch of ``rows``, as they come. Every worker is given the
        settings (``settings_json``), the run's trace context and ``arguments``; a class is built once per
        actor of a pool of at most ``workers`` (one CPU each), a function runs in at most ``workers``
        tasks."""
        total = rows.count()
        if not total:
            return
        given = {"settings_json": self.settings.model_dump_json(), "trace_context": run.trace_context}
        given |= arguments
        if isinstance(worker, type):
            mapped = rows.map_batches(
                worker,
                fn_constructor_kwargs=given,
                batch_size=batch_size,
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=min(self.workers, total)),
                num_cpus=1,
            )
        else:
            mapped = rows.map_batches(
                worker,
                fn_kwargs=given,
                batch_size=batch_size,
                batch_format="numpy",
                compute=ray.data.TaskPoolStrategy(size=self.workers),
            )
        for batch in mapped.iter_batches(batch_size=None, batch_format="numpy"):
            yield list(rows_of(batch))
