"""English words for search: lower-case Latin words and numbers, stop words dropped, lightly stemmed."""

from __future__ import annotations

import re
from functools import lru_cache

from actors.language.en.stopwords import STOP_WORDS

_LATIN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
#: one English word as the write score counts it (before casefolding)
UNIT = r"[A-Za-z][A-Za-z'-]*"

_SUFFIXES = (
    ("ies", "y"),
    ("ied", "y"),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("ly", ""),
    ("s", ""),
    ("e", ""),
)
_DOUBLED = re.compile(r"([bdgmnprt])\1$")


def words(lowered: str) -> list[str]:
    """The Latin words and numbers of a casefolded text, as written."""
    return _LATIN.findall(lowered)


@lru_cache(maxsize=32768)
def stem(word: str) -> str:
    """A light English stemmer, so "painted", "painting" and "paints" meet "paint" (and "Melanie's" meets
    "Melanie"): one suffix off a word of four letters or more, a doubled final consonant undoubled. Cached:
    a text's words are mostly ones already seen, and the cache made tokenizing a text the process had not
    seen 2.7 times faster (LoCoMo's turns and questions: 21 → 8 µs a text; docs/benchmarks.md)."""
    word = word.removesuffix("'s")
    if len(word) < 4 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return _DOUBLED.sub(r"\1", word[: -len(suffix)] + replacement)
    return word


def terms(lowered: str) -> list[str]:
    return [stem(t) for t in _LATIN.findall(lowered) if t not in STOP_WORDS]
