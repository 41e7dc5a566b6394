"""Export and import: a user's (or a whole tenant's) memory as JSON Lines, one record per line
(docs/export.md).

A file is a ``header`` line, then for each user its ``tombstone``, ``memory``, ``event`` and ``alert``
records, then an ``end`` line counting the records. On import every line is validated as strictly as a
request (safe id alphabets, bounded strings, known slots and enum values); ``header`` and ``end`` lines are
checked for the format and otherwise ignored, so a file may be sent in several parts.
"""

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from schemas.api import MAX_REASON_CHARS, MAX_TURN_CHARS, SlotName, UtcDatetime
from schemas.enums import AlertKind, AlertStatus, Kind, Layer, Polarity, Source, State
from schemas.ids import AlertId, DialogId, MemoryId, SessionId, TenantId, UserId

FORMAT: Final = "hermes-memory/export"
FORMAT_VERSION: Final = 1
MEDIA_TYPE = "application/x-ndjson"
#: the longest line an import reads (a memory with a long source turn and many links fits easily)
MAX_LINE_BYTES = 256 * 1024
MAX_IDS = 1000
MAX_MESSAGE_CHARS = 4000
MAX_CONTENT_CHARS = 32_000

IdList = Annotated[list[MemoryId], Field(max_length=MAX_IDS)]
Text = Annotated[str, Field(max_length=MAX_TURN_CHARS)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", from_attributes=True)

    user_id: UserId


class HeaderLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["header"] = "header"
    format: Literal["hermes-memory/export"] = FORMAT
    version: Literal[1] = FORMAT_VERSION
    tenant_id: TenantId
    #: None: the whole tenant
    user_id: UserId | None
    exported_at: UtcDatetime


class EndLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["end"] = "end"
    #: records between the header and this line: a shorter file was cut off
    records: int = Field(ge=0)


class TombstoneLine(_Record):
    """Something was forgotten: when and why, never what. ``memory_id`` None: the whole user was erased."""

    type: Literal["tombstone"] = "tombstone"
    memory_id: MemoryId | None
    at: UtcDatetime
    reason: Text


class MemoryLine(_Record):
    """A memory with its state, layer, provenance and links (every field of the stored item but its tenant,
    its row version and its embedding, which the importing service computes again)."""

    type: Literal["memory"] = "memory"
    memory_id: MemoryId
    #: longer than a turn: a merged summary joins several items
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    kind: Kind
    layer: Layer
    state: State
    polarity: Polarity
    slot: SlotName | None
    value: Text | None
    #: the value in the user's own words (``MemoryItem.display``, derived from ``content``): what a person
    #: reading the export is shown; an import ignores it and derives it again
    display: Text | None = None
    importance: float = Field(ge=0, le=1)
    confidence: float = Field(ge=0, le=1)
    decay_score: float = Field(ge=0)
    write_score: float = Field(ge=0, le=1)
    access_count: int = Field(ge=0)
    source: Source
    source_session_id: SessionId | None
    source_dialog_ids: Annotated[list[DialogId], Field(max_length=MAX_IDS)]
    confirmed_sessions: Annotated[list[SessionId], Field(max_length=MAX_IDS)]
    contradiction_count: int = Field(ge=0)
    positive_engagements: int = Field(ge=0)
    forced: bool
    created_at: UtcDatetime
    updated_at: UtcDatetime
    last_accessed_at: UtcDatetime
    frozen_at: UtcDatetime | None
    archived_at: UtcDatetime | None
    supersedes: IdList
    superseded_by: MemoryId | None
    conflicts_with: IdList
    complements: IdList
    merged_from: IdList
    source_text: Text | None
    #: the turns said just before it in its session, the other speaker's included: what it answered, never
    #: the user's words (``MemoryItem.context``; absent from exports made before it existed)
    context: Text | None = None


class EventLine(_Record):
    """One audit event (a change to a memory, or to the user when ``memory_id`` is None)."""

    type: Literal["event"] = "event"
    memory_id: MemoryId | None
    action: str = Field(min_length=1, max_length=64)
    actor: str = Field(max_length=200)
    reason: Annotated[str, Field(max_length=MAX_REASON_CHARS * 4)]
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source_dialog_id: DialogId | None
    at: UtcDatetime


class AlertLine(_Record):
    type: Literal["alert"] = "alert"
    alert_id: AlertId
    kind: AlertKind
    memory_id: MemoryId | None
    message: str = Field(max_length=MAX_MESSAGE_CHARS)
    related_ids: IdList
    status: AlertStatus
    created_at: UtcDatetime


UserRecord = Annotated[TombstoneLine | MemoryLine | EventLine | AlertLine, Field(discriminator="type")]
Line = Annotated[
    HeaderLine | TombstoneLine | MemoryLine | EventLine | AlertLine | EndLine, Field(discriminator="type")
]
LINE = TypeAdapter(Line)
USER_RECORDS = TypeAdapter(list[UserRecord])


class ImportRequest(BaseModel):
    """One user's records, as the importing host receives them (all of them that user's)."""

    model_config = ConfigDict(extra="forbid")

    records: list[UserRecord] = Field(max_length=10_000)


class ImportResult(BaseModel):
    user_id: str
    memories_added: int = 0
    #: already there (same id): an import run twice adds nothing the second time
    memories_present: int = 0
    #: forgotten here (a tombstone with its id): erasure is never undone by an import
    memories_forgotten: int = 0
    #: refused because their text reads as an instruction to a future prompt (docs/trust.md#3-hostile-input)
    memories_refused: int = 0
    events_added: int = 0
    alerts_added: int = 0
    tombstones_added: int = 0

    def add(self, other: "ImportResult") -> None:
        for name in type(self).model_fields:
            if name != "user_id":
                setattr(self, name, getattr(self, name) + getattr(other, name))


class ImportSummary(BaseModel):
    """What an import request did, per user, and the lines it read."""

    lines: int
    users: list[ImportResult]


def exported_line(record: BaseModel) -> bytes:
    return record.model_dump_json().encode() + b"\n"
