"""The tenant-wide views over HTTP on the real stack (``serve/routes/users.py``, ``tenant.py``,
``alert_review.py``): listing and searching a tenant's users with their tier usage, the tenant's policy,
its alerts across users, and the audited resolve — each strictly inside the caller's tenant."""

import time
import uuid

import pytest

from schemas.settings import Capacities, GatePolicy
from tests.stack.trust_stack import new_tenant as new_key

pytestmark = [pytest.mark.stack, pytest.mark.slow]

SMALL = GatePolicy(capacities=Capacities(working=7, longterm=11, core=5))


def headers(key):
    return {"X-API-Key": key}


def say(http, key, user, session, *texts):
    turns = [{"text": t, "dialog_id": f"{session}-d{n}"} for n, t in enumerate(texts)]
    response = http.post(
        f"/v1/users/{user}/turns", json={"session_id": session, "turns": turns}, headers=headers(key)
    )
    assert response.status_code == 200, response.text
    return response.json()


def users(http, key, **params):
    response = http.get("/v1/users", params=params, headers=headers(key))
    assert response.status_code == 200, response.text
    return response.json()


def test_users_are_listed_and_searched_within_the_tenant_only(http, sql_store):
    _, key_a = new_key(sql_store)
    _, key_b = new_key(sql_store)
    for user in ("alice", "a_b", "Axb"):
        say(http, key_a, user, "s1", f"Remember this: {user} keeps bees")
    say(http, key_b, "alina", "s1", "Remember this: alina keeps bees")

    assert [u["user_id"] for u in users(http, key_a)["users"]] == ["Axb", "a_b", "alice"]
    assert [u["user_id"] for u in users(http, key_b)["users"]] == ["alina"]
    # "_" matches itself, not any character; the search ignores case
    assert [u["user_id"] for u in users(http, key_a, query="a_b")["users"]] == ["a_b"]
    assert [u["user_id"] for u in users(http, key_a, query="AL")["users"]] == ["alice"]
    assert users(http, key_a, query="alina")["users"] == []
    page = users(http, key_a, limit=2)
    assert len(page["users"]) == 2 and page["truncated"] is True
    assert users(http, key_a, limit=3)["truncated"] is False


def test_user_summary_counts_tiers_against_the_tenants_capacities(http, sql_store):
    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    key = sql_store.tenants.create(tenant_id, policy=SMALL)
    for session in ("s1", "s2"):
        say(http, key, "mei", session, "I'm allergic to peanuts", "I love hiking on weekends")
    summary = http.get("/v1/users/mei/summary", headers=headers(key)).json()
    listed = http.get("/v1/users/mei/memories", params={"limit": 500}, headers=headers(key)).json()["items"]
    active = [m for m in listed if m["state"] in {"pending", "confirmed", "frozen", "unfrozen"}]
    expected = {layer: sum(m["layer"] == layer for m in active) for layer in ("working", "longterm", "core")}
    tiers = {t["layer"]: (t["used"], t["capacity"]) for t in summary["layers"]}
    assert tiers == {
        "working": (expected["working"], 7),
        "longterm": (expected["longterm"], 11),
        "core": (expected["core"], 5),
        "archive": (0, None),
    }
    assert summary["frozen"] == sum(m["state"] == "frozen" for m in listed) >= 1  # the allergy
    assert summary["frozen_limit"] == SMALL.capacities.frozen_limit
    assert users(http, key)["users"] == [summary]

    _, other = new_key(sql_store)
    foreign = http.get("/v1/users/mei/summary", headers=headers(other)).json()
    assert [t["used"] for t in foreign["layers"]] == [0, 0, 0, 0] and foreign["frozen"] == 0
    assert users(http, other)["users"] == []


def test_policy_is_the_tenants_own(http, sql_store):
    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    key = sql_store.tenants.create(tenant_id, policy=SMALL)
    body = http.get("/v1/policy", headers=headers(key)).json()
    assert body["tenant_id"] == tenant_id
    assert body["policy"]["capacities"]["working"] == 7
    assert body["context_budget_split"] == {"core": 0.35, "profile": 0.40, "recent": 0.20, "state": 0.05}
    _, default_key = new_key(sql_store)
    assert (
        http.get("/v1/policy", headers=headers(default_key)).json()["policy"]["capacities"]["working"] == 200
    )


def test_alerts_are_resolved_with_an_audit_entry_by_their_tenant_only(http, sql_store):
    _, key = new_key(sql_store)
    _, other = new_key(sql_store)
    say(http, key, "mei", "s1", "I'm allergic to peanuts")
    say(http, key, "mei", "s2", "I'm allergic to peanuts")
    raised = say(http, key, "mei", "s3", "I think I don't mind peanuts")["alerts"]
    assert [a["kind"] for a in raised] == ["frozen_conflict"]
    alert = raised[0]
    assert [a["alert_id"] for a in http.get("/v1/alerts", headers=headers(key)).json()["alerts"]] == [
        alert["alert_id"]
    ]
    assert http.get("/v1/alerts", headers=headers(other)).json()["alerts"] == []
    resolve = f"/v1/users/mei/alerts/{alert['alert_id']}/resolve"

    assert http.post(resolve, json={"reason": "x"}, headers=headers(other)).status_code == 404
    wrong_user = f"/v1/users/bob/alerts/{alert['alert_id']}/resolve"
    assert http.post(wrong_user, json={"reason": "x"}, headers=headers(key)).status_code == 404
    assert http.get("/v1/alerts", headers=headers(key)).json()["alerts"][0]["status"] == "open"

    done = http.post(resolve, json={"reason": "the user was joking"}, headers=headers(key))
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "resolved"
    assert http.get("/v1/alerts", headers=headers(key)).json()["alerts"] == []
    every = http.get("/v1/users/mei/alerts", params={"status": "all"}, headers=headers(key)).json()["alerts"]
    assert [a["status"] for a in every] == ["resolved"]
    trail = http.get(f"/v1/users/mei/memories/{alert['memory_id']}", headers=headers(key)).json()["audit"]
    entries = [e for e in trail if e["action"] == "resolve_alert"]
    assert len(entries) == 1 and entries[0]["reason"] == "the user was joking"
    assert entries[0]["after"] == {
        "alert_id": alert["alert_id"],
        "kind": "frozen_conflict",
        "status": "resolved",
    }

    again = http.post(resolve, headers=headers(key))  # idempotent, and the body is optional
    assert again.status_code == 200 and again.json()["status"] == "resolved"
    trail = http.get(f"/v1/users/mei/memories/{alert['memory_id']}", headers=headers(key)).json()["audit"]
    assert sum(e["action"] == "resolve_alert" for e in trail) == 1


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("GET", "/v1/users?query=a%20b", None),
        ("GET", "/v1/users?query=%25", None),
        ("GET", "/v1/users?query=" + "a" * 129, None),
        ("GET", "/v1/users?limit=0", None),
        ("GET", "/v1/users?limit=201", None),
        ("GET", "/v1/alerts?status=closed", None),
        ("GET", "/v1/users/bad%20id/summary", None),
        ("POST", "/v1/users/mei/alerts/m_" + "0" * 32 + "/resolve", None),
        ("POST", "/v1/users/mei/alerts/a_" + "0" * 32 + "/resolve", {"reason": "r" * 1001}),
        ("POST", "/v1/users/mei/alerts/a_" + "0" * 32 + "/resolve", {"reason": "ok", "extra": 1}),
    ],
)
def test_bad_input_gets_a_clear_422(http, tenant_key, method, url, body):
    response = http.request(method, url, json=body, headers=headers(tenant_key))
    assert response.status_code == 422, response.text
    assert set(response.json()) == {"error", "detail"} and response.json()["detail"]


def test_no_key_sees_nothing_and_the_rate_limit_counts_these_calls(http, sql_store):
    for path in ("/v1/users", "/v1/users/mei/summary", "/v1/policy", "/v1/alerts"):
        assert http.get(path).status_code == 401
        assert http.get(path, headers=headers("hm_nobody_" + "0" * 48)).status_code == 401
    _, limited = new_key(sql_store, requests_per_minute=3)
    answers = [http.get("/v1/users", headers=headers(limited)).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]


def search(http, key, **body):
    response = http.post("/v1/memories/search", json=body, headers=headers(key))
    assert response.status_code == 200, response.text
    return response.json()["hits"]


def test_the_operators_search_finds_every_users_mentions_in_the_tenant_only(http, sql_store):
    _, key_a = new_key(sql_store)
    _, key_b = new_key(sql_store)
    say(http, key_a, "alice", "s1", "Remember this: my neighbour Rosalind Okafor grows orchids")
    say(http, key_a, "bob", "s1", "Remember this: I play chess with Rosalind Okafor on Sundays")
    say(http, key_a, "bob", "s1", "Remember this: I keep bees on the roof")
    say(http, key_b, "carol", "s1", "Remember this: Rosalind Okafor is my dentist")
    deadline = time.monotonic() + 60  # the hosts' outbox reaches Milvus after the answer
    while True:
        hits = search(http, key_a, query="Rosalind Okafor", k=10)
        mentioning = sorted(h["memory"]["user_id"] for h in hits if h["mentions"])
        if mentioning == ["alice", "bob"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert mentioning == ["alice", "bob"]
    assert [h["mentions"] for h in hits] == sorted((h["mentions"] for h in hits), reverse=True)
    assert all("Okafor" not in h["memory"]["content"] or h["mentions"] for h in hits)
    assert "carol" not in {h["memory"]["user_id"] for h in hits}
    assert search(http, key_a, query="Rosalind Okafor", states=["archived"]) == []
    refused = http.post("/v1/memories/search", json={"query": "x", "k": 500}, headers=headers(key_a))
    assert refused.status_code == 422
    assert http.post("/v1/memories/search", json={"query": "x"}).status_code == 401
