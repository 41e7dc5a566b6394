"""Export and import (docs/export.md) on the real stack: a tenant's users exported over HTTP, streamed,
imported into a fresh stack (its own SQL, Milvus collection and hosts) through the users' hosts, exported
again and found identical but for the header; importing again adds nothing; tombstones stay tombstones;
recall works on the imported memories; per-user keys export their own user only and never import; a bad
line is refused with its number and stores nothing."""

import json
import uuid

import pytest

from tests.stack.trust_stack import new_tenant, private_app

pytestmark = [pytest.mark.stack, pytest.mark.slow]


def headers(key):
    return {"X-API-Key": key}


def say(http, key, user, session, *texts):
    turns = [{"text": text, "dialog_id": f"{session}-{n}"} for n, text in enumerate(texts)]
    response = http.post(
        f"/v1/users/{user}/turns", json={"session_id": session, "turns": turns}, headers=headers(key)
    )
    assert response.status_code == 200, response.text
    return response.json()


def export(http, key, path):
    with http.stream("GET", path, headers=headers(key)) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(line) for line in response.iter_lines() if line]


def send(http, key, path, lines):
    body = "".join(json.dumps(line) + "\n" for line in lines)
    return http.post(path, content=body, headers={**headers(key), "Content-Type": "application/x-ndjson"})


@pytest.fixture
def exported(http, sql_store):
    """Tenant with alice (frozen facts, a correction, an alert, a forgotten memory) and bob; its export."""
    tenant, key = new_tenant(sql_store)
    say(http, key, "alice", "s1", "I'm allergic to peanuts", "I live in Hangzhou", "I love jazz")
    say(http, key, "alice", "s2", "I'm allergic to peanuts", "I live in Hangzhou")
    say(http, key, "alice", "s3", "I think I don't mind peanuts", "actually I moved to Suzhou")
    say(http, key, "bob", "s1", "Remember this: my locker code is 4417")
    items = http.get("/v1/users/alice/memories", headers=headers(key)).json()["items"]
    jazz = next(item["memory_id"] for item in items if "jazz" in item["content"])
    assert http.delete(f"/v1/users/alice/memories/{jazz}", headers=headers(key)).status_code == 200
    return key, jazz, export(http, key, "/v1/export")


def test_a_tenant_round_trips_into_a_fresh_stack(http, serve_app, make_stack_settings, exported):
    key, forgotten, first = exported
    assert first[0]["type"] == "header" and first[-1] == {"type": "end", "records": len(first) - 2}
    assert {line["user_id"] for line in first[1:-1]} == {"alice", "bob"}
    assert {"tombstone", "memory", "event", "alert"} <= {line["type"] for line in first}
    assert forgotten not in {line.get("memory_id") for line in first if line["type"] == "memory"}
    with private_app(serve_app, make_stack_settings, "fresh") as fresh:
        _, fresh_key = new_tenant(fresh.store)
        summary = send(http, fresh_key, f"{fresh.base_url}/v1/import", first)
        assert summary.status_code == 200, summary.text
        added = {user["user_id"]: user for user in summary.json()["users"]}
        assert added["alice"]["memories_added"] == sum(
            1 for line in first if line["type"] == "memory" and line["user_id"] == "alice"
        )
        assert added["alice"]["tombstones_added"] == 1
        second = export(http, fresh_key, f"{fresh.base_url}/v1/export")
        assert second[1:] == first[1:]  # identical but for the header (the tenant and the time)
        again = send(http, fresh_key, f"{fresh.base_url}/v1/import", first).json()
        assert all(user["memories_added"] == user["events_added"] == 0 for user in again["users"])
        assert export(http, fresh_key, f"{fresh.base_url}/v1/export")[1:] == first[1:]
        recalled = http.post(
            f"{fresh.base_url}/v1/users/alice/recall",
            json={"query": "where do I live now?"},
            headers=headers(fresh_key),
        )
        assert recalled.status_code == 200 and "Suzhou" in recalled.json()["hits"][0]["memory"]["content"]
        template = next(line for line in first if line["type"] == "memory" and line["user_id"] == "alice")
        revived = {**template, "memory_id": forgotten, "content": "I love jazz"}
        result = send(http, fresh_key, f"{fresh.base_url}/v1/users/alice/import", [revived]).json()
        assert result["users"][0]["memories_forgotten"] == 1  # the tombstone came along, and holds
        contents = [
            item["content"]
            for item in http.get(
                f"{fresh.base_url}/v1/users/alice/memories", params={"limit": 500}, headers=headers(fresh_key)
            ).json()["items"]
        ]
        assert "I love jazz" not in contents


def test_one_user_exports_and_keys_stay_in_their_lane(http, exported):
    key, _, whole = exported
    alice = export(http, key, "/v1/users/alice/export")
    assert alice[1:-1] == [line for line in whole[1:-1] if line["user_id"] == "alice"]
    minted = http.post("/v1/keys", json={"user_id": "alice"}, headers=headers(key)).json()["api_key"]
    assert export(http, minted, "/v1/users/alice/export")[1:] == alice[1:]  # a user takes their data out
    assert http.get("/v1/users/bob/export", headers=headers(minted)).status_code == 403
    assert http.get("/v1/export", headers=headers(minted)).status_code == 403
    refused = send(http, minted, "/v1/users/alice/import", alice)
    assert refused.status_code == 403 and "importing needs a tenant key" in refused.json()["detail"]
    two_users = send(http, key, "/v1/users/carol/import", whole)
    assert two_users.status_code == 422 and "holds 2 users" in two_users.json()["detail"]


def test_a_bad_line_is_refused_with_its_number_and_nothing_is_stored(http, sql_store):
    _, key = new_tenant(sql_store)
    user = f"u{uuid.uuid4().hex[:8]}"
    good = {
        "type": "tombstone",
        "user_id": user,
        "memory_id": None,
        "at": "2026-01-01T00:00:00Z",
        "reason": "erased",
    }
    bad = {**good, "memory_id": "m_' or 1=1"}
    response = send(http, key, "/v1/import", [good, bad])
    assert response.status_code == 422 and response.json()["detail"].startswith(
        "line 2: tombstone.memory_id: Value error, invalid memory_id"
    )
    not_json = http.post("/v1/import", content=b"{not json\n", headers=headers(key))
    assert not_json.status_code == 422 and "line 1: not a JSON object" in not_json.json()["detail"]
    assert export(http, key, "/v1/export")[1:] == [{"type": "end", "records": 0}]
