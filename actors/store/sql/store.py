"""The SQL store: the source of truth of Hermes Memory (SQLite by default, PostgreSQL by URL).

``MemoryStore`` opens the database once and holds one repository per aggregate, each sharing its sessions
(``actors.store.sql.database``): ``memories`` (a user's items and the change sets committed to them),
``audit``, ``alerts``, ``snapshots`` (session snapshots), ``erasure`` (forgetting and tombstones),
``tenants``, ``keys`` (API keys), ``fencing`` (who owns a user), ``outbox`` (the vector-index outbox),
``jobs`` (the batch jobs' records and reads), ``transfer`` (export and import) and ``views`` (operators'
tenant-wide reads). They take and return the domain records of ``actors.core``; errors are those of
``schemas.errors``: ``NotFound``, ``ConcurrentUpdate`` (optimistic lock, retry), ``StoreUnavailable``
(retry later) and ``InvalidInput``.
"""

from __future__ import annotations

from typing import Self

from actors.store.sql.alerts import Alerts
from actors.store.sql.audit import AuditTrail
from actors.store.sql.database import Database
from actors.store.sql.forget import Erasure
from actors.store.sql.jobs import JobRecords
from actors.store.sql.memories import Memories
from actors.store.sql.ownership import Fencing, Outbox
from actors.store.sql.snapshots import SessionSnapshots
from actors.store.sql.tenant_views import TenantViews
from actors.store.sql.tenants import Keys, Tenants
from actors.store.sql.transfer import TransferRecords
from schemas.settings import GatePolicy, HermesSettings


class MemoryStore:
    def __init__(self, url: str, *, echo: bool = False, default_policy: GatePolicy | None = None):
        self.database = Database(url, echo=echo)
        self.memories = Memories(self.database)
        self.audit = AuditTrail(self.database)
        self.alerts = Alerts(self.database)
        self.snapshots = SessionSnapshots(self.database)
        self.erasure = Erasure(self.database)
        #: ``default_policy``: the policy of tenants without overrides (``HermesSettings.policy``)
        self.tenants = Tenants(self.database, default_policy or GatePolicy())
        self.keys = Keys(self.database)
        self.fencing = Fencing(self.database)
        self.outbox = Outbox(self.database)
        self.jobs = JobRecords(self.database)
        self.transfer = TransferRecords(self.database)
        self.views = TenantViews(self.database)

    @classmethod
    def from_settings(cls, settings: HermesSettings) -> Self:
        if not settings.sql_url:
            settings.home.mkdir(parents=True, exist_ok=True)
        return cls(settings.resolved_sql_url(), default_policy=settings.policy)

    @property
    def url(self) -> str:
        return self.database.url

    def create_schema(self) -> None:
        self.database.create_schema()

    def dispose(self) -> None:
        self.database.dispose()
