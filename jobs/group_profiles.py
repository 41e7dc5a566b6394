"""Group profiles (docs/jobs.md#group-profiles): for tenants that opted in (``group_profile_consent``), count
how many users hold each slot value and publish those counts as the tenant's cohort features — used to seed a
new user's session context (marked as cohort-derived; never stored as the user's memory, so never frozen).

What is counted: a user's concluded values (confirmed or frozen) of ``preference.*`` and ``style.*`` slots
only — never declared personal facts (``basic.*``), relations, tasks or temporary states. What leaves a
user's scope is a count, never content: a feature is published only when at least ``min_cohort`` users hold
it and the tenant has at least ``min_cohort`` users, so no feature describes a group smaller than that.
A tenant without consent (or that withdrew it) has its features removed; a user who withdrew their own
consent (``user_consents``, ``PUT /v1/users/{id}/consent``) is not counted, nor in the cohort's size.

Ray Data reads the users (``read_sql``) and reads each user's conclusions in parallel tasks; the driver
adds up the counts (small: one entry per distinct slot value) and replaces each tenant's features in one
transaction.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from actors.core.records import CohortFeature
from actors.store.sql.store import MemoryStore
from jobs import defaults, profiles
from jobs.common import batch_job, rows_of, traced_batch
from schemas.enums import Polarity
from schemas.errors import InvalidInput
from schemas.settings import HermesSettings

JOB = "group-profiles"


def claims_of_users(
    batch: dict[str, Any], settings_json: str, trace_context: dict[str, str]
) -> dict[str, list]:
    """Ray Data task: each user's countable claims, as JSON (one row per user)."""
    store = MemoryStore.from_settings(HermesSettings.model_validate_json(settings_json))
    rows = list(rows_of(batch))
    try:
        with traced_batch("group_profiles.batch", trace_context, users=len(rows)):
            claims = [
                json.dumps(
                    sorted(profiles.cohort_claims(store.memories.load_active(r["tenant_id"], r["user_id"])))
                )
                for r in rows
            ]
    finally:
        store.dispose()
    return {"tenant_id": [r["tenant_id"] for r in rows], "claims": claims}


def publishable(
    claims: Counter[tuple[str, str, str, str]], cohort_sizes: Counter[str], min_cohort: int
) -> dict[str, list[CohortFeature]]:
    """tenant → features held by at least ``min_cohort`` users, in a cohort of at least that many."""
    features: dict[str, list[CohortFeature]] = {tenant: [] for tenant in cohort_sizes}
    for (tenant, slot, polarity, value), users in sorted(claims.items()):
        size = cohort_sizes[tenant]
        if users >= min_cohort and size >= min_cohort:
            share = round(users / size, 4)
            features[tenant].append(CohortFeature(slot, Polarity(polarity), value, users, size, share))
    return features


def run(
    settings: HermesSettings,
    tenants: list[str] | None = None,
    *,
    min_cohort: int = defaults.MIN_COHORT,
    parallelism: int | None = None,
    progress_bar: bool = False,
) -> dict[str, Any]:
    if min_cohort < 2:
        raise InvalidInput("min_cohort must be at least 2: a cohort of one is a person")
    with batch_job(settings, JOB, tenants, parallelism, progress_bar) as job:
        store, tenants = job.store, job.tenants
        consenting = [t for t in tenants if store.tenants.group_profile_consent(t)]
        with job.record(min_cohort=min_cohort) as current:
            users = job.users(consenting, consenting_only=True)
            cohort_sizes: Counter[str] = Counter({tenant: 0 for tenant in consenting})
            claims: Counter[tuple[str, str, str, str]] = Counter()
            progress = job.progress(users.count() if users is not None else 0)
            if users is not None:
                for rows in job.map(users, claims_of_users, current):
                    for row in rows:
                        cohort_sizes[row["tenant_id"]] += 1
                        claims.update((row["tenant_id"], *claim) for claim in json.loads(row["claims"]))
                    progress.update(len(rows))
            progress.close()
            features = publishable(claims, cohort_sizes, min_cohort)
            for tenant in tenants:  # consenting tenants get fresh features, the others none
                store.jobs.replace_cohort_features(tenant, features.get(tenant, []))
            published = sum(len(f) for f in features.values())
            current.report = {
                "tenants_consenting": len(consenting),
                "tenants_skipped_without_consent": len(tenants) - len(consenting),
                "users": sum(cohort_sizes.values()),
                "cohort_sizes": dict(cohort_sizes),
                "distinct_claims": len(claims),
                "features_published": published,
                "claims_suppressed_below_min_cohort": len(claims) - published,
                "min_cohort": min_cohort,
            }
        return current.report


def main(argv: list[str] | None = None) -> int:
    from jobs.cli import run_module

    return run_module(JOB, argv)


if __name__ == "__main__":
    raise SystemExit(main())
