"""The batch jobs on the real local stack (Ray Data on the session's Ray, the Serve app, milvus-lite, SQLite,
the real embedder): consolidation's promotions, merges and evictions, all audited, and a second run that is
a no-op; live writes racing a consolidation; reindex after vectors were deleted by hand; archive restore;
cohort features that never describe fewer users than the minimum, seeding a new user's session.

Each test works in its own tenant of the session's app (``stack_settings``), as the jobs would in
production: same SQL, same actors, ``tenants=[...]`` limiting what they touch.
"""

import threading
import time
import uuid
from datetime import timedelta

import httpx
import pytest

from actors.core.memory import GateChanges, MemoryItem, utcnow
from actors.store.vectors.milvus import MilvusIndex
from schemas.enums import Kind, Layer, Polarity, Source, State
from schemas.errors import OwnershipLost
from schemas.settings import Capacities, GatePolicy
from tests.stack.trust_stack import converge

pytestmark = [pytest.mark.stack, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _jobs_run_on_the_session_cluster(ray_session):
    """Jobs are Ray drivers: they run inside the session's Ray, beside its Serve app."""


def new_tenant(sql_store, policy: GatePolicy | None = None, consent: bool = False) -> tuple[str, str]:
    tenant = f"t_{uuid.uuid4().hex[:12]}"
    return tenant, sql_store.tenants.create(tenant, policy=policy, group_profile_consent=consent)


def item(
    tenant,
    user,
    content,
    *,
    layer=Layer.LONGTERM,
    state=State.CONFIRMED,
    slot=None,
    value=None,
    kind=Kind.PREFERENCE,
    importance=0.6,
    days_idle=0.0,
    sessions=("s1",),
    write_score=0.7,
    **extra,
):
    at = utcnow() - timedelta(days=days_idle)
    return MemoryItem(
        tenant_id=tenant,
        user_id=user,
        content=content,
        kind=kind,
        layer=layer,
        state=state,
        slot=slot,
        value=value,
        importance=importance,
        confidence=0.8,
        decay_score=importance,
        write_score=write_score,
        source=Source.USER_DECLARED,
        source_session_id=sessions[0],
        source_dialog_ids=[f"d-{uuid.uuid4().hex[:6]}"],
        confirmed_sessions=list(sessions),
        created_at=at,
        updated_at=at,
        last_accessed_at=at,
        **extra,
    )


def seed(store, *items: MemoryItem) -> None:
    by_user: dict[str, dict[str, MemoryItem]] = {}
    for one in items:
        by_user.setdefault(one.user_id, {})[one.memory_id] = one
    for upserted in by_user.values():
        store.memories.commit(GateChanges(upserted=upserted))


def job_events(store, tenant, user):
    return [e for e in store.audit.events(tenant, user, limit=500) if e.actor == "job:consolidate"]


def test_consolidation_promotes_merges_evicts_audits_and_a_second_run_changes_nothing(
    stack_settings, sql_store
):
    from jobs import consolidate

    tenant, _ = new_tenant(sql_store, GatePolicy(capacities=Capacities(longterm=5)))
    foods = [
        item(
            tenant,
            "merger",
            f"I like {v}",
            layer=Layer.WORKING,
            state=State.PENDING,
            slot="preference.food",
            value=v,
            sessions=(s,),
        )
        for v, s in (("ramen", "s1"), ("sushi", "s2"), ("tacos", "s1"))
    ]
    allergy = item(
        tenant,
        "promoted",
        "I'm allergic to peanuts",
        layer=Layer.WORKING,
        state=State.PENDING,
        slot="basic.allergy",
        value="peanut",
        kind=Kind.FACT,
        sessions=("s1", "s2"),
    )
    crowd = [
        item(tenant, "crowded", f"fact number {n}", kind=Kind.FACT, importance=0.3 + n / 10) for n in range(7)
    ]
    stale = item(
        tenant,
        "stale",
        "saw a red car",
        layer=Layer.WORKING,
        state=State.PENDING,
        kind=Kind.EVENT,
        days_idle=40,
        write_score=0.3,
        importance=0.3,
    )
    settled = item(tenant, "settled", "I like green tea", slot="preference.drink", value="green tea")
    seed(sql_store, *foods, allergy, *crowd, stale, settled)

    report = consolidate.run(stack_settings, [tenant])
    counts = {
        k: report[k] for k in ("merged", "summaries", "confirmed", "promoted", "frozen", "evicted", "cleared")
    }
    assert counts == {
        "merged": 3,
        "summaries": 1,
        "confirmed": 2,
        "promoted": 2,
        "frozen": 1,
        "evicted": 2,
        "cleared": 1,
    }
    assert report["users"] == 5 and report["failed"] == 0 and report["via_lease"] == 5

    summary = next(i for i in sql_store.memories.load_active(tenant, "merger") if i.merged_from)
    assert (summary.state, summary.layer) == (State.CONFIRMED, Layer.LONGTERM)
    assert sorted(summary.source_dialog_ids) == sorted(d for f in foods for d in f.source_dialog_ids)
    frozen = sql_store.memories.get(tenant, "promoted", allergy.memory_id)
    assert (frozen.state, frozen.layer) == (State.FROZEN, Layer.CORE)
    evicted = {
        i.memory_id
        for i in crowd
        if sql_store.memories.get(tenant, "crowded", i.memory_id).state is State.ARCHIVED
    }
    assert evicted == {crowd[0].memory_id, crowd[1].memory_id}  # the two lowest-value facts
    assert sql_store.memories.get(tenant, "stale", stale.memory_id).state is State.ARCHIVED

    for user, seeded in (("merger", foods), ("promoted", [allergy]), ("crowded", crowd), ("stale", [stale])):
        stored = {i.memory_id: sql_store.memories.get(tenant, user, i.memory_id) for i in seeded}
        changed = {
            i.memory_id
            for i in seeded
            if (stored[i.memory_id].state, stored[i.memory_id].layer) != (i.state, i.layer)
        }
        audited = {e.memory_id for e in job_events(sql_store, tenant, user)}
        assert changed and changed <= audited, user  # every item the job changed has its audit event
    assert job_events(sql_store, tenant, "settled") == []

    trail = {
        u: len(sql_store.audit.events(tenant, u, limit=500))
        for u in ("merger", "promoted", "crowded", "stale")
    }
    again = consolidate.run(stack_settings, [tenant])
    assert again["users_changed"] == 0
    assert not any(again[k] for k in counts) and again["rescored"] == 0
    assert {u: len(sql_store.audit.events(tenant, u, limit=500)) for u in trail} == trail
    # the three users with profile slots are compared against the first run's snapshot: nothing drifted
    assert again["profile_drift"] == 0.0 and again["users_compared"] == 3
    assert again["eviction_hit_rate"] == 1.0 and again["evictions_in_window"] == 3
    # the same figures per tenant and per user, and the reader's figures on the shipped labelled set
    mine = again["tenants"][tenant]
    assert mine["eviction_hit_rate"] == 1.0 and mine["per_user"]["crowded"]["evictions_missed"] == 0
    assert mine["per_user"]["promoted"]["profile_agreement"] == 1.0
    assert again["extraction"]["labelled_set"] >= 400 and again["extraction"]["precision"] >= 0.85


def _say(client, key, user, session, text, dialog):
    body = {"session_id": session, "turns": [{"text": text, "dialog_id": dialog}]}
    response = client.post(f"/v1/users/{user}/turns", json=body, headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()


def _dialogs(store, tenant, user):
    return {d for i in store.memories.page(tenant, user, limit=1000) for d in i.source_dialog_ids}


def test_live_writes_racing_a_consolidation_are_never_lost(serve_app, stack_settings, sql_store):
    from jobs import consolidate

    tenant, key = new_tenant(sql_store)
    seed(
        sql_store,
        *[
            item(
                tenant,
                "racer",
                f"I like {v}",
                layer=Layer.WORKING,
                state=State.PENDING,
                slot="preference.music",
                value=v,
                sessions=(f"s{n}",),
            )
            for n, v in enumerate(("jazz", "rock", "blues", "funk"))
        ],
    )
    written: list[str] = []

    def keep_writing():
        with httpx.Client(base_url=serve_app, timeout=120) as client:
            for n in range(12):
                _say(
                    client,
                    key,
                    "racer",
                    f"live{n % 3}",
                    f"I visited museum number {n} in the old town",
                    f"w{n}",
                )
                written.append(f"w{n}")

    writer = threading.Thread(target=keep_writing)
    writer.start()
    reports = [consolidate.run(stack_settings, [tenant]) for _ in range(2)]
    writer.join(timeout=300)
    assert not writer.is_alive() and len(written) == 12
    assert set(written) <= _dialogs(sql_store, tenant, "racer")
    assert sum(r["merged"] for r in reports) == 4  # the four seeded music items, merged once
    assert all(r["failed"] == 0 for r in reports)


def test_a_job_that_took_a_resident_user_over_is_never_overwritten_by_the_host(serve_app, sql_store):
    """A job claims a user whom a host holds in memory and commits under its claim; the host's next write
    is decided on the job's state (its stale copy is refused by the fence and reloaded), never on the old."""
    from actors.runtime.host import FENCE_CHECK_SECONDS

    tenant, key = new_tenant(sql_store)
    with httpx.Client(base_url=serve_app, timeout=120) as client:
        _say(client, key, "newcomer", "s1", "I work as a nurse", "live-1")  # resident in its host now
        by_job = item(
            tenant,
            "newcomer",
            "I like hiking",
            slot="preference.sport",
            value="hiking",
            layer=Layer.WORKING,
            state=State.PENDING,
        )
        fence = sql_store.fencing.claim(tenant, "newcomer", "job:test")
        sql_store.memories.commit(GateChanges(upserted={by_job.memory_id: by_job}), fence=fence)
        outcome = _say(client, key, "newcomer", "s2", "I like hiking", "live-2")["outcomes"][0]
        # the same statement restates the job's item: no duplicate, whether the host noticed the newer
        # claim at its periodic check or only when its commit was refused
        assert (outcome["memory_id"], outcome["action"]) == (by_job.memory_id, "confirmed")
        time.sleep(FENCE_CHECK_SECONDS)
        stale = sql_store.fencing.claim(tenant, "newcomer", "job:test")  # taken over again...
        with pytest.raises(OwnershipLost):  # ...so the job's first claim can no longer commit
            sql_store.memories.commit(GateChanges(upserted={by_job.memory_id: by_job}), fence=fence)
        assert stale.epoch > fence.epoch
    assert {"live-1", "live-2"} <= _dialogs(sql_store, tenant, "newcomer")


def _recall(client, key, user, query, **extra):
    response = client.post(
        f"/v1/users/{user}/recall", json={"query": query, **extra}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()["hits"]


def test_reindex_after_vectors_were_deleted_by_hand_rebuilds_the_index(http, stack_settings, sql_store):
    from jobs import reindex

    tenant, key = new_tenant(sql_store)
    _say(http, key, "vera", "s1", "I love jazz", "d1")
    _say(http, key, "vera", "s2", "I'm allergic to peanuts", "d2")
    jazz = next(i for i in sql_store.memories.load_active(tenant, "vera") if i.slot == "preference.music")
    query = "saxophone improvisation records"
    assert "semantic" in next(
        h["routes"] for h in _recall(http, key, "vera", query) if h["memory"]["memory_id"] == jazz.memory_id
    )

    milvus = MilvusIndex(stack_settings.milvus_uri, stack_settings.milvus_collection, 384)
    try:
        converge(stack_settings)  # the hosts' outbox has reached the index
        assert jazz.memory_id in milvus.ids(tenant)
        milvus.delete(tenant, sorted(milvus.ids(tenant)))  # by hand, behind the service's back
        assert milvus.ids(tenant) == set()

        report = reindex.run(stack_settings, [tenant])
        assert report["agree"] and report["tenants"][tenant]["rows"] == 2
        assert milvus.ids(tenant) == set(sql_store.jobs.indexed_versions(tenant))
    finally:
        milvus.close()
    hits = {h["memory"]["memory_id"]: h["routes"] for h in _recall(http, key, "vera", query)}
    assert "semantic" in hits[jazz.memory_id]


def test_restore_brings_back_an_archived_item_that_recall_then_finds(http, stack_settings, sql_store):
    from jobs import restore

    tenant, key = new_tenant(sql_store)
    now = utcnow()
    miles = item(
        tenant,
        "rosa",
        "I love listening to Miles Davis records",
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        slot="preference.music",
        value="miles davis",
        sessions=("s1", "s2"),
        archived_at=now - timedelta(days=20),
    )
    ancient = item(
        tenant,
        "rosa",
        "I love Bach cantatas",
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        slot="preference.music",
        value="bach",
        archived_at=now - timedelta(days=400),
    )
    unrelated = item(
        tenant,
        "rosa",
        "I used to collect stamps",
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        slot="preference.hobby",
        value="stamps",
        archived_at=now - timedelta(days=5),
    )
    recent = item(tenant, "rosa", "I like jazz", slot="preference.music", value="jazz")
    seed(sql_store, miles, ancient, unrelated, recent)
    query = "which jazz trumpet player do I listen to?"
    assert miles.memory_id not in {
        h["memory"]["memory_id"] for h in _recall(http, key, "rosa", query, include_archive=False)
    }

    report = restore.run(stack_settings, [tenant])
    assert (report["restored"], report["failed"]) == (1, 0)
    back = sql_store.memories.get(tenant, "rosa", miles.memory_id)
    assert (back.layer, back.state) == (Layer.LONGTERM, State.CONFIRMED)
    assert [e.actor for e in sql_store.audit.events(tenant, "rosa", miles.memory_id)][:1] == ["job:restore"]
    assert (
        sql_store.memories.get(tenant, "rosa", ancient.memory_id).state is State.ARCHIVED
    )  # beyond retention
    assert sql_store.memories.get(tenant, "rosa", unrelated.memory_id).state is State.ARCHIVED  # not relevant
    hits = _recall(http, key, "rosa", query, include_archive=False)
    assert miles.memory_id in {h["memory"]["memory_id"] for h in hits}


def _tastes(tenant, user, *claims):
    return [item(tenant, user, f"I like {value}", slot=slot, value=value) for slot, value in claims] + [
        item(
            tenant,
            user,
            f"I live in {user}ville",
            slot="basic.residence",
            value=f"{user}ville",
            kind=Kind.FACT,
            state=State.FROZEN,
            layer=Layer.CORE,
        )
    ]


def test_group_features_never_reveal_a_cohort_smaller_than_the_minimum(http, stack_settings, sql_store):
    from jobs import group_profiles

    tenant, key = new_tenant(sql_store, consent=True)
    people = [
        (
            f"p{n}",
            [("preference.music", "jazz")] * (n < 5)
            + [("preference.drink", "oolong")] * (n < 2)
            + [("preference.food", "durian")] * (n == 0),
        )
        for n in range(6)
    ]
    seed(sql_store, *[one for user, claims in people for one in _tastes(tenant, user, *claims)])
    no_consent, _ = new_tenant(sql_store)
    seed(
        sql_store,
        *[one for n in range(6) for one in _tastes(no_consent, f"q{n}", ("preference.music", "jazz"))],
    )
    small, _ = new_tenant(sql_store, consent=True)
    seed(sql_store, *[one for n in range(4) for one in _tastes(small, f"r{n}", ("preference.music", "jazz"))])
    from actors.store.sql.jobs import CohortFeature

    sql_store.jobs.replace_cohort_features(
        no_consent, [CohortFeature("preference.music", Polarity.POSITIVE, "jazz", 6, 6, 1.0)]
    )  # left from before consent ended

    report = group_profiles.run(stack_settings, [tenant, no_consent, small], min_cohort=5)
    (jazz,) = sql_store.jobs.cohort_features(tenant)
    assert (jazz.slot, jazz.value, jazz.users, jazz.cohort_size) == ("preference.music", "jazz", 5, 6)
    assert sql_store.jobs.cohort_features(no_consent) == [] and sql_store.jobs.cohort_features(small) == []
    assert report["features_published"] == 1 and report["tenants_consenting"] == 2
    assert all(f.users >= 5 for t in (tenant, small) for f in sql_store.jobs.cohort_features(t))

    context = http.post("/v1/users/newbie/sessions", json={"session_id": "first"}, headers={"X-API-Key": key})
    assert context.status_code == 200, context.text
    text = context.json()["text"]
    assert "cohort-derived" in text and "music: Jazz (83% of users)" in text
    assert "oolong" not in text.lower() and "ville" not in text

    withdrawn = http.put("/v1/users/p0/consent", json={"group_profiles": False}, headers={"X-API-Key": key})
    assert withdrawn.status_code == 200 and withdrawn.json()["group_profiles"] is False
    report = group_profiles.run(stack_settings, [tenant], min_cohort=5)
    assert report["users"] == 5  # p0 is not counted, not even in the cohort's size
    assert sql_store.jobs.cohort_features(tenant) == []  # so jazz is held by 4 of 5: below the minimum
    listed = http.get("/v1/users/newbie/memories", headers={"X-API-Key": key}).json()
    assert listed["items"] == []  # seeded context, never the user's memory


@pytest.mark.postgres
def test_ray_data_reads_the_users_from_postgresql_with_bound_parameters(make_stack_settings, postgres_url):
    import psycopg

    from actors.store.sql.store import MemoryStore
    from jobs.common import read_sql

    database = f"hermes_jobs_{uuid.uuid4().hex[:8]}"
    admin_url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    try:
        settings = make_stack_settings(sql_url=postgres_url.rsplit("/", 1)[0] + f"/{database}")
        store = MemoryStore.from_settings(settings)
        store.create_schema()
        for tenant in ("acme", "other"):
            store.tenants.create(tenant)
            seed(
                store,
                item(tenant, "ann", "I like tea", slot="preference.drink", value="tea"),
                item(tenant, "bob", "old news", layer=Layer.ARCHIVE, state=State.ARCHIVED),
            )
        every_read, archived_read = (
            store.jobs.users_read(["acme"]),
            store.jobs.users_read(["acme"], "archived"),
        )
        store.dispose()
        every = read_sql(every_read).take_all()
        assert sorted((r["user_id"], r["items"]) for r in every) == [("ann", 1), ("bob", 0)]
        archived = read_sql(archived_read).take_all()
        assert [r["user_id"] for r in archived] == ["bob"]
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')


def test_quality_figures_are_read_over_http_per_tenant_and_per_user(http, stack_settings, sql_store):
    """Before a run covered the tenant every figure is null (the console's "no run yet"); after, the
    tenant's figures and each user's own are served, a user the run did not see has none, and another
    tenant's run or key shows nothing of this one."""
    from jobs import consolidate

    tenant, key = new_tenant(sql_store)
    other, other_key = new_tenant(sql_store)
    headers = {"X-API-Key": key}

    def read(path, with_key=key):
        response = http.get(path, headers={"X-API-Key": with_key})
        assert response.status_code == 200, response.text
        return response.json()

    assert read("/v1/quality")["figures"] is None and read("/v1/quality")["run_id"] is None
    assert read("/v1/users/lena/quality")["figures"] is None
    said = {"s1": "I live in Lisbon and I love hiking", "s2": "I live in Lisbon, and hiking is my thing"}
    for session, text in said.items():
        _say(http, key, "lena", session, text, f"{session}-d")
    _say(http, other_key, "omar", "s1", "I live in Cairo", "o-d")
    consolidate.run(stack_settings, [other])
    assert read("/v1/quality")["run_id"] is None  # a run over another tenant says nothing of this one

    consolidate.run(stack_settings, [tenant])
    second = consolidate.run(stack_settings, [tenant])
    quality = read("/v1/quality")
    assert quality["run_id"] == second["run_id"] and quality["finished_at"]
    assert quality["hit_window_days"] == second["hit_window_days"]
    figures = quality["figures"]
    assert figures["users"] == 1 and figures["profile_agreement"] == 1.0
    assert figures["profile_drift"] == 0.0 and figures["users_compared"] == 1  # the second run: nothing moved
    assert set(figures["per_user"]) == {"lena"}
    assert quality["extraction"]["labelled_set"] >= 400

    lena = read("/v1/users/lena/quality")
    assert lena["run_id"] == second["run_id"] and lena["user_id"] == "lena"
    assert lena["figures"] == figures["per_user"]["lena"]
    assert lena["figures"]["profile_agreement"] == 1.0 and lena["figures"]["eviction_hit_rate"] is None
    newcomer = read("/v1/users/nobody-yet/quality")
    assert newcomer["run_id"] == second["run_id"] and newcomer["figures"] is None
    # another tenant's key reads its own figures only: omar, never lena
    assert set(read("/v1/quality", other_key)["figures"]["per_user"]) == {"omar"}
    assert read("/v1/users/lena/quality", other_key)["figures"] is None
    assert http.get("/v1/users/bad id/quality", headers=headers).status_code == 422
