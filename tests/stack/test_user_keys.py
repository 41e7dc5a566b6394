"""Per-user keys (docs/trust.md#2-isolation) on the real stack: a key bound to alice, probed on every
endpoint of the OpenAPI spec with bob's ids and through the deployment handle, reaches alice only; the
tenant mints, lists and revokes such keys and rotates its own key with an overlap; a revoked key stops
within the authentication cache's time."""

import time
import uuid

import pytest

from actors.app.commands import ListMemories, WriteTurns
from schemas.errors import Forbidden
from serve.auth import KEY_CACHE_SECONDS
from tests.stack.test_isolation import BODIES, headers, listed, new_key, operations, probe_order

pytestmark = [pytest.mark.stack, pytest.mark.slow]


def write(http, key, user, text, session="s1"):
    body = {
        "session_id": session,
        "turns": [{"text": text, "dialog_id": f"{session}-{uuid.uuid4().hex[:6]}"}],
    }
    return http.post(f"/v1/users/{user}/turns", json=body, headers=headers(key))


def mint(http, tenant_key, user):
    response = http.post("/v1/keys", json={"user_id": user, "label": "agent"}, headers=headers(tenant_key))
    assert response.status_code == 201, response.text
    return response.json()


def stops_working(http, key, user, within):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if http.get(f"/v1/users/{user}/memories", headers=headers(key)).status_code == 401:
            return True
        time.sleep(0.25)
    return False


@pytest.fixture
def household(http, sql_store):
    """One tenant, two users: bob holds a marker; alice gets a key of her own."""
    _, tenant_key = new_key(sql_store)
    marker = f"Qb{uuid.uuid4().hex[:10]}"
    for session in ("s1", "s2"):
        assert write(
            http, tenant_key, "bob", f"Remember this: my locker code is {marker}", session
        ).is_success
    assert write(http, tenant_key, "alice", "I live in Lisbon").is_success
    minted = mint(http, tenant_key, "alice")
    return tenant_key, minted, marker


def test_a_user_key_reaches_no_other_user_on_any_endpoint(http, household):
    tenant_key, minted, marker = household
    alice_key = minted["api_key"]
    bob_before = listed(http, tenant_key, "bob")
    bob_ids = [item["memory_id"] for item in bob_before["items"]]
    assert bob_ids and marker in str(bob_before)
    probed = set()
    for method, path in sorted(operations(http), key=probe_order):
        for memory_id in bob_ids if "{memory_id}" in path else [None]:
            url = path.replace("{user_id}", "bob").replace("{memory_id}", memory_id or "")
            url = url.replace("{alert_id}", "a_" + "0" * 32).replace("{key_id}", minted["key_id"])
            body = BODIES.get((method, path.rsplit("/", 1)[-1]))
            response = http.request(method.upper(), url, json=body, headers=headers(alice_key))
            assert response.status_code == 403, (method, url, response.text)
            assert marker not in response.text and not any(i in response.text for i in bob_ids)
            assert "bound to user 'alice'" in response.json()["detail"]
        probed.add((method, path))
    assert {("get", "/v1/users"), ("get", "/v1/alerts"), ("post", "/v1/keys")} <= probed
    assert listed(http, tenant_key, "bob") == bob_before  # not even the access statistics moved
    assert [k["key_id"] for k in http.get("/v1/keys", headers=headers(tenant_key)).json()["keys"]] == [
        minted["key_id"]
    ]  # the probes minted, rotated and revoked nothing


def test_a_user_key_works_for_its_user_on_every_door(http, serve_app, household):
    from ray import serve

    tenant_key, minted, _ = household
    alice_key = minted["api_key"]
    assert write(http, alice_key, "alice", "Remember this: I keep a blue bicycle").is_success
    recalled = http.post(
        "/v1/users/alice/recall", json={"query": "where do I live"}, headers=headers(alice_key)
    )
    assert recalled.status_code == 200 and "Lisbon" in recalled.text
    handle = serve.get_app_handle("hermes")
    assert handle.run.remote(alice_key, "alice", ListMemories()).result().total >= 2
    with pytest.raises(Forbidden, match="cannot reach another user"):
        handle.run.remote(alice_key, "bob", ListMemories()).result()
    plums = {"session_id": "s9", "turns": [{"text": "I like plums", "dialog_id": "x"}]}
    with pytest.raises(Forbidden):
        handle.run.remote(alice_key, "bob", WriteTurns(request=plums)).result()
    assert "plums" not in str(listed(http, tenant_key, "bob"))


def test_revoking_a_user_key_takes_effect_within_seconds(http, household):
    tenant_key, minted, _ = household
    alice_key = minted["api_key"]
    assert http.get("/v1/users/alice/memories", headers=headers(alice_key)).status_code == 200
    revoked = http.delete(f"/v1/keys/{minted['key_id']}", headers=headers(tenant_key))
    assert revoked.status_code == 200 and revoked.json()["expires_at"] is not None
    assert stops_working(http, alice_key, "alice", within=KEY_CACHE_SECONDS + 5)
    assert http.get("/v1/keys", headers=headers(tenant_key)).json()["keys"] == []
    other_tenant_key = new_key_for_probe(http)
    again = http.delete(f"/v1/keys/{minted['key_id']}", headers=headers(other_tenant_key))
    assert again.status_code == 404  # a key id of another tenant is no key at all


def new_key_for_probe(http):
    from tests.conftest import ADMIN_KEY

    body = {"tenant_id": f"t_{uuid.uuid4().hex[:12]}"}
    created = http.post("/admin/tenants", json=body, headers={"X-Admin-Key": ADMIN_KEY})
    assert created.status_code == 201, created.text
    return created.json()["api_key"]


def test_the_tenant_key_rotates_with_an_overlap_and_then_ends(http, household):
    old_key, _, _ = household
    rotated = http.post("/v1/keys/rotate", json={"overlap_seconds": 600}, headers=headers(old_key))
    assert rotated.status_code == 200, rotated.text
    new_key_ = rotated.json()["api_key"]
    for key in (old_key, new_key_):  # both work during the overlap: clients switch without downtime
        assert http.get("/v1/users/bob/memories", headers=headers(key)).status_code == 200
    previous = [
        k for k in http.get("/v1/keys", headers=headers(new_key_)).json()["keys"] if k["user_id"] is None
    ]
    assert len(previous) == 1 and previous[0]["expires_at"] is not None
    assert http.delete(f"/v1/keys/{previous[0]['key_id']}", headers=headers(new_key_)).status_code == 200
    assert stops_working(http, old_key, "bob", within=KEY_CACHE_SECONDS + 5)
    assert http.get("/v1/users/bob/memories", headers=headers(new_key_)).status_code == 200
    too_long = http.post("/v1/keys/rotate", json={"overlap_seconds": 10**9}, headers=headers(new_key_))
    assert too_long.status_code == 422


def test_a_user_key_over_mcp_reaches_its_user_only(http, serve_app, household):
    from tests.stack.test_mcp import call, over_http, refused, run

    _, minted, marker = household

    async def script(client):
        own = await call(client, "recall", query="where do I live")  # no user named: the key's user
        named = await call(client, "recall", user_id="alice", query="where do I live")
        other = await refused(client, "recall", user_id="bob", query="what is my locker code")
        listed = await refused(client, "list_memories", user_id="bob")
        return own, named, other, listed

    own, named, other, listed = run(over_http(serve_app, minted["api_key"]), script)
    assert "Lisbon" in str(own) and "Lisbon" in str(named)
    for words in (other, listed):
        assert "bound to user 'alice'" in words and marker not in words
