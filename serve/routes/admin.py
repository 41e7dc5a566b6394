"""Operations: liveness, the user hosts' figures, tenant creation (admin key)."""

from fastapi import APIRouter, status

from schemas.api import CreateTenantRequest, DirectoryStats, TenantCreated
from serve.routes.deps import AdminKeyDep, GatewayDep, TenantDep

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="Liveness of the HTTP ingress")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/v1/stats", summary="User host figures: resident users, activations, passivations, latency")
async def stats(_: TenantDep, gateway: GatewayDep) -> DirectoryStats:
    return await gateway.stats()


@router.post(
    "/admin/tenants", status_code=status.HTTP_201_CREATED, summary="Create a tenant; returns its API key once"
)
async def create_tenant(
    body: CreateTenantRequest, gateway: GatewayDep, admin_key: AdminKeyDep = None
) -> TenantCreated:
    return await gateway.create_tenant(admin_key, body)
