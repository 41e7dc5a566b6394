"""Multi-route recall inside one user's scope."""

from fastapi import APIRouter

from actors.app.commands import Recall
from schemas import endpoints
from schemas.api import RecallRequest, RecallResponse
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath, served

router = APIRouter(tags=["recall"])


@served(router, endpoints.RECALL)
async def recall(
    user_id: UserIdPath, body: RecallRequest, tenant: TenantDep, gateway: GatewayDep
) -> RecallResponse:
    return await gateway.run(tenant, user_id, Recall(request=body))
