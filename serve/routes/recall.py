"""Multi-route recall inside one user's scope."""

from fastapi import APIRouter

from actors.app.commands import Recall
from schemas.api import RecallRequest, RecallResponse
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1/users/{user_id}", tags=["recall"])


@router.post("/recall", summary="Recall memories for a query, each with its score breakdown and sources")
async def recall(
    user_id: UserIdPath, body: RecallRequest, tenant: TenantDep, gateway: GatewayDep
) -> RecallResponse:
    return await gateway.run(tenant, user_id, Recall(request=body))
