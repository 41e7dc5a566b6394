"""The authenticator: what a key reaches (a tenant key every user, a per-user key its user only), and how
long a replica may keep trusting a key after it was revoked (the cache's time, on a fake clock)."""

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.app.directory import TenantDirectory
from actors.core.tenancy import KeyGrant
from actors.store.sql.store import MemoryStore
from schemas.ids import USER_ID_PATTERN
from serve.auth import KEY_CACHE_SECONDS, Authenticator, Forbidden, Unauthorized, check_reach


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'auth.db'}")
    store.create_schema()
    yield store
    store.dispose()


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_user_key_reaches_its_user_only_and_no_tenant_wide_operation(store):
    tenant_key = store.tenants.create("acme")
    _, alice_key = store.keys.mint_user_key("acme", "alice")
    auth = Authenticator(TenantDirectory(store), admin_key="")
    assert run(auth.tenant_for(tenant_key, "bob")) == run(auth.tenant_for(tenant_key, None)) == "acme"
    assert run(auth.tenant_for(alice_key, "alice")) == "acme"
    with pytest.raises(Forbidden, match="bound to user 'alice' and cannot reach another user"):
        run(auth.tenant_for(alice_key, "bob"))
    with pytest.raises(Forbidden, match="tenant-wide endpoints need a tenant key"):
        run(auth.tenant_for(alice_key, None))


@given(
    bound=st.from_regex(USER_ID_PATTERN, fullmatch=True), named=st.from_regex(USER_ID_PATTERN, fullmatch=True)
)
def test_a_bound_grant_passes_for_exactly_its_user(bound, named):
    grant = KeyGrant("acme", bound)
    if named == bound:
        check_reach(grant, named)
    else:
        with pytest.raises(Forbidden):
            check_reach(grant, named)
    check_reach(KeyGrant("acme"), named)  # a tenant key reaches everyone


def test_a_revoked_key_stops_within_the_cache_time(store):
    store.tenants.create("acme")
    info, key = store.keys.mint_user_key("acme", "alice")
    clock = Clock()
    auth = Authenticator(TenantDirectory(store), admin_key="", clock=clock)
    assert run(auth.tenant_for(key, "alice")) == "acme"
    store.keys.revoke("acme", info.key_id)
    clock.now += KEY_CACHE_SECONDS / 2
    assert run(auth.tenant_for(key, "alice")) == "acme"  # the replica's answer is still fresh
    clock.now += KEY_CACHE_SECONDS / 2
    with pytest.raises(Unauthorized):
        run(auth.tenant_for(key, "alice"))


def test_a_rotated_key_works_through_its_overlap(store):
    old = store.tenants.create("acme")
    auth = Authenticator(TenantDirectory(store), admin_key="", clock=Clock())
    new = store.keys.rotate("acme", overlap_seconds=60)
    assert run(auth.tenant_for(old)) == run(auth.tenant_for(new)) == "acme"
    store.keys.rotate("acme", overlap_seconds=0)
    fresh = Authenticator(TenantDirectory(store), admin_key="")
    assert run(fresh.tenant_for(old)) == "acme"  # the first rotation's overlap still runs
    with pytest.raises(Unauthorized):
        run(fresh.tenant_for(new))  # replaced with no overlap
