"""The operator's controls of a tenant, on a real SQL store: policy changes merge into the current policy
and are validated whole (an unknown field or a value out of range names its path and changes nothing),
quotas, the tenant's and each user's consent to group profiles."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.app.tenant_admin import TenantAdmin
from schemas.api_tenant import TenantLimitsIn
from schemas.errors import InvalidInput, NotFound


@pytest.fixture
def admin(store):
    return TenantAdmin(store, "acme")


def test_a_policy_change_merges_into_the_current_policy(admin, store):
    changed = admin.change_policy({"capacities": {"working": 50}, "write_threshold": 0.5})
    assert changed.policy.capacities.working == 50 and changed.policy.capacities.core == 50
    assert changed.policy.write_threshold == 0.5
    again = admin.change_policy({"context_budget_chars": 3000})
    assert again.policy.capacities.working == 50 and again.policy.context_budget_chars == 3000
    assert store.tenants.policy("acme") == again.policy  # what the hosts load


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"capacities": {"workng": 5}}, "policy: capacities.workng: Extra inputs are not permitted"),
        (
            {"capacities": {"working": 0}},
            "policy: capacities.working: Input should be greater than or equal to 1",
        ),
        ({"write_threshold": 1.5}, "policy: write_threshold: Input should be less than or equal to 1"),
        ({"context_budget_chars": 10}, "policy: context_budget_chars: Input should be greater than or equal"),
        (
            {"decay": {"per_kind": {"fact": 2}}},
            "policy: decay.per_kind.fact: Input should be less than or equal",
        ),
        ({"fusion": {"frozen_boost": 3}}, "policy: fusion.frozen_boost"),
        ({"capacities": "big"}, "policy: capacities: Input should be a valid dictionary"),
    ],
)
def test_a_bad_policy_is_refused_with_the_field_and_nothing_changes(admin, store, changes, says):
    before = store.tenants.policy("acme")
    with pytest.raises(InvalidInput) as error:
        admin.change_policy(changes)
    assert str(error.value).startswith(says), str(error.value)
    assert store.tenants.policy("acme") == before


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(working=st.integers(-5, 10_000), threshold=st.floats(-1, 2, allow_nan=False))
def test_any_change_is_either_stored_whole_or_refused(admin, store, working, threshold):
    before = store.tenants.policy("acme")
    try:
        after = admin.change_policy({"capacities": {"working": working}, "write_threshold": threshold}).policy
    except InvalidInput:
        assert store.tenants.policy("acme") == before
        assert working < 1 or not 0 <= threshold <= 1
    else:
        assert (after.capacities.working, after.write_threshold) == (working, threshold)
        assert store.tenants.policy("acme") == after


def test_quotas_and_consents(admin, store):
    assert admin.set_limits(TenantLimitsIn(max_users=10, requests_per_minute=None)).limits.max_users == 10
    assert store.tenants.limits("acme").max_users == 10
    assert admin.user_consent("alice").model_dump() == {
        "user_id": "alice",
        "group_profiles": None,
        "counted": False,
    }
    admin.set_group_profile_consent(True)
    assert admin.user_consent("alice").counted is True  # the tenant agreed and alice said nothing
    withdrawn = admin.set_user_consent("alice", False)
    assert (withdrawn.group_profiles, withdrawn.counted) == (False, False)
    assert admin.set_user_consent("alice", True).counted is True
    with pytest.raises(NotFound):
        TenantAdmin(store, "ghost").settings()
