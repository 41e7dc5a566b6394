"""The USER profile's slots, declared once (docs/design.md#the-profile): ``basic.*`` declared attributes
(high freeze), ``preference.*`` observed tastes, ``style.*`` interaction style, ``state.*`` temporary
(working memory only, never frozen), ``task.*`` goals, plans and lessons, ``relation.*`` people the user
knows.

Each slot says here, and nowhere else:

* its **cardinality**: a new value for a single-valued slot contradicts the old one; values of a multi-valued
  slot coexist (peanut allergy + tree-nut allergy), unless they are the same value with opposite polarity
  ("I like cilantro" vs "I hate cilantro");
* whether it is a **core** attribute: a user-declared, confirmed value freezes into core;
* whether it is **vital**: a query about it must never miss it (recall's slot route lifts it to a floor);
* the **kind** of memory a value of it is, its short **label** ("residence: Suzhou") and the **importance**
  of a value the user declares (extraction's rules; an allergy outranks an employer).

The API validates slot names against ``SLOT_NAMES``; the domain's slot rules (``actors.core.slots``), the
rule books (``actors.language.rules``) and recall read the rest from ``SLOTS``. It lives in ``schemas`` so
that every layer can read it and it imports nothing from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.enums import Kind


@dataclass(frozen=True, slots=True)
class SlotSpec:
    name: str
    single_valued: bool
    #: a core attribute: a user-declared, confirmed value freezes into core
    core: bool
    kind: Kind
    label: str
    #: a query about this slot must never miss it
    vital: bool
    #: the importance of a value the user declares for this slot
    importance: float


SINGLE, MULTI = True, False  # cardinality

#: every slot, in the order the profile and the context list them
SLOTS: dict[str, SlotSpec] = {
    s.name: s
    for s in (
        # name, cardinality, core, kind, label, vital, importance
        SlotSpec("basic.name",             SINGLE, True,  Kind.FACT,       "name",             False, 0.9),
        SlotSpec("basic.residence",        SINGLE, True,  Kind.FACT,       "residence",        False, 0.85),
        SlotSpec("basic.hometown",         SINGLE, True,  Kind.FACT,       "hometown",         False, 0.75),
        SlotSpec("basic.age",              SINGLE, True,  Kind.FACT,       "age",              False, 0.75),
        SlotSpec("basic.birthday",         SINGLE, True,  Kind.FACT,       "birthday",         False, 0.75),
        SlotSpec("basic.gender",           SINGLE, True,  Kind.FACT,       "gender",           False, 0.6),
        SlotSpec("basic.occupation",       SINGLE, True,  Kind.FACT,       "occupation",       False, 0.8),
        SlotSpec("basic.employer",         SINGLE, True,  Kind.FACT,       "employer",         False, 0.75),
        SlotSpec("basic.education",        MULTI,  True,  Kind.FACT,       "education",        False, 0.7),
        SlotSpec("basic.allergy",          MULTI,  True,  Kind.FACT,       "allergy",          True,  0.95),
        SlotSpec("basic.health",           MULTI,  True,  Kind.FACT,       "health",           True,  0.9),
        SlotSpec("basic.diet_restriction", MULTI,  True,  Kind.FACT,       "diet restriction", True,  0.85),
        SlotSpec("basic.family",           MULTI,  True,  Kind.RELATION,   "family",           False, 0.8),
        SlotSpec("basic.pet",              MULTI,  True,  Kind.FACT,       "pet",              False, 0.75),
        SlotSpec("basic.language",         MULTI,  True,  Kind.FACT,       "language",         False, 0.7),
        SlotSpec("relation.social",        MULTI,  False, Kind.RELATION,   "knows",            False, 0.6),
        SlotSpec("preference.food",        MULTI,  False, Kind.PREFERENCE, "food",             False, 0.6),
        SlotSpec("preference.drink",       MULTI,  False, Kind.PREFERENCE, "drink",            False, 0.6),
        SlotSpec("preference.content",     MULTI,  False, Kind.PREFERENCE, "content",          False, 0.6),
        SlotSpec("preference.hobby",       MULTI,  False, Kind.PREFERENCE, "hobby",            False, 0.6),
        SlotSpec("preference.music",       MULTI,  False, Kind.PREFERENCE, "music",            False, 0.6),
        SlotSpec("preference.sport",       MULTI,  False, Kind.PREFERENCE, "sport",            False, 0.6),
        SlotSpec("preference.travel",      MULTI,  False, Kind.PREFERENCE, "travel",           False, 0.6),
        SlotSpec("preference.schedule",    MULTI,  False, Kind.PREFERENCE, "schedule",         False, 0.6),
        SlotSpec("preference.shopping",    MULTI,  False, Kind.PREFERENCE, "shopping",         False, 0.6),
        SlotSpec("preference.style",       MULTI,  False, Kind.PREFERENCE, "style",            False, 0.6),
        SlotSpec("preference.general",     MULTI,  False, Kind.PREFERENCE, "likes",            False, 0.6),
        SlotSpec("style.reply_length",     SINGLE, False, Kind.PREFERENCE, "reply length",     False, 0.7),
        SlotSpec("style.tone",             SINGLE, False, Kind.PREFERENCE, "tone",             False, 0.7),
        SlotSpec("style.language",         SINGLE, False, Kind.PREFERENCE, "reply language",   False, 0.7),
        SlotSpec("style.format",           MULTI,  False, Kind.PREFERENCE, "reply format",     False, 0.7),
        SlotSpec("style.taboo",            MULTI,  False, Kind.PREFERENCE, "avoid topics",     False, 0.75),
        SlotSpec("state.mood",             SINGLE, False, Kind.STATE,      "mood",             False, 0.2),
        SlotSpec("state.focus",            SINGLE, False, Kind.STATE,      "current focus",    False, 0.2),
        SlotSpec("state.situation",        SINGLE, False, Kind.STATE,      "situation",        False, 0.2),
        SlotSpec("task.goal",              MULTI,  False, Kind.EVENT,      "goal",             False, 0.6),
        SlotSpec("task.plan",              MULTI,  False, Kind.EVENT,      "plan",             False, 0.55),
        SlotSpec("task.lesson",            MULTI,  False, Kind.LESSON,     "lesson",           False, 0.6),
    )
}
SLOT_NAMES = frozenset(SLOTS)
