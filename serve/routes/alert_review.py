"""Reviewing alerts: the tenant's alerts across its users, and resolving one with a reason that goes into
the audit trail (the gates raise alerts; only a person closes them)."""

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Query

from actors.core.memory import Alert
from schemas.api import AlertList, AlertOut
from schemas.api_tenant import ResolveAlertRequest
from schemas.enums import AlertStatus
from schemas.ids import AlertId
from serve.gateway import AlertFilter
from serve.routes.deps import UserIdPath
from serve.routes.views import AdmittedTenantDep, StoreDep

router = APIRouter(prefix="/v1", tags=["alerts"])
AlertIdPath = Annotated[AlertId, Path(description="a_ followed by 32 hex digits")]
#: who resolved it, as the audit trail names it
RESOLVER = "operator"
MAX_ALERTS_PAGE = 500


@router.get("/alerts", summary="The tenant's alerts across all users (open by default), newest first")
async def tenant_alerts(
    tenant: AdmittedTenantDep,
    store: StoreDep,
    status: AlertFilter = "open",
    limit: Annotated[int, Query(ge=1, le=MAX_ALERTS_PAGE)] = 100,
) -> AlertList:
    wanted = None if status == "all" else AlertStatus(status)
    found: list[Alert] = await asyncio.to_thread(store.alerts, tenant, None, wanted)
    return AlertList(alerts=[AlertOut.model_validate(alert) for alert in found[:limit]])


@router.post("/users/{user_id}/alerts/{alert_id}/resolve", summary="Resolve a user's alert (audited)")
async def resolve_alert(
    user_id: UserIdPath,
    alert_id: AlertIdPath,
    tenant: AdmittedTenantDep,
    store: StoreDep,
    body: ResolveAlertRequest | None = None,
) -> AlertOut:
    reason = (body or ResolveAlertRequest()).reason
    resolved = await asyncio.to_thread(
        store.resolve_with_audit, tenant, user_id, alert_id, reason=reason, actor=RESOLVER
    )
    return AlertOut.model_validate(resolved)
