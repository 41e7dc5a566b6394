"""The slot rules of the domain: how two values of a slot compare, which slots are temporary, style or vital.
The slots themselves (name, cardinality, core, vital, kind, label, importance) are declared once, in
``schemas.slots``, which every layer reads.
"""

from actors.language.lexicon import taste_core
from schemas.enums import Polarity
from schemas.slots import SLOTS, SlotSpec


def spec(slot: str | None) -> SlotSpec | None:
    return SLOTS.get(slot) if slot else None


def is_style(slot: str | None) -> bool:
    """A ``style.*`` slot: its value is a canonical key (short, no emoji), shown in the user's words."""
    return slot is not None and slot.startswith("style.")


def is_temporary(slot: str | None) -> bool:
    return slot is not None and slot.startswith("state.")


def is_vital(slot: str | None) -> bool:
    """A slot a query about it must never miss (an allergy, a diet restriction, a health condition)."""
    declared = spec(slot)
    return declared is not None and declared.vital


def is_withdrawal(slot: str | None, polarity: Polarity) -> bool:
    """A negative statement about the user's own facts ("shellfish is fine for me now", "I'm no longer a
    nurse") withdraws a fact; it is no caution. Only a rejection ("stop recommending horror films", "I hate
    cilantro") is a negative memory that weighs more in recall, and a withdrawal never freezes."""
    return polarity is Polarity.NEGATIVE and slot is not None and slot.startswith("basic.")


#: slots whose values name a member as ``role`` or ``role:name`` ("sister:anna", "dog:max")
MEMBER_SLOTS = frozenset({"basic.family", "basic.pet", "relation.social"})
#: slots whose values are a phrase around a head noun: a "high school teacher" is a "teacher"
HEADED_SLOTS = frozenset({"basic.occupation"})
#: slots whose values name a thing the user reacts to or lives with: a value holding the other's words
#: whole names the same thing ("kiwi fruit" and "kiwi", "花生酱" and "花生", "type 2 diabetes" and "diabetes")
CONTAINING_SLOTS = frozenset({"basic.allergy", "basic.diet_restriction", "basic.health"})


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
    if value and other and slot in CONTAINING_SLOTS:
        return _contains(value, other) or _contains(other, value)
    if not value or not other or not (slot or "").startswith("preference."):
        return False
    return taste_core(value) == taste_core(other)


def _contains(value: str, part: str) -> bool:
    """``part`` is in ``value`` as whole words (a spaced value) or as a run of characters (an unspaced one,
    Chinese)."""
    if " " in value or part.isascii() and value.isascii():
        return f" {part} " in f" {value} "
    return part in value
