"""The USER profile slot taxonomy (docs/design.md#the-profile): ``basic.*`` declared attributes (high freeze),
``preference.*`` observed tastes, ``style.*`` interaction style, ``state.*`` temporary (working memory only,
never frozen).

Cardinality decides conflicts: a new value for a single-valued slot contradicts the old one; values of a
multi-valued slot coexist (peanut allergy + tree-nut allergy), unless they are the same value with opposite
polarity ("I like cilantro" vs "I hate cilantro").
"""

from dataclasses import dataclass

from actors.language.lexicon import taste_core
from schemas.enums import SLOT_NAMES, Kind, Polarity


@dataclass(frozen=True, slots=True)
class SlotSpec:
    name: str
    single_valued: bool
    #: a core attribute: a user-declared, confirmed value freezes into core
    core: bool
    kind: Kind
    label: str  # short template label: "residence: Suzhou"


def _slot(name: str, single: bool, core: bool, kind: Kind, label: str) -> SlotSpec:
    return SlotSpec(name=name, single_valued=single, core=core, kind=kind, label=label)


SLOTS: dict[str, SlotSpec] = {
    s.name: s
    for s in (
        _slot("basic.name", True, True, Kind.FACT, "name"),
        _slot("basic.residence", True, True, Kind.FACT, "residence"),
        _slot("basic.hometown", True, True, Kind.FACT, "hometown"),
        _slot("basic.age", True, True, Kind.FACT, "age"),
        _slot("basic.birthday", True, True, Kind.FACT, "birthday"),
        _slot("basic.gender", True, True, Kind.FACT, "gender"),
        _slot("basic.occupation", True, True, Kind.FACT, "occupation"),
        _slot("basic.employer", True, True, Kind.FACT, "employer"),
        _slot("basic.education", False, True, Kind.FACT, "education"),
        _slot("basic.allergy", False, True, Kind.FACT, "allergy"),
        _slot("basic.health", False, True, Kind.FACT, "health"),
        _slot("basic.diet_restriction", False, True, Kind.FACT, "diet restriction"),
        _slot("basic.family", False, True, Kind.RELATION, "family"),
        _slot("basic.pet", False, True, Kind.FACT, "pet"),
        _slot("basic.language", False, True, Kind.FACT, "language"),
        _slot("relation.social", False, False, Kind.RELATION, "knows"),
        _slot("preference.food", False, False, Kind.PREFERENCE, "food"),
        _slot("preference.drink", False, False, Kind.PREFERENCE, "drink"),
        _slot("preference.content", False, False, Kind.PREFERENCE, "content"),
        _slot("preference.hobby", False, False, Kind.PREFERENCE, "hobby"),
        _slot("preference.music", False, False, Kind.PREFERENCE, "music"),
        _slot("preference.sport", False, False, Kind.PREFERENCE, "sport"),
        _slot("preference.travel", False, False, Kind.PREFERENCE, "travel"),
        _slot("preference.schedule", False, False, Kind.PREFERENCE, "schedule"),
        _slot("preference.shopping", False, False, Kind.PREFERENCE, "shopping"),
        _slot("preference.style", False, False, Kind.PREFERENCE, "style"),
        _slot("preference.general", False, False, Kind.PREFERENCE, "likes"),
        _slot("style.reply_length", True, False, Kind.PREFERENCE, "reply length"),
        _slot("style.tone", True, False, Kind.PREFERENCE, "tone"),
        _slot("style.language", True, False, Kind.PREFERENCE, "reply language"),
        _slot("style.format", False, False, Kind.PREFERENCE, "reply format"),
        _slot("style.taboo", False, False, Kind.PREFERENCE, "avoid topics"),
        _slot("state.mood", True, False, Kind.STATE, "mood"),
        _slot("state.focus", True, False, Kind.STATE, "current focus"),
        _slot("state.situation", True, False, Kind.STATE, "situation"),
        _slot("task.goal", False, False, Kind.EVENT, "goal"),
        _slot("task.plan", False, False, Kind.EVENT, "plan"),
        _slot("task.lesson", False, False, Kind.LESSON, "lesson"),
    )
}

# The API accepts exactly the slot names of schemas.enums.SLOT_NAMES: the taxonomy must name the same slots.
if set(SLOTS) != SLOT_NAMES:
    raise RuntimeError(f"SLOTS and schemas.enums.SLOT_NAMES differ: {sorted(set(SLOTS) ^ SLOT_NAMES)}")


def spec(slot: str | None) -> SlotSpec | None:
    return SLOTS.get(slot) if slot else None


def is_style(slot: str | None) -> bool:
    """A ``style.*`` slot: its value is the user's instruction, shown as they gave it."""
    return slot is not None and slot.startswith("style.")


def is_temporary(slot: str | None) -> bool:
    return slot is not None and slot.startswith("state.")


#: the slots where a wrong change costs health: a denial or a new value never takes effect on one utterance
VITAL_SLOTS = frozenset({"basic.allergy", "basic.diet_restriction", "basic.health"})


def is_vital(slot: str | None) -> bool:
    return slot in VITAL_SLOTS


def is_withdrawal(slot: str | None, polarity: Polarity) -> bool:
    """A negative statement about the user's own facts ("shellfish is fine for me now", "I'm no longer a
    nurse") withdraws a fact; it is no caution. Only a rejection ("stop recommending horror films", "I hate
    cilantro") is a negative memory that weighs more in recall, and a withdrawal never freezes."""
    return polarity is Polarity.NEGATIVE and slot is not None and slot.startswith("basic.")


#: slots whose values name a member as ``role`` or ``role:name`` ("sister:anna", "dog:max")
MEMBER_SLOTS = frozenset({"basic.family", "basic.pet", "relation.social"})
#: slots whose values are a phrase around a head noun: a "high school teacher" is a "teacher"
HEADED_SLOTS = frozenset({"basic.occupation"})


def refines(slot: str | None, value: str | None, other: str | None) -> bool:
    """Whether ``value`` says what ``other`` says, more precisely: "dog:max" names the dog "dog" leaves
    unnamed, "high school teacher" is the teacher "teacher" says."""
    if not value or not other or value == other:
        return False
    if slot in MEMBER_SLOTS:
        return ":" not in other and value.startswith(f"{other}:")
    if slot in HEADED_SLOTS:
        return value.endswith(f" {other}")
    return False


def same_value(slot: str | None, value: str | None, other: str | None) -> bool:
    """Whether two values of a slot name the same thing: equal, one saying the other more precisely, or one
    taste named with and without its kind ("sci-fi" and "sci-fi movie")."""
    if value == other or refines(slot, value, other) or refines(slot, other, value):
        return True
    if not value or not other or not (slot or "").startswith("preference."):
        return False
    return taste_core(value) == taste_core(other)
