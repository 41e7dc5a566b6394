"""The vocabulary of the memory model (docs/design.md#the-memory-model): layers, states, kinds, polarity,
sources, alerts."""

from enum import StrEnum


class Layer(StrEnum):
    WORKING = "working"
    LONGTERM = "longterm"
    CORE = "core"
    ARCHIVE = "archive"


class State(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    FROZEN = "frozen"
    UNFROZEN = "unfrozen"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    ARCHIVED = "archived"
    DELETED = "deleted"


#: States whose items count against a tier's capacity and take part in recall.
ACTIVE_STATES = frozenset({State.PENDING, State.CONFIRMED, State.FROZEN, State.UNFROZEN})
#: States kept only as history: never recalled as current, never counted against capacity.
HISTORY_STATES = frozenset({State.SUPERSEDED, State.EXPIRED})


class Kind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    RELATION = "relation"
    EVENT = "event"
    STATE = "state"
    LESSON = "lesson"


class Polarity(StrEnum):
    POSITIVE = "positive"
    NEGATIVE = "negative"


class Source(StrEnum):
    USER_DECLARED = "user_declared"
    USER_REPEATED = "user_repeated"
    INFERRED = "inferred"
    SYSTEM = "system"


class AlertKind(StrEnum):
    FROZEN_CONFLICT = "frozen_conflict"  # a candidate contradicts a frozen item
    CORE_FULL = "core_full"  # an item qualifies for freezing but core is at capacity
    CONTRADICTION_REVIEW = "contradiction_review"  # contradictions passed the review threshold
    REPEATED_CORRECTION = "repeated_correction"  # one fact corrected again and again: which value holds?
    VITAL_RETRACTION = "vital_retraction"  # an allergy, health or diet fact denied or changed: kept pending


class AlertStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"
