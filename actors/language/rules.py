"""The machinery shared by the English and Chinese rule sets: what a rule finds, an ordered rule book, and
the helpers that turn a matched object phrase ("peanuts and shellfish since I was a kid") into slot values.

A rule is a builder registered with one or more patterns. The rule book tries rules in registration order
and the first builder that returns findings wins the clause; a builder returns ``None`` to decline a match
it does not trust ("I'm a big fan" is not an occupation), and the book moves on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from actors.language.lexicon import categories_of, normalize_value, preference_slot
from actors.language.pack import Phrasing
from schemas.enums import Kind, Polarity
from schemas.slots import SLOTS


@dataclass(slots=True)
class Finding:
    """What one rule read in one clause; the extractor turns it into a ``Candidate``."""

    slot: str | None
    kind: Kind
    value: str | None
    polarity: Polarity = Polarity.POSITIVE
    importance: float = 0.5
    confidence: float = 0.85
    #: (listed object, this item): the candidate's content is the clause with the list cut to this item
    swap: tuple[str, str] | None = None
    #: the wording itself states a change of the fact ("I moved to Suzhou", 我搬到苏州了)
    change: bool = False
    #: a weaker signal than a first-person declaration
    inferred: bool = False


Build = Callable[[re.Match[str], str], list[Finding] | None]

#: a fact only mentioned in passing ("my daughter loves dinosaurs") rather than declared
MENTION_IMPORTANCE = 0.6


def fact(
    slot: str,
    value: str,
    *,
    polarity: Polarity = Polarity.POSITIVE,
    confidence: float = 0.9,
    change: bool = False,
    inferred: bool = False,
    importance: float | None = None,
) -> Finding:
    """A finding for a named slot (``basic.*``, ``style.*``, ``state.*``, ``task.*``, ``relation.*``)."""
    declared = SLOTS[slot]
    if slot.startswith("state."):
        confidence = min(confidence, 0.7)
    return Finding(
        slot=slot,
        kind=declared.kind,
        value=value,
        polarity=polarity,
        importance=declared.importance if importance is None else importance,
        confidence=confidence,
        change=change,
        inferred=inferred,
    )


def liking(
    value: str,
    polarity: Polarity = Polarity.POSITIVE,
    *,
    confidence: float | None = None,
    inferred: bool = False,
    slot: str | None = None,
) -> Finding:
    """A taste: ``preference.<topic>`` by the value's topic; rejections weigh a little more."""
    negative = polarity is Polarity.NEGATIVE
    return Finding(
        slot=slot or preference_slot(value),
        kind=Kind.PREFERENCE,
        value=value,
        polarity=polarity,
        importance=0.7 if negative else 0.65,
        confidence=confidence if confidence is not None else (0.85 if negative else 0.8),
        inferred=inferred,
    )


def always(slot: str, value: str) -> Build:
    """A builder for rules whose match alone decides the value ("keep answers short" → short)."""

    def build(m: re.Match[str], clause: str) -> list[Finding]:
        return [fact(slot, value)]

    return build


_POLITE = re.compile(
    r"^(?:(?:please|pls|kindly|can you|could you|would you|以后|请你|请|麻烦你|麻烦|你)[\s,，]*)+", re.I
)
_INSTRUCTION_END = " \t.,;:!?。，；：！？~～" + "吧啊呀哦啦"


def instruction(clause: str) -> str:
    """A style instruction as the user gave it, minus courtesy: "Please keep answers to three sentences" →
    "keep answers to three sentences"; "请用表格回答我" → "用表格回答我". The ``style.*`` slot value."""
    text = _POLITE.sub("", clause.strip()).strip(_INSTRUCTION_END)
    return text.casefold() if text.isascii() else text


def instructed(slot: str) -> Build:
    """A builder for style rules: the slot's value is the instruction itself, not a bare noun."""

    def build(m: re.Match[str], clause: str) -> list[Finding] | None:
        value = instruction(clause)
        return [fact(slot, value)] if value else None

    return build


class RuleBook:
    def __init__(self, flags: int = 0):
        self._flags = flags
        self._rules: list[tuple[list[re.Pattern[str]], Build]] = []

    def rule(self, *patterns: str) -> Callable[[Build], Build]:
        compiled = [re.compile(p, self._flags) for p in patterns]

        def register(build: Build) -> Build:
            self._rules.append((compiled, build))
            return build

        return register

    def match(self, clause: str) -> list[Finding]:
        for patterns, build in self._rules:
            for pattern in patterns:
                m = pattern.search(clause)
                if m:
                    found = build(m, clause)
                    if found:
                        return found
        return []


# --- object phrases -------------------------------------------------------------------------------

_MARKER = re.compile(r"\[(?:REDACTED|FILTERED):")
_PRONOUN_OBJECTS = frozenset(
    """it that this them you him her me us how what when where why which those these everything anything
    something nothing one ones there here yours mine myself yourself ya u""".split()
)
#: words that say nothing on their own ("I'm keen on working" — working on what?)
_VAGUE_WORDS = frozenset(
    "working doing going being having getting making playing trying stuff things life people time way "
    "lot".split()
)
_PRONOUN_LEADS = re.compile(
    r"^(?:it|that|this|them|you|him|her|how|what|when|where|why|which|those|these|to think|to say|to know|"
    r"to see|to hear|the idea|the way|the fact|doing that|doing this|your|ur|talking to you|chatting)\b|"
    r"^(?:你|你们|这个|那个|它|他|她|这样|那样|这些|那些|什么|一切|东西|这|那)",
    re.IGNORECASE,
)
_BACK_REFERENCE = re.compile(r"^(?:their|its|his|her)\b", re.IGNORECASE)
MAX_ITEMS = 6


def object_phrase(raw: str, phrasing: Phrasing) -> str:
    """The object of a verb, cut where the clause moves on ("peanuts since I was a kid" → "peanuts")."""
    # the leading space lets a cut word open the phrase ("enjoy every day")
    m = phrasing.object_end.search(" " + raw)
    phrase = raw[: max(m.start() - 1, 0)] if m else raw
    return phrase.strip(" '\"-—.。")


def is_real_object(phrase: str) -> bool:
    """Not empty, not a pronoun ("I like it"), not a redaction marker, not a whole clause."""
    stripped = phrase.strip()
    if not stripped or _MARKER.search(stripped) or _PRONOUN_LEADS.match(stripped):
        return False
    words = stripped.split()
    if len(words) == 1 and words[0].casefold() in _VAGUE_WORDS:
        return False
    return words[0].casefold() not in _PRONOUN_OBJECTS and len(words) <= 8


def split_items(phrase: str, phrasing: Phrasing) -> list[str]:
    """A list object as its items: "peanuts, tree nuts and shellfish", "花生、虾和芒果"."""
    if phrasing.protected is not None and phrasing.protected.search(phrase):
        return [phrase]
    items = [i.strip(" '\"") for i in phrasing.item_split.split(phrase)]
    items = [i for i in items if i]
    if not 1 < len(items) <= MAX_ITEMS or any(_BACK_REFERENCE.match(i) for i in items[1:]):
        return [phrase]  # "veterans and their rights" is one topic, not two
    if phrasing.shares_head_noun:
        items = _share_head_noun(items)
    return items


def _share_head_noun(items: list[str]) -> list[str]:
    """ "action and sci-fi movies" → action movies, sci-fi movies: a bare modifier borrows the last head noun
    unless it names something on its own ("jazz and classical music" stays as it is)."""
    last = items[-1].split()
    if len(last) < 2:
        return items
    head = last[-1]
    return [
        f"{i} {head}" if " " not in i and not categories_of(normalize_value(i)) else i for i in items[:-1]
    ] + [items[-1]]


def listed(
    raw: str,
    phrasing: Phrasing,
    make: Callable[[str], Finding],
    *,
    accept: Callable[[str], bool] | None = None,
) -> list[Finding] | None:
    """One finding per item of the object that starts ``raw``; ``None`` if there is no real object.

    With several items each finding records which part of the clause to swap for its own item, so that
    "I'm allergic to peanuts and shellfish" stores two memories with distinct content, not one twice.
    """
    phrase = object_phrase(raw, phrasing)
    if not is_real_object(phrase):
        return None
    pairs = [(item, normalize_value(item)) for item in split_items(phrase, phrasing) if is_real_object(item)]
    pairs = [(item, value) for item, value in pairs if value and (accept is None or accept(value))]
    findings = []
    for item, value in pairs:
        finding = make(value)
        if len(pairs) > 1:
            finding.swap = (phrase, item)
        findings.append(finding)
    return findings or None
