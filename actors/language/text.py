"""The one place that knows which characters belong to which script (docs/design.md#language-packs).

Every module that asks "is this Chinese?" or needs the Han character class asks here; nothing else spells a
Unicode range. Han ideographs are the CJK Unified Ideographs, their Extension A and the compatibility
ideographs (U+3400–U+4DBF, U+4E00–U+9FFF, U+F900–U+FAFF); the Yijing hexagram symbols between the first
two blocks are not ideographs and are left out.
"""

from __future__ import annotations

import re

#: the Han ideographs as the body of a regex character class: ``f"[{HAN}]"``
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: the capital letters of the Latin scripts (A-Z, À-Þ, Ł, Ś, Ž, Ő …), for a character class: a name or a place
#: is read by its capital in any of them (Łukasz, Šimon, Őrség)
LATIN_UPPER = "".join(c for c in map(chr, range(0x41, 0x250)) if c.isupper() and c.isalpha())

_HAN_CHAR = re.compile(f"[{HAN}]")
_HAN_RUN = re.compile(f"[{HAN}]+")


def has_han(text: str) -> bool:
    """Whether any Han ideograph occurs in the text: the sign that a clause is (at least partly) Chinese."""
    return _HAN_CHAR.search(text) is not None


def is_han(text: str) -> bool:
    """Whether the text is non-empty and all Han ideographs."""
    return _HAN_RUN.fullmatch(text) is not None


def han_runs(text: str) -> list[str]:
    """The maximal runs of Han ideographs, in order."""
    return _HAN_RUN.findall(text)
