"""The public API shapes (HTTP bodies and Python handle arguments), pydantic v2.

Requests forbid unknown fields and bound every string, so an oversized or malformed body fails validation
before it reaches a user's actor. Identifiers use the ``schemas.ids`` types (safe alphabets). Responses mirror
the domain records of ``actors.core.memory`` minus ``tenant_id``: a caller only ever sees its own tenant.
"""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from schemas.enums import AlertKind, AlertStatus, Kind, Layer, Polarity, Source, State
from schemas.ids import DialogId, SessionId, TenantId
from schemas.slots import SLOT_NAMES

MAX_TURN_CHARS = 8000
MAX_TURNS_PER_BATCH = 200
MAX_REASON_CHARS = 1000
MAX_QUERY_CHARS = 2000
MAX_VALUE_CHARS = 500
#: most memories one page of a listing holds
MAX_PAGE = 500


def _as_utc(value: datetime | None) -> datetime | None:
    """Naive datetimes are taken as UTC: the store keeps everything timezone-aware."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _known_slot(slot: str | None) -> str | None:
    if slot is not None and slot not in SLOT_NAMES:
        raise ValueError(f"unknown slot {slot[:64]!r}; known slots: {', '.join(sorted(SLOT_NAMES))}")
    return slot


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]
SlotName = Annotated[str, Field(max_length=64), AfterValidator(_known_slot)]
Reason = Annotated[str, Field(max_length=MAX_REASON_CHARS)]
RequiredReason = Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS)]
Unit = Annotated[float, Field(ge=0.0, le=1.0)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------- requests


class TurnIn(_Request):
    role: Literal["user", "assistant"] = "user"
    text: str = Field(min_length=1, max_length=MAX_TURN_CHARS)
    dialog_id: DialogId
    at: UtcDatetime | None = None


class WriteTurnsRequest(_Request):
    session_id: SessionId
    turns: list[TurnIn] = Field(min_length=1, max_length=MAX_TURNS_PER_BATCH)


class WriteMemoryRequest(_Request):
    content: str = Field(min_length=1, max_length=MAX_TURN_CHARS)
    kind: Kind
    session_id: SessionId
    dialog_ids: list[DialogId] = Field(min_length=1, max_length=MAX_TURNS_PER_BATCH)
    polarity: Polarity = Polarity.POSITIVE
    slot: SlotName | None = None
    value: str | None = Field(None, max_length=MAX_VALUE_CHARS)
    importance: Unit = 0.7
    confidence: Unit = 0.8
    source: Source = Source.USER_DECLARED
    #: an explicit "remember this": bypasses the write threshold
    remember: bool = False


class RecallRequest(_Request):
    query: str = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="what to remember, in plain words"
    )
    k: int = Field(8, ge=1, le=50, description="how many memories at most (1-50)")
    session_id: SessionId | None = Field(None, description="the current session, if any")
    include_archive: bool = True


class StartSessionRequest(_Request):
    session_id: SessionId = Field(description="the conversation's session id (the agent's own)")
    budget_chars: int | None = Field(None, ge=200, le=20000, description="snapshot size (200-20000)")


class ConfirmRequest(_Request):
    session_id: SessionId | None = Field(None, description="the session the user affirmed it in")
    reason: Reason = ""


class FreezeRequest(_Request):
    reason: RequiredReason


class UnfreezeRequest(_Request):
    reason: RequiredReason = Field(description="why; required, kept in the audit trail")
    dialog_id: DialogId = Field(description="the turn that asked for the change")
    new_content: str | None = Field(None, min_length=1, max_length=MAX_TURN_CHARS)
    new_value: str | None = Field(None, max_length=MAX_VALUE_CHARS)


class ForgetRequest(_Request):
    reason: Reason = Field("user request", description="kept in the audit trail")


class EraseRequest(_Request):
    reason: Reason = "user request"


class MemoryPage(_Request):
    """One page of a user's memories, newest first, optionally by layer and state."""

    layer: Layer | None = None
    state: State | None = None
    limit: int = Field(100, ge=1, le=MAX_PAGE, description="1-500")
    offset: int = Field(0, ge=0)


AlertFilter = Literal["open", "resolved", "all"]


class AlertQuery(_Request):
    status: AlertFilter = "open"


class NoRequest(_Request):
    """The request of an operation that takes no parameters beyond its path."""


class CreateTenantRequest(_Request):
    tenant_id: TenantId
    name: str = Field("", max_length=200)
    group_profile_consent: bool = False
    #: quotas (``serve.quotas``); omitted = unlimited
    max_users: int | None = Field(None, ge=1)
    requests_per_minute: int | None = Field(None, ge=1)


# --------------------------------------------------------------------------------------------- responses


class MemoryOut(BaseModel):
    # built from a domain record's attributes (``MemoryOut.model_validate(item)``)
    model_config = ConfigDict(from_attributes=True)

    memory_id: str
    user_id: str
    layer: Layer
    state: State
    kind: Kind
    polarity: Polarity
    slot: str | None
    #: the canonical value, the same in every language ("hiking"): what matching reads
    value: str | None
    #: the value in the user's own words (爬山 for a user who wrote 爬山): what a person or a model is shown
    display: str | None = None
    content: str
    content_hash: str
    importance: float
    confidence: float
    decay_score: float
    access_count: int
    source: Source
    source_session_id: str | None
    source_dialog_ids: list[str]
    confirmed_sessions: list[str]
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime
    frozen_at: datetime | None
    version: int
    supersedes: list[str]
    superseded_by: str | None
    conflicts_with: list[str]
    complements: list[str]
    merged_from: list[str]


class AuditEventOut(BaseModel):
    # built from a domain record's attributes (``AuditEventOut.model_validate(event)``)
    model_config = ConfigDict(from_attributes=True)

    user_id: str
    memory_id: str | None
    action: str
    actor: str
    reason: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source_dialog_id: str | None
    at: datetime


class AlertOut(BaseModel):
    # built from a domain record's attributes (``AlertOut.model_validate(alert)``)
    model_config = ConfigDict(from_attributes=True)

    alert_id: str
    user_id: str
    kind: AlertKind
    memory_id: str | None
    message: str
    related_ids: list[str]
    status: AlertStatus
    created_at: datetime


class WriteOutcome(BaseModel):
    memory_id: str
    action: Literal["created", "confirmed", "merged", "conflict", "corrected", "ignored"]
    state: State
    layer: Layer
    detail: str = ""


class NotKept(BaseModel):
    """Words of a write that were not kept, and why: "not kept: an instruction to the assistant"."""

    dialog_id: str
    detail: str


class WriteResult(BaseModel):
    user_id: str
    outcomes: list[WriteOutcome]
    alerts: list[AlertOut]
    ignored_turns: int
    not_kept: list[NotKept] = Field(default_factory=list)


class PreviewOutcome(WriteOutcome):
    #: the memory as the write would leave it (its id is only a placeholder when ``action`` is "created")
    memory: MemoryOut


class TurnsPreview(BaseModel):
    """What writing the turns would do, as the write would answer it; nothing of it is stored."""

    user_id: str
    outcomes: list[PreviewOutcome]
    alerts: list[AlertOut]
    ignored_turns: int


class ScoreBreakdown(BaseModel):
    #: the semantic route's score (0 when it did not find the memory)
    semantic: float
    time_decay: float
    importance: float
    #: each route's score for the memory, by route name ("semantic", "keyword", "slot", "relation" at its
    #: hop level, "session" …): only the routes that scored it
    routes: dict[str, float] = Field(default_factory=dict)
    #: the route scores folded into the fusion's semantic term
    relevance: float = 0.0
    boosts: dict[str, float] = Field(default_factory=dict)
    total: float


class RecallHit(BaseModel):
    memory: MemoryOut
    score: ScoreBreakdown
    #: which recall routes found it: "semantic", "keyword", "slot", "recency", "archive", ...
    routes: list[str]
    #: memory ids among the hits that contradict this one (flagged, not resolved)
    contradicts: list[str] = Field(default_factory=list)
    #: for a statement kept pending against confirmed or frozen facts, in words a model cannot miss:
    #: "unconfirmed — contradicts: allergy: shellfish" (empty otherwise)
    caution: str = ""


class RecallResponse(BaseModel):
    query: str
    hits: list[RecallHit]


class SessionContext(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    session_id: str
    created_at: datetime
    #: the snapshot handed to the model: byte-identical on every call for this session
    text: str
    memory_block: str
    user_block: str
    sections: dict[str, str]


class MemoryDetail(BaseModel):
    memory: MemoryOut
    audit: list[AuditEventOut]


class MemoryList(BaseModel):
    items: list[MemoryOut]
    total: int


class ForgetResult(BaseModel):
    memory_id: str
    forgotten: bool
    #: what went with it: the summaries that merged it and their sources
    also_forgotten: list[str] = Field(default_factory=list)
    detail: str = ""


class EraseResult(BaseModel):
    user_id: str
    items_removed: int


class AlertList(BaseModel):
    alerts: list[AlertOut]


class SlotConclusion(BaseModel):
    """One value of a profile slot and the memories behind it."""
    model_config = ConfigDict(from_attributes=True)

    #: the canonical value, the same in every language ("chengdu"): what restatements are matched on
    value: str
    #: the value in the user's own words: "成都" for one who wrote 成都, "Chengdu" for one who wrote Chengdu
    display: str = ""
    polarity: Polarity
    #: support from the backing memories (noisy-OR over the sessions that stated it), lowered by each
    #: contradicting claim
    confidence: float
    #: the backing memory ids, oldest first
    memory_ids: list[str]
    #: when the value was last stated (for history: when it stopped being current)
    updated_at: datetime
    #: ranking weight among a slot's values: confidence × recency × negative priority (×1.2 for 14 days)
    weight: float = 0.0
    state: State | None = None
    frozen: bool = False
    #: distinct sessions that stated the value
    sessions: int = 0
    first_stated_at: datetime | None = None
    #: memory ids of active claims that contradict this value (flagged, not resolved)
    contested_by: list[str] = Field(default_factory=list)
    #: history only: the memory that replaced this value
    superseded_by: str | None = None


class ProfileSlot(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    slot: str
    label: str
    single_valued: bool
    #: the slot's confidence: one conflicting memory lowers it, it does not flip the conclusion
    confidence: float
    #: heaviest first; a single-valued slot has exactly one
    conclusions: list[SlotConclusion]
    #: superseded values, kept as history
    history: list[SlotConclusion] = Field(default_factory=list)
    #: basic | preference | style | relation | task
    group: str = ""


class RelationEdge(BaseModel):
    """``user –colleague→ Bob``, ``Atlas –deadline→ next Friday``: entities the memories link."""
    model_config = ConfigDict(from_attributes=True)

    source: str
    label: str
    target: str
    memory_ids: list[str]


class StateOut(BaseModel):
    """A temporary state (mood, current focus): working memory only, never a profile conclusion."""
    model_config = ConfigDict(from_attributes=True)

    slot: str
    #: the canonical state ("sick"); ``display`` is it in the user's words (感冒), else their sentence
    value: str | None
    display: str | None = None
    content: str
    memory_id: str
    stated_at: datetime


class UserProfile(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    user_id: str
    slots: list[ProfileSlot]
    relations: list[RelationEdge] = Field(default_factory=list)
    #: the current temporary state, newest per ``state.*`` slot
    state: list[StateOut] = Field(default_factory=list)
    generated_at: datetime | None = None


class TenantCreated(BaseModel):
    tenant_id: str
    #: the plaintext key, shown once: only its hash is stored
    api_key: str


class ActivationLatency(BaseModel):
    samples: int
    p50_ms: float | None
    p95_ms: float | None


class DirectoryStats(BaseModel):
    """The user hosts' figures, summed over the pool: users resident, activations and passivations."""

    live: int
    max_live: int
    activations: int
    passivations: int
    idle_passivations: int
    hosts: int = 0
    activation_latency: ActivationLatency
    #: recalls built ahead, after a change, by a host with no other call running
    prepared_recalls: int = 0


class ErrorBody(BaseModel):
    error: str
    detail: str
