"""The caller's tenant: the gate policy its users live under (capacities, decay, fusion weights, context
budget and how that budget is split)."""

import asyncio

from fastapi import APIRouter

from actors.core.context import BUDGET_SPLIT
from schemas.api_tenant import TenantPolicy
from serve.routes.views import AdmittedTenantDep, StoreDep

router = APIRouter(prefix="/v1", tags=["tenant"])


@router.get("/policy", summary="The tenant's gate policy: capacities, decay, weights, context budget")
async def policy(tenant: AdmittedTenantDep, store: StoreDep) -> TenantPolicy:
    gate_policy = await asyncio.to_thread(store.tenant_policy, tenant)
    return TenantPolicy(tenant_id=tenant, policy=gate_policy, context_budget_split=dict(BUDGET_SPLIT))
