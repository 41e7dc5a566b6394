"""Dependencies of the tenant-wide views (``users``, ``tenant``, ``alert_review``): the replica's
``TenantViewStore`` and the caller's tenant after its rate limit.

These routes read and write SQL directly instead of going through a user's actor, so they take their
request token from the gateway's quotas themselves: a tenant's console traffic counts like any other.
"""

import threading
from typing import Annotated
from weakref import WeakKeyDictionary

from fastapi import Depends

from actors.store.sql.tenant_views import TenantViewStore
from serve.gateway import Gateway
from serve.routes.deps import GatewayDep, TenantDep

_stores: WeakKeyDictionary[Gateway, TenantViewStore] = WeakKeyDictionary()
_stores_lock = threading.Lock()


def current_store(gateway: GatewayDep) -> TenantViewStore:
    """One store per gateway (so per replica), opened on first use with the gateway's settings."""
    with _stores_lock:
        store = _stores.get(gateway)
        if store is None:
            store = _stores[gateway] = TenantViewStore.from_settings(gateway.settings)
        return store


async def admitted_tenant(tenant: TenantDep, gateway: GatewayDep) -> str:
    await gateway.quotas.admit_tenant_view(tenant)
    return tenant


StoreDep = Annotated[TenantViewStore, Depends(current_store)]
AdmittedTenantDep = Annotated[str, Depends(admitted_tenant)]
