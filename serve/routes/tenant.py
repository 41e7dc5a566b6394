"""The caller's tenant: the gate policy its users live under (capacities, decay, fusion weights, context
budget and how that budget is split)."""

from fastapi import APIRouter

from schemas.api_tenant import TenantPolicy
from serve.routes.deps import GatewayDep, TenantDep

router = APIRouter(prefix="/v1", tags=["tenant"])


@router.get("/policy", summary="The tenant's gate policy: capacities, decay, weights, context budget")
async def policy(tenant: TenantDep, gateway: GatewayDep) -> TenantPolicy:
    return await gateway.read_tenant(tenant, lambda view: view.policy())
