"""A user's own consent to group profiles: whether their profile conclusions may count in the tenant's
cohort features (``jobs/group_profiles.py``). A per-user key may give or withdraw its own user's consent."""

from fastapi import APIRouter

from schemas.api_tenant import GroupProfileConsent, UserConsent
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1/users/{user_id}", tags=["consent"])


@router.get("/consent", summary="The user's answer about group profiles, and whether they are counted")
async def user_consent(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> UserConsent:
    return await gateway.manage_tenant(tenant, lambda admin: admin.user_consent(user_id))


@router.put("/consent", summary="Give or withdraw the user's consent to group profiles")
async def set_user_consent(
    user_id: UserIdPath, body: GroupProfileConsent, tenant: TenantDep, gateway: GatewayDep
) -> UserConsent:
    return await gateway.manage_tenant(
        tenant, lambda admin: admin.set_user_consent(user_id, body.group_profiles)
    )
