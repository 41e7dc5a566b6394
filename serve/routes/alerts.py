"""Alerts raised by the gates for review (freeze conflicts, full core, contradictions)."""

from fastapi import APIRouter

from actors.app.commands import Alerts
from schemas import endpoints
from schemas.api import AlertFilter, AlertList
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath, served

router = APIRouter(tags=["alerts"])


@served(router, endpoints.ALERTS)
async def alerts(
    user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep, status: AlertFilter = "open"
) -> AlertList:
    return await gateway.run(tenant, user_id, Alerts(status=status))
