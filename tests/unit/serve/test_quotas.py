"""Per-tenant rate limits and user quotas (``serve.quotas``) over a real SQLite store, on a fake clock."""

import asyncio

import pytest

from actors.app.commands import Effect, Recall, WriteMemory, WriteTurns
from actors.app.directory import TenantDirectory
from actors.core.memory import GateChanges, MemoryItem
from actors.core.tenancy import TenantLimits
from actors.store.sql.store import MemoryStore
from schemas.enums import Kind
from schemas.errors import QuotaExceeded, RateLimited
from serve.quotas import Quotas


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'q.db'}")
    store.create_schema()
    yield store
    store.dispose()


def remember(store: MemoryStore, tenant: str, user: str) -> None:
    changes = GateChanges()
    item = MemoryItem(tenant_id=tenant, user_id=user, content=f"{user} likes tea", kind=Kind.PREFERENCE)
    changes.upserted[item.memory_id] = item
    store.memories.commit(changes)


def admit(quotas: Quotas, tenant: str, user: str = "u1", effect: Effect = Recall.effect) -> None:
    asyncio.run(quotas.admit(tenant, user, effect))


def test_rate_limit_refuses_past_the_allowance_and_refills(store):
    store.tenants.create("acme", limits=TenantLimits(requests_per_minute=3))
    store.tenants.create("calm")
    clock = Clock()
    quotas = Quotas(TenantDirectory(store), clock=clock)
    for _ in range(3):
        admit(quotas, "acme")
    with pytest.raises(RateLimited) as refused:
        admit(quotas, "acme")
    assert refused.value.status_code == 429 and refused.value.retry_after_seconds == 20
    for _ in range(50):
        admit(quotas, "calm")  # another tenant, no limit: untouched by acme's bucket
    clock.now += 20
    admit(quotas, "acme")  # one token back after 60/3 seconds
    with pytest.raises(RateLimited):
        admit(quotas, "acme")


def test_user_quota_refuses_only_writes_for_new_users(store):
    store.tenants.create("acme", limits=TenantLimits(max_users=2))
    remember(store, "acme", "alice")
    remember(store, "acme", "bob")
    quotas = Quotas(TenantDirectory(store), clock=Clock())
    admit(quotas, "acme", "alice", WriteTurns.effect)  # existing users keep writing
    admit(quotas, "acme", "carol", Recall.effect)  # reads never hit the user quota
    with pytest.raises(QuotaExceeded):
        admit(quotas, "acme", "carol", WriteMemory.effect)


def test_changed_limits_apply_after_the_refresh(store):
    store.tenants.create("acme")
    clock = Clock()
    quotas = Quotas(TenantDirectory(store), refresh_seconds=5, clock=clock)
    admit(quotas, "acme")
    store.tenants.set_limits("acme", TenantLimits(requests_per_minute=1))
    admit(quotas, "acme")  # cached: still unlimited
    clock.now += 5
    admit(quotas, "acme")
    with pytest.raises(RateLimited):
        admit(quotas, "acme")
    assert store.tenants.limits("acme") == TenantLimits(requests_per_minute=1)
