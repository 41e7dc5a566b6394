"""API shapes of the tenant-wide views: the tenant's users with how full each tier is, the tenant's gate
policy, resolving an alert, and the operator's search over the tenant's memories. Like ``schemas.api``,
responses never carry another tenant's data."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from schemas.api import MemoryOut, Reason
from schemas.enums import Layer, State
from schemas.ids import UserId
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


#: the longest overlap or grace a key change may give (a week): long enough to roll out, short enough to end
MAX_KEY_OVERLAP_SECONDS = 7 * 24 * 3600


class MintUserKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: UserId = Field(description="the one user the key reaches")
    label: str = Field("", max_length=200, description="a name for the key, for listing")


class ApiKeyOut(BaseModel):
    """A further key of the tenant as listed (never the key itself)."""

    model_config = ConfigDict(from_attributes=True)

    key_id: str
    #: None: a tenant-wide key (a rotated-out primary key during its overlap)
    user_id: str | None
    label: str
    created_at: datetime
    #: the key stops working at this time; None: until revoked
    expires_at: datetime | None


class ApiKeyMinted(ApiKeyOut):
    #: the plaintext key, shown once: only its hash is stored
    api_key: str


class ApiKeyList(BaseModel):
    keys: list[ApiKeyOut]


class RotateKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    overlap_seconds: float = Field(
        300.0,
        ge=0,
        le=MAX_KEY_OVERLAP_SECONDS,
        description="how long the old key keeps working beside the new one (0: it stops now)",
    )


class KeyRotated(BaseModel):
    tenant_id: str
    #: the new primary key, shown once
    api_key: str
    #: when the previous key stops working
    previous_key_expires_at: datetime


class TenantLimitsIn(BaseModel):
    """A tenant's quotas; None: unlimited."""

    model_config = ConfigDict(extra="forbid", from_attributes=True)

    max_users: int | None = Field(None, ge=1)
    requests_per_minute: int | None = Field(None, ge=1)


class TenantSettings(BaseModel):
    """What an operator sees of a tenant (never its key)."""

    tenant_id: str
    name: str
    #: the policy its users live under (the service's defaults with the tenant's changes)
    policy: GatePolicy
    limits: TenantLimitsIn
    group_profile_consent: bool
    created_at: datetime


class TenantList(BaseModel):
    tenants: list[str]


class GroupProfileConsent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_profiles: bool = Field(description="whether the profile conclusions may count in cohort features")


class UserConsent(BaseModel):
    user_id: str
    #: None: the user gave no answer, so the tenant's holds
    group_profiles: bool | None
    #: whether the user is counted in the tenant's group profiles now (the tenant's and the user's answers)
    counted: bool


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


class UserQualityFigures(BaseModel):
    """One user's figures in a consolidation run (what each means and cannot tell: docs/quality.md §9)."""

    #: share of the user's slots whose conclusion changed since the run before; None: nothing to compare
    profile_drift: float | None = None
    #: share of the user's profile conclusions no active memory contradicts; None: no conclusion yet
    profile_agreement: float | None = None
    #: share of the user's evictions in the look-back window not wanted back; None: no eviction in it
    eviction_hit_rate: float | None = None
    evictions_in_window: int = 0
    evictions_missed: int = 0


class TenantQualityFigures(BaseModel):
    """The tenant's figures in a consolidation run: its users' together, and each user's."""

    users: int
    memories: int
    eviction_hit_rate: float | None
    evictions_in_window: int
    evictions_missed: int
    #: mean drift over the users compared with the run before
    profile_drift: float | None
    users_compared: int
    users_drifted: int
    #: mean agreement over the users with a conclusion
    profile_agreement: float | None
    per_user: dict[str, UserQualityFigures] = {}


class LabelFigures(BaseModel):
    n: int
    precision: float | None
    recall: float | None


class ExtractionFigures(BaseModel):
    """The semantic reader's figures on the held-out part of the labelled set shipped with the project: the
    same for every tenant, a regression check on the reader, not a measure of the tenant's users."""

    labelled_set: int
    held_out: int
    precision: float | None
    recall: float | None
    look_alikes_kept_slot_less: float | None
    per_label: dict[str, LabelFigures]


class QualityRun(BaseModel):
    """Which consolidation run the figures come from: the last that succeeded; every field None (and the
    figures None) before a first run."""

    run_id: str | None = None
    finished_at: datetime | None = None
    hit_window_days: int | None = None


class TenantQuality(QualityRun):
    tenant_id: str
    #: None: no consolidation run has covered the tenant yet
    figures: TenantQualityFigures | None = None
    extraction: ExtractionFigures | None = None


class UserQuality(QualityRun):
    tenant_id: str
    user_id: str
    #: None: no consolidation run has covered this user yet (a user new since the last run, or no run)
    figures: UserQualityFigures | None = None
