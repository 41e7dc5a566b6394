"""Session start: the context snapshot, byte-identical for the whole session."""

from fastapi import APIRouter

from actors.app.commands import StartSession
from schemas.api import SessionContext, StartSessionRequest
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1/users/{user_id}", tags=["sessions"])


@router.post("/sessions", summary="Start (or resume) a session and get its frozen context snapshot")
async def start_session(
    user_id: UserIdPath, body: StartSessionRequest, tenant: TenantDep, gateway: GatewayDep
) -> SessionContext:
    return await gateway.run(tenant, user_id, StartSession(request=body))
