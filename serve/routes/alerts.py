"""Alerts raised by the gates for review (freeze conflicts, full core, contradictions)."""

from fastapi import APIRouter

from actors.app.commands import AlertFilter, Alerts
from schemas.api import AlertList
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1/users/{user_id}", tags=["alerts"])


@router.get("/alerts", summary="A user's alerts (open by default)")
async def alerts(
    user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep, status: AlertFilter = "open"
) -> AlertList:
    return await gateway.run(tenant, user_id, Alerts(status=status))
