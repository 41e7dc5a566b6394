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


#: Every profile slot name. The API validates slot names against it; ``actors.core.slots.SLOTS`` gives each
#: slot its meaning and must name exactly these (it checks on import): schemas import nothing from actors.
SLOT_NAMES = frozenset(
    {
        "basic.name",
        "basic.residence",
        "basic.hometown",
        "basic.age",
        "basic.birthday",
        "basic.gender",
        "basic.occupation",
        "basic.employer",
        "basic.education",
        "basic.allergy",
        "basic.health",
        "basic.diet_restriction",
        "basic.family",
        "basic.pet",
        "basic.language",
        "relation.social",
        "preference.food",
        "preference.drink",
        "preference.content",
        "preference.hobby",
        "preference.music",
        "preference.sport",
        "preference.travel",
        "preference.schedule",
        "preference.shopping",
        "preference.style",
        "preference.general",
        "style.reply_length",
        "style.tone",
        "style.language",
        "style.format",
        "style.taboo",
        "state.mood",
        "state.focus",
        "state.situation",
        "task.goal",
        "task.plan",
        "task.lesson",
    }
)
