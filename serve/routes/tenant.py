"""The caller's tenant: the gate policy its users live under (capacities, decay, fusion weights, context
budget and how that budget is split), and the quality figures the last consolidation run computed for it."""

from fastapi import APIRouter

from schemas.api_tenant import TenantPolicy, TenantQuality
from serve.routes.deps import GatewayDep, TenantDep

router = APIRouter(prefix="/v1", tags=["tenant"])


@router.get("/policy", summary="The tenant's gate policy: capacities, decay, weights, context budget")
async def policy(tenant: TenantDep, gateway: GatewayDep) -> TenantPolicy:
    return await gateway.read_tenant(tenant, lambda view: view.policy())


@router.get(
    "/quality",
    summary="The tenant's quality figures from the last consolidation run: eviction hit rate, profile drift "
    "and agreement (per tenant and per user), and the extraction figures on the shipped labelled set",
)
async def quality(tenant: TenantDep, gateway: GatewayDep) -> TenantQuality:
    return await gateway.read_tenant(tenant, lambda view: view.quality())
