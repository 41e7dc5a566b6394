"""Domain records of the memory core: a memory item, an extraction candidate, audit events and alerts.

These are plain dataclasses that the gate engine mutates; the SQL store maps them to tables and back
(``actors.store.sql.memories``), the API maps them to pydantic models (``schemas.api``).
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from schemas.enums import (
    ACTIVE_STATES,
    AlertKind,
    AlertStatus,
    Kind,
    Layer,
    Polarity,
    Source,
    State,
)
from schemas.ids import new_memory_id


def utcnow() -> datetime:
    return datetime.now(UTC)


def normalize_text(text: str) -> str:
    """NFKC, case-folded, whitespace-collapsed, trailing punctuation dropped: the form hashed for dedup."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    collapsed = " ".join(folded.split())
    return collapsed.rstrip(" .!?。！？~～")


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()


@dataclass(slots=True)
class Candidate:
    """What extraction (or a structured write) proposes to remember. Never stored as-is: the gate decides."""

    content: str
    kind: Kind
    session_id: str
    dialog_ids: list[str]
    polarity: Polarity = Polarity.POSITIVE
    slot: str | None = None
    #: the normalized slot value ("hangzhou", "peanut"); how conflicts and restatements are recognised
    value: str | None = None
    importance: float = 0.5
    confidence: float = 0.7
    source: Source = Source.USER_DECLARED
    #: an explicit correction ("actually I moved to Suzhou"): may supersede, and unfreeze, at once
    is_correction: bool = False
    #: an explicit "remember this": bypasses the write threshold
    forced: bool = False
    observed_at: datetime = field(default_factory=utcnow)
    #: write score (information density, timeliness, emotion, repetition, task relevance), 0..1
    write_score: float = 0.5
    #: the whole turn the content was extracted from (redacted), when the content is only part of it
    source_text: str | None = None
    #: the turns said just before the candidate's own in its session (``actors.core.said_before``)
    context: str | None = None
    #: the candidate as the rules made it — a slot-less memory in its own words — when its slot and value are
    #: the semantic reader's reading of it; a reading that restates an item confirms that item and leaves
    #: this memory to stand on its own (``GateEngine._admit``)
    as_ruled: Candidate | None = None


#: a memory item's id sequences: tuples, changed by assignment (``GateEngine`` never mutates one in place)
ID_TUPLES = (
    "source_dialog_ids",
    "confirmed_sessions",
    "supersedes",
    "conflicts_with",
    "complements",
    "merged_from",
)


@dataclass(slots=True)
class MemoryItem:
    tenant_id: str
    user_id: str
    content: str
    kind: Kind
    memory_id: str = field(default_factory=new_memory_id)
    layer: Layer = Layer.WORKING
    state: State = State.PENDING
    polarity: Polarity = Polarity.POSITIVE
    slot: str | None = None
    value: str | None = None
    content_hash: str = ""
    importance: float = 0.5
    confidence: float = 0.7
    decay_score: float = 0.5
    write_score: float = 0.5
    access_count: int = 0
    source: Source = Source.USER_DECLARED
    source_session_id: str | None = None
    source_dialog_ids: tuple[str, ...] = ()
    #: distinct sessions in which the user stated this item (the first one included)
    confirmed_sessions: tuple[str, ...] = ()
    contradiction_count: int = 0
    positive_engagements: int = 0
    forced: bool = False
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    last_accessed_at: datetime = field(default_factory=utcnow)
    frozen_at: datetime | None = None
    archived_at: datetime | None = None
    version: int = 1
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    conflicts_with: tuple[str, ...] = ()
    complements: tuple[str, ...] = ()
    merged_from: tuple[str, ...] = ()
    #: the content's embedding (float32 bytes): SQL keeps it so the vector index can be rebuilt without
    #: re-embedding, and the user's actor can find near-duplicates without a round trip
    embedding: bytes | None = field(default=None, repr=False)
    #: the whole turn the content was cut from (redacted): the keyword route matches a question against the
    #: turn's words as well as the extracted clause's (docs/locomo.md)
    source_text: str | None = None
    #: the turns said just before the one it came from in its session, the other speaker's included (cleaned
    #: as the content is): what the memory answered. Recall matches it; it is never shown as the user's words
    #: nor rendered into a prompt (``actors.core.said_before``)
    context: str | None = None

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = content_hash(self.content)
        # lists (from JSON, or a caller's) become tuples: an empty tuple is shared and a short one is smaller
        # than a list, and a resident user holds ~2,000 items of six such fields each
        for name in ID_TUPLES:
            value = getattr(self, name)
            if type(value) is not tuple:
                setattr(self, name, tuple(value))

    @property
    def display(self) -> str | None:
        """The slot value in the user's own words (爬山 for a user who wrote 爬山, where ``value`` is the
        canonical "hiking"): what a person or a model is shown; None for an item without a value."""
        from actors.core.context import shown_value  # the context renders values; it imports this module

        return shown_value(self.slot, self.value, self.content) if self.value else None

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_STATES and self.layer is not Layer.ARCHIVE

    @property
    def is_frozen(self) -> bool:
        return self.state is State.FROZEN

    def copy(self) -> MemoryItem:
        return replace(self)

    def snapshot(self) -> dict[str, Any]:
        """The fields an audit event records as before/after."""
        return {
            "layer": self.layer.value,
            "state": self.state.value,
            "content": self.content,
            "slot": self.slot,
            "value": self.value,
            "polarity": self.polarity.value,
            "importance": round(self.importance, 4),
            "confidence": round(self.confidence, 4),
            "source_dialog_ids": list(self.source_dialog_ids),
        }


@dataclass(slots=True)
class AuditEvent:
    tenant_id: str
    user_id: str
    memory_id: str | None
    action: str  # "create", "confirm", "freeze", "unfreeze", "supersede", "archive", "forget", ...
    actor: str  # who: "user", "system", "operator:<key id>", "job:consolidate"
    reason: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source_dialog_id: str | None = None
    at: datetime = field(default_factory=utcnow)


@dataclass(slots=True)
class Alert:
    tenant_id: str
    user_id: str
    kind: AlertKind
    memory_id: str | None
    message: str
    related_ids: list[str] = field(default_factory=list)
    status: AlertStatus = AlertStatus.OPEN
    alert_id: str = field(default_factory=lambda: new_memory_id().replace("m_", "a_"))
    created_at: datetime = field(default_factory=utcnow)


@dataclass(slots=True)
class GateChanges:
    """Everything one gate operation changed: what the store must commit in one transaction."""

    upserted: dict[str, MemoryItem] = field(default_factory=dict)
    events: list[AuditEvent] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)

    def merge(self, other: GateChanges) -> None:
        self.upserted.update(other.upserted)
        self.events.extend(other.events)
        self.alerts.extend(other.alerts)

    def __bool__(self) -> bool:
        return bool(self.upserted or self.events or self.alerts)
