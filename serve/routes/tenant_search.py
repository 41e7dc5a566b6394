"""The operator's search over the caller's tenant: which memories, of any user, mention a name or a topic
(``actors.app.tenant_search``) — the first step of an access or erasure request. A tenant-wide read like
the alert review: one request token, then the tenant's read-only view, plus the vector index."""

import threading
from typing import Annotated
from weakref import WeakKeyDictionary

from fastapi import APIRouter, Depends

from actors.app.tenant_search import TenantSearch
from schemas.api import MemoryOut
from schemas.api_tenant import TenantSearchHit, TenantSearchRequest, TenantSearchResult
from serve.gateway import Gateway
from serve.routes.deps import GatewayDep, TenantDep

router = APIRouter(prefix="/v1", tags=["tenant"])

_searches: WeakKeyDictionary[Gateway, TenantSearch] = WeakKeyDictionary()
_searches_lock = threading.Lock()


def current_search(gateway: GatewayDep) -> TenantSearch:
    """One per gateway (so per replica); the embedder and the index are opened by the first search."""
    with _searches_lock:
        search = _searches.get(gateway)
        if search is None:
            search = _searches[gateway] = TenantSearch.from_settings(gateway.settings)
        return search


SearchDep = Annotated[TenantSearch, Depends(current_search)]


@router.post(
    "/memories/search",
    summary="Search every user's memories of the tenant (access and erasure requests); mentions first",
)
async def search_tenant(
    body: TenantSearchRequest, tenant: TenantDep, gateway: GatewayDep, search: SearchDep
) -> TenantSearchResult:
    found = await gateway.read_tenant(
        tenant, lambda view: search.search(view, body.query, body.k, body.states)
    )
    hits = [
        TenantSearchHit(memory=MemoryOut.model_validate(m.item), score=round(m.score, 4), mentions=m.mentions)
        for m in found
    ]
    return TenantSearchResult(query=body.query, hits=hits)
