"""Tenant isolation (docs/trust.md#2-isolation) on the real stack: every endpoint of the OpenAPI spec probed
with another tenant's key and the victim's ids, the deployment handle likewise, the Milvus partition directly;
API keys stored only as hashes; the admin key guarding tenant management; per-tenant rate limits and user
quotas answering 429."""

import hashlib
import re
import uuid

import numpy as np
import pytest

from actors.app.commands import GetMemory, ListMemories
from actors.core.tenancy import TenantLimits
from schemas.errors import NotFound
from tests.conftest import ADMIN_KEY
from tests.stack.trust_stack import E5_DIM, converge, file_traces

pytestmark = [pytest.mark.stack, pytest.mark.slow]

OPERATIONS_PATH = re.compile(r"^/v1/")
#: a valid body per operation, so a probe reaches the scope check instead of stopping at validation
BODIES = {
    ("post", "turns"): {"session_id": "s1", "turns": [{"text": "I like plums", "dialog_id": "x1"}]},
    ("post", "memories"): {"content": "probe", "kind": "fact", "session_id": "s1", "dialog_ids": ["x1"]},
    ("post", "recall"): {"query": "what is the secret garden called"},
    ("post", "sessions"): {"session_id": "s1"},
    ("post", "confirm"): {},
    ("post", "freeze"): {"reason": "probe"},
    ("post", "unfreeze"): {"reason": "probe", "dialog_id": "x1", "new_content": "hijacked"},
}


def new_key(sql_store, **limits) -> tuple[str, str]:
    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    return tenant_id, sql_store.tenants.create(tenant_id, limits=TenantLimits(**limits))


def headers(key):
    return {"X-API-Key": key}


def listed(http, key, user):
    response = http.get(f"/v1/users/{user}/memories", params={"limit": 500}, headers=headers(key))
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def victim(http, sql_store):
    """Tenant A with user alice: a frozen-worthy fact, a secret-sounding marker, a session snapshot."""
    tenant_id, key = new_key(sql_store)
    marker = f"Qx{uuid.uuid4().hex[:10]}"
    for session in ("s1", "s2"):
        turns = [
            {"text": "I'm allergic to peanuts", "dialog_id": f"{session}-a"},
            {"text": f"Remember this: my secret garden is called {marker}", "dialog_id": f"{session}-b"},
        ]
        response = http.post(
            "/v1/users/alice/turns", json={"session_id": session, "turns": turns}, headers=headers(key)
        )
        assert response.status_code == 200, response.text
    assert http.post("/v1/users/alice/sessions", json={"session_id": "s1"}, headers=headers(key)).is_success
    return tenant_id, key, marker


def operations(http):
    spec = http.get("/openapi.json").json()
    for path, methods in spec["paths"].items():
        if OPERATIONS_PATH.match(path):
            for method in methods:
                yield method, path


def probe_order(op):
    return op[0] == "delete", op  # deletions last, so every read probe sees the victim's data in place


def test_every_endpoint_refuses_another_tenant(http, sql_store, victim):
    _, key_a, marker = victim
    _, key_b = new_key(sql_store)
    before = listed(http, key_a, "alice")
    ids = [item["memory_id"] for item in before["items"]]
    assert marker in str(before) and ids
    probed = set()
    for method, path in sorted(operations(http), key=probe_order):
        for memory_id in ids if "{memory_id}" in path else [None]:
            url = path.replace("{user_id}", "alice").replace("{memory_id}", memory_id or "")
            body = BODIES.get((method, path.rsplit("/", 1)[-1]))
            response = http.request(method.upper(), url, json=body, headers=headers(key_b))
            assert response.status_code in {200, 201, 403, 404, 409, 422}, (method, url, response.text)
            assert marker not in response.text and "peanut" not in response.text.lower(), (method, url)
            if response.status_code < 300:
                assert not any(i in response.text for i in ids), (method, url)
            no_key = http.request(method.upper(), url, json=body)
            assert no_key.status_code == 401, (method, url, no_key.status_code)
        probed.add((method, path))
    assert {("get", "/v1/users/{user_id}/memories"), ("post", "/v1/users/{user_id}/recall")} <= probed
    assert listed(http, key_a, "alice") == before  # not even the access statistics moved


def test_deployment_handle_and_vector_partition_stay_in_scope(serve_app, sql_store, stack_settings, victim):
    from ray import serve

    from actors.store.vectors.milvus import MilvusIndex

    tenant_a, key_a, _ = victim
    tenant_b, key_b = new_key(sql_store)
    handle = serve.get_app_handle("hermes")
    mine = handle.run.remote(key_a, "alice", ListMemories()).result()
    assert mine.total >= 2
    assert handle.run.remote(key_b, "alice", ListMemories()).result().total == 0
    with pytest.raises(NotFound):
        handle.run.remote(key_b, "alice", GetMemory(memory_id=mine.items[0].memory_id)).result()
    converge(stack_settings)  # the hosts bring the index to what SQL holds after the answer, not before
    index = MilvusIndex(stack_settings.milvus_uri, stack_settings.milvus_collection, E5_DIM)
    try:
        probe = np.ones(E5_DIM, np.float32) / np.sqrt(E5_DIM)
        assert len(index.search(tenant_a, "alice", probe, 50)) >= 2
        assert index.search(tenant_b, "alice", probe, 50) == []
        assert index.ids(tenant_b) == set()
    finally:
        index.close()


def test_api_keys_are_stored_only_as_hashes(http, sql_store, stack_settings):
    tenant_id, key = new_key(sql_store)
    assert listed(http, key, "nobody")["total"] == 0  # the key works
    from sqlalchemy import create_engine, text

    engine = create_engine(sql_store.url)
    with engine.connect() as connection:
        stored = connection.execute(
            text("SELECT api_key_hash FROM tenants WHERE tenant_id = :t"), {"t": tenant_id}
        ).scalar_one()
    engine.dispose()
    assert stored == hashlib.sha256(key.encode()).hexdigest()
    db = stack_settings.home / "hermes.db"
    assert file_traces([db, db.with_name("hermes.db-wal")], [key, key.rsplit("_", 1)[1]]) == []
    altered = key[:-1] + ("1" if key.endswith("0") else "0")
    assert http.get("/v1/users/u/memories", headers=headers(altered)).status_code == 401
    forged = f"hm_{tenant_id}_" + "0" * 48
    assert http.get("/v1/users/u/memories", headers=headers(forged)).status_code == 401


def test_tenant_management_needs_the_admin_key(http, sql_store):
    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    _, tenant_key = new_key(sql_store)
    body = {"tenant_id": tenant_id, "requests_per_minute": 600, "max_users": 10}
    for attempt in ({}, {"X-Admin-Key": tenant_key}, {"X-API-Key": tenant_key}, {"X-Admin-Key": "x" * 64}):
        assert http.post("/admin/tenants", json=body, headers=attempt).status_code == 403
    created = http.post("/admin/tenants", json=body, headers={"X-Admin-Key": ADMIN_KEY})
    assert created.status_code == 201, created.text
    assert listed(http, created.json()["api_key"], "u1")["total"] == 0
    assert sql_store.tenants.limits(tenant_id) == TenantLimits(max_users=10, requests_per_minute=600)
    again = http.post("/admin/tenants", json=body, headers={"X-Admin-Key": ADMIN_KEY})
    assert again.status_code == 422  # exists already: no second key is minted


def test_rate_limit_answers_429_for_that_tenant_only(http, sql_store):
    _, limited = new_key(sql_store, requests_per_minute=5)
    _, calm = new_key(sql_store)
    answers = [http.get("/v1/users/u1/memories", headers=headers(limited)) for _ in range(7)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    refused = answers[5]
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1
    assert http.get("/v1/users/u1/memories", headers=headers(calm)).status_code == 200


def test_user_quota_answers_429_for_new_users_only(http, sql_store):
    _, key = new_key(sql_store, max_users=2)

    def write(user):
        body = {
            "session_id": "s1",
            "turns": [{"text": f"Remember this: {user} keeps bees", "dialog_id": "d1"}],
        }
        return http.post(f"/v1/users/{user}/turns", json=body, headers=headers(key))

    assert write("alice").status_code == 200 and write("bob").status_code == 200
    refused = write("carol")
    assert refused.status_code == 429 and refused.json()["error"] == "quota_exceeded"
    assert write("alice").status_code == 200  # existing users keep writing
    assert listed(http, key, "carol")["total"] == 0  # reads are never refused by the quota
