"""End to end through the whole local stack (Serve → the user's host → SQL, with the embedder in the host
and the outbox to the milvus-lite server): the README walk-through, inspection, forgetting, tenant
isolation, the Python client and the deployment handle."""

import pytest

from actors.app.commands import ListMemories, WriteTurns
from schemas.api import WriteTurnsRequest
from sdk.client import HermesClient, HermesHTTPError
from tests.stack.trust_stack import user_host_pid

pytestmark = [pytest.mark.stack, pytest.mark.slow]


def tenant_of(api_key: str) -> str:
    return api_key.removeprefix("hm_").rpartition("_")[0]


def say(http, key: str, user: str, session: str, *texts: str) -> dict:
    turns = [{"role": "user", "text": text, "dialog_id": f"{session}-d{i}"} for i, text in enumerate(texts)]
    response = http.post(
        f"/v1/users/{user}/turns", json={"session_id": session, "turns": turns}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_write_recall_session_walkthrough(http, tenant_key):
    headers = {"X-API-Key": tenant_key}
    written = say(http, tenant_key, "alice", "s1", "I'm allergic to peanuts", "I live in Hangzhou")
    assert written["user_id"] == "alice" and written["outcomes"]

    recalled = http.post("/v1/users/alice/recall", json={"query": "peanut allergy"}, headers=headers)
    assert recalled.status_code == 200, recalled.text
    hits = recalled.json()["hits"]
    assert any("peanut" in hit["memory"]["content"].lower() for hit in hits)
    assert all(hit["memory"]["source_dialog_ids"] for hit in hits)

    first = http.post("/v1/users/alice/sessions", json={"session_id": "s2"}, headers=headers)
    assert first.status_code == 200, first.text
    say(http, tenant_key, "alice", "s2", "I love jasmine tea")
    again = http.post("/v1/users/alice/sessions", json={"session_id": "s2"}, headers=headers)
    assert again.json()["text"] == first.json()["text"]  # frozen for the session


def test_a_preview_shows_what_the_write_would_store_and_stores_nothing(http, tenant_key):
    headers = {"X-API-Key": tenant_key}
    say(http, tenant_key, "pia", "s1", "I live in Hangzhou")
    body = {
        "session_id": "s2",
        "turns": [
            {"text": "actually I moved to Suzhou", "dialog_id": "s2-d0"},
            {"text": "I'm allergic to peanuts", "dialog_id": "s2-d1"},
        ],
    }
    listed = http.get("/v1/users/pia/memories", headers=headers).json()
    preview = http.post("/v1/users/pia/turns:preview", json=body, headers=headers)
    assert preview.status_code == 200, preview.text
    assert http.get("/v1/users/pia/memories", headers=headers).json() == listed
    assert http.post("/v1/users/nobody-yet/turns:preview", json=body, headers=headers).status_code == 200
    assert http.get("/v1/users/nobody-yet/memories", headers=headers).json()["total"] == 0

    written = http.post("/v1/users/pia/turns", json=body, headers=headers).json()
    shown = [(o["action"], o["memory"]["slot"], o["memory"]["value"]) for o in preview.json()["outcomes"]]
    stored = [
        http.get(f"/v1/users/pia/memories/{o['memory_id']}", headers=headers).json()["memory"]
        for o in written["outcomes"]
    ]
    actions = [o["action"] for o in written["outcomes"]]
    assert shown == [(action, m["slot"], m["value"]) for action, m in zip(actions, stored, strict=True)]
    assert ("corrected", "basic.residence", "suzhou") in shown


def test_inspect_forget_and_erase(http, tenant_key):
    headers = {"X-API-Key": tenant_key}
    say(http, tenant_key, "bob", "s1", "I'm allergic to shrimp", "I work as a nurse")
    listed = http.get("/v1/users/bob/memories", headers=headers).json()
    assert listed["total"] >= 2 and len(listed["items"]) == listed["total"]
    memory_id = listed["items"][0]["memory_id"]

    detail = http.get(f"/v1/users/bob/memories/{memory_id}", headers=headers).json()
    assert detail["memory"]["memory_id"] == memory_id and detail["audit"]

    assert http.delete(f"/v1/users/bob/memories/{memory_id}", headers=headers).json()["forgotten"] is True
    assert http.get(f"/v1/users/bob/memories/{memory_id}", headers=headers).status_code == 404

    erased = http.delete("/v1/users/bob", headers=headers).json()
    assert erased["items_removed"] == listed["total"] - 1
    assert http.get("/v1/users/bob/memories", headers=headers).json()["total"] == 0


def test_tenants_never_see_each_other(http, tenant_key, sql_store):
    other_key = sql_store.tenants.create(f"{tenant_of(tenant_key)}_b")
    say(http, tenant_key, "carol", "s1", "I'm allergic to peanuts")
    response = http.post(
        "/v1/users/carol/recall", json={"query": "peanut allergy"}, headers={"X-API-Key": other_key}
    )
    assert response.status_code == 200 and response.json()["hits"] == []
    assert http.get("/v1/users/carol/memories", headers={"X-API-Key": other_key}).json()["total"] == 0
    mine = http.get("/v1/users/carol/memories", headers={"X-API-Key": tenant_key}).json()["items"][0]
    stolen = http.get(f"/v1/users/carol/memories/{mine['memory_id']}", headers={"X-API-Key": other_key})
    assert stolen.status_code == 404


def test_many_users_live_in_the_few_processes_of_the_host_pool(http, tenant_key, stack_settings):
    users = [f"dave{n}" for n in range(6)]
    for user in users:
        say(http, tenant_key, user, "s1", "I live in Suzhou")
    pids = {user_host_pid(stack_settings, tenant_of(tenant_key), user) for user in users}
    stats = http.get("/v1/stats", headers={"X-API-Key": tenant_key}).json()
    assert len(pids) <= stats["hosts"] == stack_settings.hosts
    assert stats["live"] >= len(users) and stats["activations"] >= len(users)


def test_python_client_and_deployment_handle(serve_app, tenant_key):
    from ray import serve

    with HermesClient(serve_app, tenant_key) as client:
        body = {"session_id": "s1", "turns": [{"text": "I prefer short answers", "dialog_id": "d1"}]}
        first = client.write_turns("erin", body, idempotency_key="erin-1")
        assert client.write_turns("erin", body, idempotency_key="erin-1") == first  # not applied twice
        with pytest.raises(HermesHTTPError) as caught:
            client.get_memory("erin", "m_" + "0" * 32)
        assert caught.value.status == 404

    handle = serve.get_app_handle("hermes")
    request = WriteTurnsRequest.model_validate(
        {"session_id": "s9", "turns": [{"text": "I have a cat named Miso", "dialog_id": "d9"}]}
    )
    result = handle.run.remote(tenant_key, "erin", WriteTurns(request=request)).result()
    listed = handle.run.remote(tenant_key, "erin", ListMemories()).result()
    assert {o.memory_id for o in result.outcomes} <= {item.memory_id for item in listed.items}
