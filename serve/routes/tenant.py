"""The caller's tenant: the gate policy its users live under (capacities, decay, fusion weights, context
budget and how that budget is split), and the quality figures the last consolidation run computed for it."""

import asyncio
from typing import Any

from fastapi import APIRouter

from actors.core.context import BUDGET_SPLIT
from schemas.api_tenant import TenantPolicy
from serve.routes.views import AdmittedTenantDep, StoreDep

router = APIRouter(prefix="/v1", tags=["tenant"])


@router.get("/policy", summary="The tenant's gate policy: capacities, decay, weights, context budget")
async def policy(tenant: AdmittedTenantDep, store: StoreDep) -> TenantPolicy:
    gate_policy = await asyncio.to_thread(store.tenant_policy, tenant)
    return TenantPolicy(tenant_id=tenant, policy=gate_policy, context_budget_split=dict(BUDGET_SPLIT))


@router.get(
    "/quality",
    summary="The tenant's quality figures from the last consolidation run: eviction hit rate, profile drift "
    "and agreement (per tenant and per user), and the extraction figures on the shipped labelled set",
)
async def quality(tenant: AdmittedTenantDep, store: StoreDep) -> dict[str, Any]:
    runs = await asyncio.to_thread(store.jobs.runs, "consolidate", 20)
    finished = next((r for r in runs if r["status"] == "succeeded" and r["report"]), None)
    if finished is None:
        return {"tenant_id": tenant, "run_id": None, "figures": None, "extraction": None}
    report = finished["report"]
    return {
        "tenant_id": tenant,
        "run_id": finished["run_id"],
        "finished_at": finished["finished_at"],
        "hit_window_days": report.get("hit_window_days"),
        "figures": report.get("tenants", {}).get(tenant),
        "extraction": report.get("extraction"),
    }
