"""Session start: the context snapshot, byte-identical for the whole session."""

from fastapi import APIRouter

from actors.app.commands import StartSession
from schemas import endpoints
from schemas.api import SessionContext, StartSessionRequest
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath, served

router = APIRouter(tags=["sessions"])


@served(router, endpoints.START_SESSION)
async def start_session(
    user_id: UserIdPath, body: StartSessionRequest, tenant: TenantDep, gateway: GatewayDep
) -> SessionContext:
    return await gateway.run(tenant, user_id, StartSession(request=body))
