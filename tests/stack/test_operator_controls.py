"""The operator's controls over HTTP (admin key): a tenant's settings read and changed — policy validated
with a 422 naming the field, quotas that the rate limiter then applies, group-profile consent, key rotation
with an overlap — and none of it reachable with a tenant key."""

import pytest

from tests.conftest import ADMIN_KEY
from tests.stack.test_isolation import headers, new_key

pytestmark = [pytest.mark.stack, pytest.mark.slow]
ADMIN = {"X-Admin-Key": ADMIN_KEY}


def test_an_operator_changes_a_tenant_and_a_tenant_key_cannot(http, sql_store):
    tenant, key = new_key(sql_store)
    base = f"/admin/tenants/{tenant}"
    assert tenant in http.get("/admin/tenants", headers=ADMIN).json()["tenants"]
    shown = http.get(base, headers=ADMIN).json()
    assert shown["policy"]["capacities"]["working"] == 200 and shown["limits"]["requests_per_minute"] is None

    changed = http.patch(
        f"{base}/policy", json={"capacities": {"working": 40}, "write_threshold": 0.5}, headers=ADMIN
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["policy"]["capacities"] == {**shown["policy"]["capacities"], "working": 40}
    assert http.get("/v1/policy", headers=headers(key)).json()["policy"]["capacities"]["working"] == 40
    for bad, field in (
        ({"capacities": {"working": -1}}, "capacities.working"),
        ({"write_treshold": 0.5}, "write_treshold: Extra inputs are not permitted"),
        ({"context_budget_chars": "lots"}, "context_budget_chars"),
    ):
        refused = http.patch(f"{base}/policy", json=bad, headers=ADMIN)
        assert refused.status_code == 422 and field in refused.json()["detail"], refused.text
    assert http.get(base, headers=ADMIN).json()["policy"] == changed.json()["policy"]

    limited = http.put(f"{base}/limits", json={"requests_per_minute": 3, "max_users": None}, headers=ADMIN)
    assert limited.status_code == 200 and limited.json()["limits"]["requests_per_minute"] == 3
    assert http.put(f"{base}/limits", json={"requests_per_minute": 0}, headers=ADMIN).status_code == 422
    consent = http.put(f"{base}/consent", json={"group_profiles": True}, headers=ADMIN)
    assert consent.status_code == 200 and consent.json()["group_profile_consent"] is True

    rotated = http.post(f"{base}/rotate-key", json={"overlap_seconds": 120}, headers=ADMIN)
    assert rotated.status_code == 200, rotated.text
    for tenant_key in (key, rotated.json()["api_key"]):
        assert http.get("/v1/users/u1/memories", headers=headers(tenant_key)).status_code == 200

    for attempt in ({}, headers(key), {"X-Admin-Key": key}):
        assert http.get(base, headers=attempt).status_code == 403
        assert http.patch(f"{base}/policy", json={"top_k": 3}, headers=attempt).status_code == 403
        assert http.post(f"{base}/rotate-key", headers=attempt).status_code == 403
    assert http.get("/admin/tenants/t_nobody_here", headers=ADMIN).status_code == 404
    assert http.get("/admin/tenants/bad id!", headers=ADMIN).status_code == 422
