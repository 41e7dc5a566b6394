"""The SQL store on SQLite: round trips, the optimistic lock, atomicity, scoping, keys, forgetting.

``tests/stack/test_sql_postgres.py`` imports every test here and runs it again over PostgreSQL by
overriding the ``store_url`` fixture, so tests must use only the fixtures below.
"""

import hashlib
import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, func, select, text

from actors.core.memory import Alert, AuditEvent, GateChanges, MemoryItem
from actors.core.tenancy import KeyGrant
from actors.store.sql.store import MemoryStore
from actors.store.sql.tables import AuditEventRow, Base, MemoryItemRow, TenantRow, TombstoneRow
from schemas.enums import AlertKind, AlertStatus, Kind, Layer, Polarity, Source, State
from schemas.errors import ConcurrentUpdate, InvalidInput, NotFound, StoreUnavailable
from schemas.ids import InvalidIdentifier, new_memory_id
from schemas.settings import Capacities, GatePolicy, HermesSettings

A, B = "acme", "beta"
ALICE, BOB = "alice", "bob"
SHANGHAI = timezone(timedelta(hours=8))


@pytest.fixture
def store_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'hermes.db'}"


@pytest.fixture
def store(store_url):
    memory_store = MemoryStore(store_url)
    memory_store.create_schema()
    for tenant_id in (A, B):
        memory_store.tenants.create(tenant_id, tenant_id.title())
    yield memory_store
    memory_store.dispose()


@pytest.fixture
def second_store(store, store_url):
    """Another store on the same database: what a second process (another actor, a job) would hold."""
    other = MemoryStore(store_url)
    yield other
    other.dispose()


def item(
    tenant_id: str = A, user_id: str = ALICE, content: str = "I live in Hangzhou", **fields
) -> MemoryItem:
    return MemoryItem(tenant_id=tenant_id, user_id=user_id, content=content, kind=Kind.FACT, **fields)


def event(target: MemoryItem, action: str = "create") -> AuditEvent:
    return AuditEvent(
        target.tenant_id,
        target.user_id,
        target.memory_id,
        action,
        "user",
        "test",
        None,
        target.snapshot(),
        "d1",
    )


def alert(target: MemoryItem) -> Alert:
    return Alert(target.tenant_id, target.user_id, AlertKind.FROZEN_CONFLICT, target.memory_id, "conflict")


def changes(*items: MemoryItem, events=(), alerts=()) -> GateChanges:
    return GateChanges(upserted={i.memory_id: i for i in items}, events=list(events), alerts=list(alerts))


def stored(store: MemoryStore, *items: MemoryItem) -> list[MemoryItem]:
    store.memories.commit(changes(*items, events=[event(i) for i in items]))
    return list(items)


def count_rows(store: MemoryStore, model, **where) -> int:
    engine = create_engine(store.url)
    try:
        with engine.connect() as connection:
            query = select(func.count()).select_from(model)
            for column, value in where.items():
                query = query.where(getattr(model, column) == value)
            return connection.scalar(query)
    finally:
        engine.dispose()


# schema


def test_migrations_build_exactly_the_models_and_rerun_as_no_op(store):
    store.create_schema()  # second run: already at head
    engine = create_engine(store.url)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
        assert connection.scalar(text("SELECT version_num FROM alembic_version")) == "0008"
    engine.dispose()


def test_every_memory_item_field_has_a_column():
    columns = set(MemoryItemRow.__table__.columns.keys())
    assert {name for name in MemoryItem.__dataclass_fields__} <= columns


# round trips


def test_every_field_round_trips_with_aware_utc_datetimes(store):
    moment = datetime(2026, 3, 1, 20, 30, 15, 123456, tzinfo=SHANGHAI)
    original = item(
        content="我对花生过敏",
        layer=Layer.CORE,
        state=State.FROZEN,
        polarity=Polarity.NEGATIVE,
        slot="basic.allergy",
        value="peanut",
        importance=0.91,
        confidence=0.97,
        decay_score=0.33,
        write_score=0.8,
        access_count=7,
        source=Source.USER_REPEATED,
        source_session_id="s-1",
        source_dialog_ids=["d1", "d2"],
        confirmed_sessions=["s-1", "s-2"],
        contradiction_count=2,
        positive_engagements=1,
        forced=True,
        created_at=moment,
        updated_at=moment + timedelta(seconds=1),
        last_accessed_at=moment + timedelta(days=3),
        frozen_at=moment + timedelta(hours=2),
        archived_at=None,
        supersedes=[new_memory_id()],
        superseded_by=new_memory_id(),
        conflicts_with=[new_memory_id()],
        complements=[new_memory_id(), new_memory_id()],
        merged_from=[new_memory_id()],
    )
    expected = original.copy()
    store.memories.commit(changes(original))
    loaded = store.memories.get(A, ALICE, original.memory_id)
    assert loaded == expected
    for name in ("created_at", "updated_at", "last_accessed_at", "frozen_at"):
        assert getattr(loaded, name).utcoffset() == timedelta(0), name
    assert loaded.created_at.hour == 12  # 20:30 at +08:00 is 12:30 UTC
    assert isinstance(loaded.layer, Layer) and isinstance(loaded.source, Source)


TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=60)
IDS = st.lists(st.from_regex(r"[a-z0-9][a-z0-9_.:-]{0,20}", fullmatch=True), max_size=5)
MOMENTS = st.datetimes(
    min_value=datetime(1971, 1, 1),
    max_value=datetime(2199, 12, 31),
    timezones=st.integers(-12 * 60, 14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes))),
)
UNIT = st.floats(min_value=0, max_value=1)
ITEMS = st.builds(
    MemoryItem,
    tenant_id=st.just(A),
    user_id=st.sampled_from([ALICE, BOB]),
    content=TEXT.filter(str.strip),
    kind=st.sampled_from(Kind),
    layer=st.sampled_from(Layer),
    state=st.sampled_from(State),
    polarity=st.sampled_from(Polarity),
    slot=st.none() | st.sampled_from(["basic.residence", "preference.diet"]),
    value=st.none() | TEXT,
    importance=UNIT,
    confidence=UNIT,
    decay_score=st.floats(min_value=-1e6, max_value=1e6),
    write_score=UNIT,
    access_count=st.integers(0, 2**31 - 1),
    source=st.sampled_from(Source),
    source_session_id=st.none() | st.from_regex(r"s[0-9]{1,6}", fullmatch=True),
    source_dialog_ids=IDS,
    confirmed_sessions=IDS,
    contradiction_count=st.integers(0, 1000),
    positive_engagements=st.integers(0, 1000),
    forced=st.booleans(),
    created_at=MOMENTS,
    updated_at=MOMENTS,
    last_accessed_at=MOMENTS,
    frozen_at=st.none() | MOMENTS,
    archived_at=st.none() | MOMENTS,
    supersedes=IDS,
    superseded_by=st.none() | st.builds(new_memory_id),
    conflicts_with=IDS,
    complements=IDS,
    merged_from=IDS,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(original=ITEMS, replacement=ITEMS)
def test_any_memory_item_round_trips_on_insert_and_update(store, original, replacement):
    expected = original.copy()
    store.memories.commit(changes(original))
    loaded = store.memories.get(A, original.user_id, original.memory_id)
    assert loaded == expected

    replacement.memory_id, replacement.user_id, replacement.version = (
        original.memory_id,
        original.user_id,
        original.version,
    )
    expected = replacement.copy()
    # every upserted item is written and moves the version (the gate upserts only what it changed)
    expected.version = 2
    store.memories.commit(changes(replacement))
    assert replacement.version == expected.version
    assert store.memories.get(A, original.user_id, original.memory_id) == expected


def test_nul_in_content_is_stored_exactly_or_refused(store):
    nul = item(content="before\x00after")
    try:
        store.memories.commit(changes(nul))
    except InvalidInput:  # PostgreSQL text cannot hold NUL: refused, never truncated
        assert store.memories.count(A, ALICE) == 0
    else:
        assert store.memories.get(A, ALICE, nul.memory_id).content == "before\x00after"


# optimistic lock and atomicity


def test_versions_start_at_one_and_follow_each_update(store):
    (first,) = stored(store, item())
    assert first.version == 1
    first.importance = 0.9
    store.memories.commit(changes(first))
    assert first.version == 2 == store.memories.get(A, ALICE, first.memory_id).version


def test_stale_copy_is_refused_and_nothing_of_its_commit_lands(store):
    (original,) = stored(store, item())
    winner = store.memories.get(A, ALICE, original.memory_id)
    loser = store.memories.get(A, ALICE, original.memory_id)
    winner.content = "I live in Suzhou"
    store.memories.commit(changes(winner))

    loser.content = "I live in Ningbo"
    bystander = item(content="I like tea")
    with pytest.raises(ConcurrentUpdate):
        store.memories.commit(
            changes(loser, bystander, events=[event(loser, "update")], alerts=[alert(loser)]),
            request_id="req-1",
            result={"ok": True},
        )
    assert store.memories.get(A, ALICE, original.memory_id).content == "I live in Suzhou"
    assert loser.version == 1 and bystander.version == 1  # the caller's copies are untouched too
    with pytest.raises(NotFound):
        store.memories.get(A, ALICE, bystander.memory_id)
    assert [e.action for e in store.audit.events(A, ALICE)] == ["create"]
    assert store.alerts.find(A, ALICE) == []
    assert store.memories.applied_result(A, ALICE, "req-1") is None


def test_two_stores_on_one_database_conflict_like_two_processes(store, second_store):
    (original,) = stored(store, item())
    mine = store.memories.get(A, ALICE, original.memory_id)
    theirs = second_store.memories.get(A, ALICE, original.memory_id)
    theirs.access_count += 1
    second_store.memories.commit(changes(theirs))
    mine.access_count += 1
    with pytest.raises(ConcurrentUpdate):
        store.memories.commit(changes(mine))
    reloaded = store.memories.get(A, ALICE, original.memory_id)
    reloaded.access_count += 1
    store.memories.commit(changes(reloaded))
    assert second_store.memories.get(A, ALICE, original.memory_id).access_count == 2


def test_a_failure_late_in_the_commit_rolls_back_the_earlier_writes(store):
    (mine,) = stored(store, item())
    (foreign,) = stored(store, item(tenant_id=B, content="beta's secret"))
    mine.content = "changed"
    # the same memory id under another tenant: the insert collides with B's row
    collision = item(content="overwrite attempt", memory_id=foreign.memory_id)
    with pytest.raises(ConcurrentUpdate):
        store.memories.commit(changes(mine, collision, events=[event(mine, "update")]))
    assert store.memories.get(A, ALICE, mine.memory_id).content == "I live in Hangzhou"
    assert store.memories.get(B, ALICE, foreign.memory_id).content == "beta's secret"
    assert len(store.audit.events(A, ALICE)) == 1


def test_commit_rejects_change_sets_spanning_users_and_unknown_tenants(store):
    with pytest.raises(InvalidInput):
        store.memories.commit(changes(item(user_id=ALICE), item(user_id=BOB)))
    with pytest.raises(NotFound):
        store.memories.commit(changes(item(tenant_id="ghost")))
    with pytest.raises(InvalidIdentifier):
        store.memories.commit(changes(item(user_id="bad user")))
    assert store.memories.count(A, ALICE) == store.memories.count(A, BOB) == 0


# scoping


def test_no_read_or_write_crosses_tenant_or_user(store):
    archived = item(content="old address", layer=Layer.ARCHIVE, state=State.ARCHIVED, slot="basic.residence")
    (active,) = stored(store, item(slot="basic.residence"))
    stored(store, archived)
    store.memories.commit(changes(alerts=[alert(active)]), request_id="r1", result={"n": 1})
    store.snapshots.save(A, ALICE, "s1", "context")

    for tenant_id, user_id in ((B, ALICE), (A, BOB)):
        assert store.memories.load_active(tenant_id, user_id) == []
        assert store.memories.page(tenant_id, user_id) == []
        assert store.memories.count(tenant_id, user_id) == 0
        assert store.memories.archived(tenant_id, user_id, slot="basic.residence") == []
        assert store.memories.archived(tenant_id, user_id, content_hash=archived.content_hash) == []
        assert store.audit.events(tenant_id, user_id, active.memory_id) == []
        assert store.alerts.find(tenant_id, user_id, status=None) == []
        assert store.memories.applied_result(tenant_id, user_id, "r1") is None
        assert store.snapshots.get(tenant_id, user_id, "s1") is None
        with pytest.raises(NotFound):
            store.memories.get(tenant_id, user_id, active.memory_id)
        with pytest.raises(NotFound):
            store.erasure.forget_item(tenant_id, user_id, active.memory_id, reason="r", actor="user")
        assert store.erasure.erase_user(tenant_id, user_id, reason="r") == 0
    assert store.alerts.find(B) == [] and store.memories.users(B) == []
    assert store.memories.count(A, ALICE) == 2 and len(store.alerts.find(A, ALICE)) == 1


def test_queries_filter_order_and_page(store):
    start = datetime(2026, 1, 1, tzinfo=UTC)
    working = [item(content=f"note {n}", created_at=start + timedelta(minutes=n)) for n in range(5)]
    archived = [
        item(
            content=f"old {n}",
            layer=Layer.ARCHIVE,
            state=State.ARCHIVED,
            slot="basic.residence",
            archived_at=start + timedelta(days=n),
        )
        for n in range(3)
    ]
    expired = item(content="expired", layer=Layer.LONGTERM, state=State.EXPIRED)
    stored(store, *working, *archived, expired)
    stored(store, item(user_id=BOB))

    assert {i.memory_id for i in store.memories.load_active(A, ALICE)} == {i.memory_id for i in working}
    pages = [store.memories.page(A, ALICE, layers=[Layer.WORKING], limit=2, offset=o) for o in (0, 2, 4)]
    assert [i.content for page in pages for i in page] == [f"note {n}" for n in range(4, -1, -1)]
    assert store.memories.count(A, ALICE) == 9
    assert store.memories.count(A, ALICE, layers=[Layer.ARCHIVE], states=[State.ARCHIVED]) == 3
    assert store.memories.count(A, ALICE, states=[State.EXPIRED]) == 1
    assert [i.content for i in store.memories.archived(A, ALICE, slot="basic.residence")] == [
        "old 2",
        "old 1",
        "old 0",
    ]
    assert [i.content for i in store.memories.archived(A, ALICE, content_hash=archived[1].content_hash)] == [
        "old 1"
    ]
    assert store.memories.archived(A, ALICE, content_hash=working[0].content_hash) == []
    assert store.memories.users(A) == [ALICE, BOB]


# tenants and keys


def test_api_keys_are_hashed_and_authenticate_only_their_tenant(store):
    key = store.tenants.create("acme_eu", "Acme EU")
    assert key.startswith("hm_acme_eu_")
    assert store.keys.authenticate(key) == KeyGrant("acme_eu")
    engine = create_engine(store.url)
    with engine.connect() as connection:
        digest = connection.scalar(select(TenantRow.api_key_hash).where(TenantRow.tenant_id == "acme_eu"))
    engine.dispose()
    assert digest == hashlib.sha256(key.encode()).hexdigest() and key not in digest

    secret = key.rsplit("_", 1)[1]
    for forged in (
        key[:-1] + ("0" if key[-1] != "0" else "1"),
        f"hm_{A}_{secret}",
        "hm_acme_eu",
        "",
        "nonsense",
    ):
        assert store.keys.authenticate(forged) is None, forged
    rotated = store.keys.rotate("acme_eu")
    assert store.keys.authenticate(rotated) == KeyGrant("acme_eu") and store.keys.authenticate(key) is None
    with pytest.raises(NotFound):
        store.keys.rotate("ghost")


def test_rotation_keeps_the_old_key_during_its_overlap_only(store):
    old = store.tenants.create("acme_eu")
    new = store.keys.rotate("acme_eu", overlap_seconds=600)
    assert store.keys.authenticate(old) == store.keys.authenticate(new) == KeyGrant("acme_eu")
    (previous,) = store.keys.of_tenant("acme_eu")
    assert previous.user_id is None and previous.expires_at is not None
    store.keys.revoke("acme_eu", previous.key_id)
    assert store.keys.authenticate(old) is None and store.keys.authenticate(new) == KeyGrant("acme_eu")
    assert (
        store.keys.of_tenant("acme_eu") == []
        and len(store.keys.of_tenant("acme_eu", include_expired=True)) == 1
    )
    with pytest.raises(InvalidInput):
        store.keys.rotate("acme_eu", overlap_seconds=-1)


def test_a_user_key_reaches_its_user_of_its_tenant_until_revoked(store):
    store.tenants.create("acme_eu")
    other_key = store.tenants.create("globex")
    info, key = store.keys.mint_user_key("acme_eu", ALICE, label="alice's agent")
    assert key.startswith("hm_acme_eu_") and info.user_id == ALICE and info.expires_at is None
    assert store.keys.authenticate(key) == KeyGrant("acme_eu", ALICE)
    secret = key.rsplit("_", 1)[1]
    assert store.keys.authenticate(f"hm_globex_{secret}") is None  # a key is its tenant's only
    assert store.keys.authenticate(other_key) == KeyGrant("globex")
    with pytest.raises(NotFound):
        store.keys.revoke("globex", info.key_id)  # another tenant cannot revoke it
    assert store.keys.authenticate(key) == KeyGrant("acme_eu", ALICE)
    graced = store.keys.revoke("acme_eu", info.key_id, grace_seconds=600)
    assert graced.expires_at is not None and store.keys.authenticate(key) == KeyGrant("acme_eu", ALICE)
    store.keys.revoke("acme_eu", info.key_id)
    assert store.keys.authenticate(key) is None
    assert store.keys.revoke("acme_eu", info.key_id, grace_seconds=600).expires_at <= datetime.now(UTC)
    with pytest.raises(InvalidIdentifier):
        store.keys.mint_user_key("acme_eu", "bad id")
    with pytest.raises(NotFound):
        store.keys.mint_user_key("ghost", ALICE)


def test_tenant_creation_validates_and_refuses_duplicates(store):
    with pytest.raises(InvalidInput):
        store.tenants.create(A)
    with pytest.raises(InvalidIdentifier):
        store.tenants.create("bad-tenant!")


def test_tenant_policy_is_the_service_default_unless_overridden(store, store_url):
    custom = GatePolicy(capacities=Capacities(working=5, core=3), write_threshold=0.4)
    store.tenants.create("custom", policy=custom, group_profile_consent=True)
    assert store.tenants.policy("custom") == custom
    assert store.tenants.policy(A) == GatePolicy()
    assert store.tenants.group_profile_consent("custom") and not store.tenants.group_profile_consent(A)
    assert store.tenants.ids() == [A, B, "custom"]
    with pytest.raises(NotFound):
        store.tenants.policy("ghost")

    service_default = GatePolicy(capacities=Capacities(working=7))
    configured = MemoryStore(store_url, default_policy=service_default)
    assert configured.tenants.policy(A) == service_default and configured.tenants.policy("custom") == custom
    configured.dispose()


def test_from_settings_defaults_to_sqlite_under_home(tmp_path):
    settings = HermesSettings(home=tmp_path / "new-home", sql_url="", policy=GatePolicy(top_k=3))
    from_settings = MemoryStore.from_settings(settings)
    from_settings.create_schema()
    from_settings.tenants.create(A)
    assert (tmp_path / "new-home" / "hermes.db").exists()
    assert from_settings.tenants.policy(A).top_k == 3
    from_settings.dispose()


def test_in_memory_sqlite_works_for_quick_use():
    memory_store = MemoryStore("sqlite://")
    memory_store.create_schema()
    memory_store.tenants.create(A)
    stored(memory_store, item())
    assert memory_store.memories.count(A, ALICE) == 1
    memory_store.dispose()


def test_unreachable_database_raises_store_unavailable(tmp_path):
    missing = MemoryStore(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'x.db'}")
    with pytest.raises(StoreUnavailable):
        missing.create_schema()
    with pytest.raises(StoreUnavailable):
        missing.memories.load_active(A, ALICE)


# requests, alerts, snapshots


def test_applied_requests_are_recorded_once(store):
    first = item()
    store.memories.commit(
        changes(first, events=[event(first)]), request_id="req-7", result={"memory_id": first.memory_id}
    )
    assert store.memories.applied_result(A, ALICE, "req-7") == {"memory_id": first.memory_id}
    retry = item(content="the retry recomputed something else")
    with pytest.raises(ConcurrentUpdate):
        store.memories.commit(changes(retry, events=[event(retry)]), request_id="req-7", result={"other": 1})
    assert store.memories.count(A, ALICE) == 1
    assert store.memories.applied_result(A, ALICE, "req-7") == {"memory_id": first.memory_id}

    store.memories.commit(
        GateChanges(), request_id="req-8", result={"ignored": 1}, tenant_id=A, user_id=ALICE
    )
    assert store.memories.applied_result(A, ALICE, "req-8") == {"ignored": 1}
    store.memories.commit(
        GateChanges(), request_id="req-9", result={"ignored": 1}
    )  # whose? unknown: not recorded
    assert store.memories.applied_result(A, ALICE, "req-9") is None


def test_alerts_list_and_resolve_through_commit(store):
    (target,) = stored(store, item())
    older, newer = alert(target), alert(target)
    older.created_at -= timedelta(minutes=1)
    store.memories.commit(changes(alerts=[older, newer]))
    assert [a.alert_id for a in store.alerts.find(A, ALICE)] == [newer.alert_id, older.alert_id]
    older.status = AlertStatus.RESOLVED
    store.memories.commit(changes(alerts=[older]))
    assert [a.alert_id for a in store.alerts.find(A)] == [newer.alert_id]
    assert [a.alert_id for a in store.alerts.find(A, ALICE, AlertStatus.RESOLVED)] == [older.alert_id]
    newer.status = AlertStatus.RESOLVED
    store.memories.commit(changes(alerts=[newer]))
    assert store.alerts.find(A, ALICE) == [] and len(store.alerts.find(A, ALICE, status=None)) == 2


def test_session_snapshot_first_writer_wins_even_under_races(store):
    assert store.snapshots.get(A, ALICE, "s1") is None
    assert store.snapshots.save(A, ALICE, "s1", "first ✓") == "first ✓"
    assert store.snapshots.save(A, ALICE, "s1", "second") == "first ✓"
    assert store.snapshots.get(A, ALICE, "s1") == "first ✓"

    results: list[str] = []
    writers = [
        threading.Thread(target=lambda n=n: results.append(store.snapshots.save(A, ALICE, "s2", f"w{n}")))
        for n in range(6)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert len(results) == 6 and len(set(results)) == 1
    assert store.snapshots.get(A, ALICE, "s2") == results[0]
    with pytest.raises(NotFound):
        store.snapshots.save("ghost", ALICE, "s1", "x")


# forgetting


def test_forget_item_deletes_scrubs_and_leaves_a_tombstone(store):
    secret, kept = item(content="my pin is in the drawer"), item(content="I like tea")
    stored(store, secret, kept)
    secret.importance = 0.9
    store.memories.commit(changes(secret, events=[event(secret, "update")], alerts=[alert(secret)]))
    store.snapshots.save(A, ALICE, "s1", "…my pin is in the drawer…")

    store.erasure.forget_item(A, ALICE, secret.memory_id, reason="user request", actor="user")

    with pytest.raises(NotFound):
        store.memories.get(A, ALICE, secret.memory_id)
    trail = store.audit.events(A, ALICE, secret.memory_id)
    assert [e.action for e in trail] == ["forget", "update", "create"]
    assert all("drawer" not in repr((e.before, e.after)) for e in trail)
    assert trail[0].before == {"redacted": True} and trail[0].actor == "user"
    assert all(e.after == {"redacted": True} for e in trail[1:])
    assert store.audit.events(A, ALICE, kept.memory_id)[0].after["content"] == "I like tea"
    assert store.alerts.find(A, ALICE, status=None) == []
    assert store.snapshots.get(A, ALICE, "s1") is None
    assert count_rows(store, TombstoneRow, memory_id=secret.memory_id) == 1
    with pytest.raises(ConcurrentUpdate):  # a stale copy cannot bring it back
        store.memories.commit(changes(secret))
    with pytest.raises(NotFound):
        store.erasure.forget_item(A, ALICE, secret.memory_id, reason="again", actor="user")


def test_erase_user_removes_everything_but_one_tombstone(store):
    items = stored(store, item(), item(content="I like tea"))
    items[0].importance = 0.2
    store.memories.commit(
        changes(items[0])
    )  # this copy is now at version 2, as the user's actor would hold it
    store.memories.commit(changes(alerts=[alert(items[0])]), request_id="r1", result={})
    store.snapshots.save(A, ALICE, "s1", "context")
    store.erasure.forget_item(A, ALICE, items[1].memory_id, reason="first", actor="user")
    (bobs,) = stored(store, item(user_id=BOB))

    assert store.erasure.erase_user(A, ALICE, reason="account deleted") == 1

    assert store.memories.count(A, ALICE) == 0 and store.memories.users(A) == [BOB]
    assert store.audit.events(A, ALICE) == [] and store.alerts.find(A, ALICE, status=None) == []
    assert (
        store.memories.applied_result(A, ALICE, "r1") is None and store.snapshots.get(A, ALICE, "s1") is None
    )
    assert count_rows(store, TombstoneRow, tenant_id=A, user_id=ALICE) == 1
    assert count_rows(store, AuditEventRow, tenant_id=A, user_id=ALICE) == 0
    assert store.memories.get(A, BOB, bobs.memory_id).content == bobs.content

    items[0].importance = 0.1
    with pytest.raises(ConcurrentUpdate):
        store.memories.commit(changes(items[0]))
    stored(store, item(content="a fresh start"))  # the user may come back
    assert [i.content for i in store.memories.load_active(A, ALICE)] == ["a fresh start"]


def test_an_update_of_an_item_that_carries_no_vector_keeps_the_stored_one(store):
    """A resident user's items drop their vectors once recall's rows hold them: updating such an item (its
    heat, its state) must not erase the vector SQL keeps; one that carries a vector replaces it."""
    stored = item(embedding=b"\x01" * 16)
    store.memories.commit(changes(stored))
    stored.embedding = None
    stored.access_count = 3
    store.memories.commit(changes(stored))
    again = store.memories.get(A, ALICE, stored.memory_id)
    assert again.embedding == b"\x01" * 16 and again.access_count == 3
    again.embedding = b"\x02" * 16
    store.memories.commit(changes(again))
    assert store.memories.get(A, ALICE, stored.memory_id).embedding == b"\x02" * 16
