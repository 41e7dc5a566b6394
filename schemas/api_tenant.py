"""API shapes of the tenant-wide views: the tenant's users with how full each tier is, the tenant's gate
policy, resolving an alert, and the operator's search over the tenant's memories. Like ``schemas.api``,
responses never carry another tenant's data."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from schemas.api import MemoryOut, Reason
from schemas.enums import Layer, State
from schemas.settings import GatePolicy

#: longest user search string (the user-id length)
MAX_USER_QUERY_CHARS = 128
#: a search string uses the user-id alphabet, so it never needs quoting anywhere
USER_QUERY_PATTERN = r"^[A-Za-z0-9_.:@-]*$"
MAX_USERS_PAGE = 200


class LayerUsage(BaseModel):
    layer: Layer
    #: active items in the tier (archive: archived items)
    used: int
    #: the tenant policy's capacity; None for the archive, which has none
    capacity: int | None


class UserSummary(BaseModel):
    user_id: str
    #: working, long-term, core, archive, in that order
    layers: list[LayerUsage]
    frozen: int
    #: frozen items never exceed this (a share of the active capacity, at most the core capacity)
    frozen_limit: int
    open_alerts: int
    last_write_at: datetime | None


class UserList(BaseModel):
    users: list[UserSummary]
    #: more users matched than were returned: narrow the search
    truncated: bool


class TenantPolicy(BaseModel):
    tenant_id: str
    policy: GatePolicy
    #: how the session context's character budget is shared among its sections
    context_budget_split: dict[str, float]


class ResolveAlertRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Reason = Field("", description="why it is resolved; kept in the audit trail")


#: most hits one operator search returns
MAX_TENANT_SEARCH_HITS = 200


class TenantSearchRequest(BaseModel):
    """An operator's search over every user of the tenant ("which memories mention X"), for access and
    erasure requests: the memories nearest the text in meaning, those that contain it word for word first."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500)
    k: int = Field(20, ge=1, le=MAX_TENANT_SEARCH_HITS)
    #: only memories in these states (default: every indexed one, active and archived)
    states: list[State] | None = None


class TenantSearchHit(BaseModel):
    memory: MemoryOut
    #: cosine similarity of the memory to the query
    score: float
    #: the memory (or the turn it was said in) contains the query, ignoring case
    mentions: bool


class TenantSearchResult(BaseModel):
    query: str
    hits: list[TenantSearchHit]
