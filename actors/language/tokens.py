"""The tokenizer (docs/design.md#language-packs): the one place text becomes words, for search and for the
write score. Each language pack reads the words of its own script; this module joins them.

* ``tokenize`` — the search terms of a text (the keyword route's BM25, its documents and its queries):
  every pack's terms of the casefolded text, in the registry's order, stop words dropped.
* ``content_units`` — the words that carry meaning, for the write score's density, the gate's
  restatement test and extraction's "is there anything here": each pack's units that are not
  uninformative, numbers always; ``word_count`` weighs them (two Chinese characters make one word);
  ``same_words`` says whether two texts share most of them.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

from actors.language.packs import PACKS
from actors.language.text import is_han

_NUMBER = r"\d+(?:[.,:/-]\d+)*"
_MARKER = re.compile(r"\[(?:REDACTED|FILTERED):[a-z_]+\]")
_WORDS = tuple(pack.words for pack in PACKS.values())
#: one alternative per pack and one for numbers; they start on disjoint characters, so order is moot
_UNIT = re.compile("|".join([*(f"(?P<w{n}>{w.unit})" for n, w in enumerate(_WORDS)), f"(?P<num>{_NUMBER})"]))


@lru_cache(maxsize=65536)
def tokenize(text: str) -> tuple[str, ...]:
    """Cached, and a tuple of interned words: recall tokenizes every candidate memory on every query, and a
    resident user's keyword index keeps the very tuple the cache holds (not a copy), whose words are the
    process's one copy of each (not one per text that says it)."""
    lowered = text.casefold().replace("’", "'")
    found: list[str] = []
    for words in _WORDS:
        found.extend(words.terms(lowered))
    return tuple(map(sys.intern, found))


def load_segmenter() -> None:
    """Load the Chinese segmenter's dictionary and tagger now, not on their first use (~0.75 s and ~0.45 s
    here): a host calls this as it starts, so that its first user does not wait for them."""
    from actors.language.zh.tokens import posseg

    tokenize("我住在成都")
    list(posseg().cut("我同事老张在腾讯工作"))


def content_units(text: str) -> list[str]:
    """Words that carry meaning: each language's units outside its uninformative words, and numbers."""
    text = _MARKER.sub(" ", text)
    units = []
    for m in _UNIT.finditer(text):
        token = m.group()
        if m.lastgroup == "num":
            units.append(token.casefold())
            continue
        group = m.lastgroup
        assert group is not None  # every alternative of _UNIT is a named group
        words = _WORDS[int(group[1:])]
        unit = token.casefold() if words.casefold else token
        if unit not in words.uninformative and len(unit) >= words.min_unit_chars:
            units.append(unit)
    return units


def word_count(units: list[str]) -> float:
    """How many words the units make: two Chinese characters count as one word."""
    han = sum(1 for u in units if is_han(u))
    return (len(units) - han) + han / 2


#: share of content words two texts must share to say the same thing: an embedding alone calls "I really
#: appreciate your help" and "I feel the same way!" near-duplicates (E5 cosine ~0.9)
SAME_WORDS_SHARE = 0.5


def same_words(first: str, second: str) -> bool:
    """Whether two texts say it in mostly the same content words (the gate's restatement test for unvalued
    statements, recall's near-duplicate test)."""
    return share_most(set(content_units(first)), set(content_units(second)))


def share_most(first: set[str], second: set[str]) -> bool:
    """``same_words`` over two texts' content units, read once by a caller that compares a text many times."""
    return bool(first and second) and len(first & second) / len(first | second) >= SAME_WORDS_SHARE
