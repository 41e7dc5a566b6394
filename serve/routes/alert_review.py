"""Reviewing alerts: the tenant's alerts across its users (the tenant's read-only view), and resolving one
with a reason that goes into the audit trail — a user command, through the user's host like every change
(the gates raise alerts; only a person closes them)."""

from typing import Annotated

from fastapi import APIRouter, Path, Query

from actors.app.commands import ResolveAlert
from schemas.api import AlertFilter, AlertList, AlertOut
from schemas.api_tenant import ResolveAlertRequest
from schemas.ids import AlertId
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1", tags=["alerts"])
AlertIdPath = Annotated[AlertId, Path(description="a_ followed by 32 hex digits")]
MAX_ALERTS_PAGE = 500


@router.get("/alerts", summary="The tenant's alerts across all users (open by default), newest first")
async def tenant_alerts(
    tenant: TenantDep,
    gateway: GatewayDep,
    status: AlertFilter = "open",
    limit: Annotated[int, Query(ge=1, le=MAX_ALERTS_PAGE)] = 100,
) -> AlertList:
    return await gateway.read_tenant(tenant, lambda view: view.alerts(status, limit))


@router.post("/users/{user_id}/alerts/{alert_id}/resolve", summary="Resolve a user's alert (audited)")
async def resolve_alert(
    user_id: UserIdPath,
    alert_id: AlertIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    body: ResolveAlertRequest | None = None,
) -> AlertOut:
    command = ResolveAlert(alert_id=alert_id, request=body or ResolveAlertRequest())
    return await gateway.run(tenant, user_id, command)
