"""The sentence markers of a set of language packs, joined (docs/design.md#language-packs): a turn may mix
languages ("actually 我搬到苏州了"), so every configured pack's markers are read in every sentence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from actors.language.pack import LanguagePack


@dataclass(frozen=True, slots=True)
class Reading:
    forced: tuple[re.Pattern[str], ...]
    discourse: tuple[re.Pattern[str], ...]
    correction_prefix: re.Pattern[str]
    correction_anywhere: re.Pattern[str]
    hedge: re.Pattern[str]
    hedge_prefix: re.Pattern[str]
    small_talk: re.Pattern[str]
    first_person: re.Pattern[str]
    request: re.Pattern[str]
    wish: re.Pattern[str]
    past: re.Pattern[str]
    secret_labels: frozenset[str]
    emphasis: re.Pattern[str]
    task: re.Pattern[str]
    past_question: re.Pattern[str]
    slot_hints: tuple[tuple[re.Pattern[str], str], ...]
    slot_cues: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


@lru_cache(maxsize=16)
def reading(packs: tuple[LanguagePack, ...]) -> Reading:
    """The packs' markers: one case-insensitive alternation per marker, in the packs' order."""

    def joined(name: str) -> re.Pattern[str]:
        return re.compile("|".join(getattr(p.markers, name) for p in packs), re.IGNORECASE)

    hints: dict[str, list[str]] = {}
    for pack in packs:
        for slot, source in pack.markers.slot_hints:
            hints.setdefault(slot, []).append(source)

    return Reading(
        forced=tuple(p.markers.forced for p in packs),
        discourse=tuple(p.markers.discourse for p in packs),
        correction_prefix=joined("correction_prefix"),
        correction_anywhere=joined("correction_anywhere"),
        hedge=joined("hedge"),
        hedge_prefix=joined("hedge_prefix"),
        small_talk=joined("small_talk"),
        first_person=joined("first_person"),
        request=joined("request"),
        wish=joined("wish"),
        past=joined("past"),
        secret_labels=frozenset().union(*(p.markers.secret_labels for p in packs)),
        emphasis=joined("emphasis"),
        task=joined("task"),
        past_question=joined("past_question"),
        slot_cues=tuple(row for p in packs for row in p.markers.slot_cues),
        slot_hints=tuple((re.compile("|".join(hints[slot]), re.IGNORECASE), slot) for slot in hints),
    )
