"""The issue's end-to-end story through HTTP on the real local stack (Ray + Serve + milvus-lite server +
SQLite + the real multilingual embedder): facts confirmed and frozen across sessions in two languages, a
frozen allergy that a careless remark cannot change, a correction that goes through unfreeze, a new
session's snapshot, recall that puts the allergy first — then concurrency and tenant isolation."""

import asyncio
import uuid
from urllib.parse import quote

import httpx
import pytest

from actors.store.vectors.milvus import MilvusIndex
from tests.stack.trust_stack import converge, kill_app_actors

pytestmark = [pytest.mark.stack, pytest.mark.slow]


def say(http, key, user, session, *texts, first_dialog=0):
    turns = [{"text": t, "dialog_id": f"{session}-d{first_dialog + n}"} for n, t in enumerate(texts)]
    response = http.post(
        f"/v1/users/{user}/turns", json={"session_id": session, "turns": turns}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()


def items(http, key, user, **params):
    response = http.get(
        f"/v1/users/{user}/memories", params={"limit": 500, **params}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()["items"]


def test_allergy_residence_story_over_http(http, tenant_key):
    key, user = tenant_key, "mei"
    say(http, key, user, "s1", "我对花生过敏", "I live in Hangzhou")
    say(http, key, user, "s2", "I'm allergic to peanuts", "I live in Hangzhou", "I love hiking on weekends")
    frozen = {i["slot"]: i for i in items(http, key, user, state="frozen")}
    assert set(frozen) == {"basic.allergy", "basic.residence"}
    allergy, home = frozen["basic.allergy"], frozen["basic.residence"]
    assert allergy["layer"] == "core" and allergy["source_dialog_ids"] == ["s1-d0", "s2-d0"]

    remark = say(http, key, user, "s3", "I think I don't mind peanuts")
    assert [a["kind"] for a in remark["alerts"]] == ["frozen_conflict"]
    alerts = http.get(f"/v1/users/{user}/alerts", headers={"X-API-Key": key}).json()["alerts"]
    assert any(a["memory_id"] == allergy["memory_id"] for a in alerts)
    still = http.get(f"/v1/users/{user}/memories/{allergy['memory_id']}", headers={"X-API-Key": key}).json()
    assert still["memory"]["state"] == "frozen" and still["memory"]["content"] == allergy["content"]

    corrected = say(http, key, user, "s4", "actually I moved to Suzhou")
    assert corrected["outcomes"][0]["action"] == "corrected"
    detail = http.get(f"/v1/users/{user}/memories/{home['memory_id']}", headers={"X-API-Key": key}).json()
    assert detail["memory"]["value"] == "suzhou" and detail["memory"]["state"] == "frozen"
    trail = [e["action"] for e in detail["audit"]]
    assert {"unfreeze", "modify"} <= set(trail)
    unfreeze = next(e for e in detail["audit"] if e["action"] == "unfreeze")
    assert unfreeze["source_dialog_id"] == "s4-d0" and unfreeze["reason"]
    old = items(http, key, user, state="superseded")
    assert any(i["value"] == "hangzhou" and i["superseded_by"] == home["memory_id"] for i in old)

    snapshot = http.post(
        f"/v1/users/{user}/sessions", json={"session_id": "s5"}, headers={"X-API-Key": key}
    ).json()
    # each fact in the words the user first gave it: the allergy was first said in Chinese
    assert "residence: Suzhou" in snapshot["text"] and "allergy: 花生" in snapshot["text"]
    assert "Hangzhou" not in snapshot["text"]

    recall = http.post(
        f"/v1/users/{user}/recall", json={"query": "what should I avoid cooking?"}, headers={"X-API-Key": key}
    ).json()
    assert recall["hits"][0]["memory"]["memory_id"] == allergy["memory_id"]
    top = recall["hits"][0]
    assert top["score"]["boosts"]["frozen"] == pytest.approx(1.3) and top["memory"]["source_dialog_ids"]


def test_fifty_concurrent_writes_for_one_user_lose_nothing(serve_app, tenant_key):
    user = f"busy{uuid.uuid4().hex[:6]}"

    async def burst():
        async with httpx.AsyncClient(base_url=serve_app, timeout=120) as client:

            async def one(n):
                body = {
                    "session_id": f"s{n % 5}",
                    "turns": [{"text": f"I visited museum number {n} in the old town", "dialog_id": f"d{n}"}],
                }
                return await client.post(
                    f"/v1/users/{user}/turns", json=body, headers={"X-API-Key": tenant_key}
                )

            return await asyncio.gather(*(one(n) for n in range(50)))

    responses = asyncio.run(burst())
    assert [r.status_code for r in responses] == [200] * 50
    created = {o["memory_id"] for r in responses for o in r.json()["outcomes"]}
    with httpx.Client(base_url=serve_app, timeout=60) as http:
        stored = items(http, tenant_key, user)
    dialogs = sorted(d for i in stored for d in i["source_dialog_ids"])
    assert dialogs == sorted(f"d{n}" for n in range(50))  # every write landed exactly once
    assert {i["memory_id"] for i in stored} == created
    assert sum(i["layer"] == "working" for i in stored) <= 200


CRAFTED_IDS = ['a" or tenant_id != "x', "alice' OR '1'='1", "../alice", "alice\n", "*", "a" * 200]


def test_other_tenant_cannot_read_recall_or_erase(http, sql_store, tenant_key):
    say(http, tenant_key, "alice", "s1", "I'm allergic to shellfish", "I work as a pilot")
    mine = items(http, tenant_key, "alice")
    other = sql_store.tenants.create(f"t_{uuid.uuid4().hex[:12]}")
    theirs = {"X-API-Key": other}
    assert items(http, other, "alice") == []
    hits = http.post("/v1/users/alice/recall", json={"query": "shellfish allergy"}, headers=theirs).json()[
        "hits"
    ]
    assert hits == []
    for item in mine:
        assert http.get(f"/v1/users/alice/memories/{item['memory_id']}", headers=theirs).status_code == 404
        assert http.delete(f"/v1/users/alice/memories/{item['memory_id']}", headers=theirs).status_code == 404
    http.delete("/v1/users/alice", headers=theirs)
    assert len(items(http, tenant_key, "alice")) == len(mine)  # erasing "their" alice left ours alone
    for raw in CRAFTED_IDS:
        crafted = quote(raw, safe="")
        for method, path in (
            ("GET", f"/v1/users/{crafted}/memories"),
            ("POST", f"/v1/users/{crafted}/recall"),
        ):
            response = http.request(method, path, json={"query": "x"}, headers=theirs)
            assert response.status_code in (404, 422), (crafted, response.status_code)
        response = http.get(f"/v1/users/alice/memories/{crafted}", headers=theirs)
        assert response.status_code in (404, 422)
    assert http.get("/v1/users/alice/memories", headers={"X-API-Key": "hm_x_deadbeef"}).status_code == 401
    assert len(items(http, tenant_key, "alice")) == len(mine)


@pytest.fixture(scope="module")
def postgres_app(serve_app, make_stack_settings, postgres_url, milvus_standalone):
    """A second app of the same stack in the production shape: a fresh PostgreSQL database as the source of
    truth and the Milvus standalone server as the vector index."""
    import psycopg
    from ray import serve

    from actors.store.sql.store import MemoryStore
    from serve.app import build_app

    database = f"hermes_e2e_{uuid.uuid4().hex[:8]}"
    admin_url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    settings = make_stack_settings(
        sql_url=postgres_url.rsplit("/", 1)[0] + f"/{database}",
        namespace="hermes-test-pg",
        milvus_uri=milvus_standalone.uri,
    )
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    key = store.tenants.create("pgtenant")
    serve.run(build_app(settings), name="hermes-pg", route_prefix="/pg")
    yield f"{serve_app}/pg", key, store, settings
    serve.delete("hermes-pg")
    kill_app_actors(settings.namespace)
    store.dispose()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')


@pytest.mark.postgres
def test_fifty_concurrent_writes_against_postgres(postgres_app):
    base, key, store, settings = postgres_app

    async def burst():
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:

            async def one(n):
                body = {
                    "session_id": f"s{n % 5}",
                    "turns": [
                        {"text": f"I tried recipe number {n} from my grandmother", "dialog_id": f"d{n}"}
                    ],
                }
                return await client.post("/v1/users/pguser/turns", json=body, headers={"X-API-Key": key})

            return await asyncio.gather(*(one(n) for n in range(50)))

    responses = asyncio.run(burst())
    assert [r.status_code for r in responses] == [200] * 50, [
        r.text for r in responses if r.status_code != 200
    ][:2]
    stored = store.memories.page("pgtenant", "pguser", limit=500)
    assert sorted(d for i in stored for d in i.source_dialog_ids) == sorted(f"d{n}" for n in range(50))
    assert all(i.embedding is not None for i in stored)
    converge(settings)  # the hosts' outbox, applied to the Milvus server
    index = MilvusIndex(settings.milvus_uri, settings.milvus_collection, 384)
    try:
        assert index.ids("pgtenant") == set(store.jobs.indexed_versions("pgtenant")) != set()
    finally:
        index.close()
