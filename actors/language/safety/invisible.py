"""Invisible characters: zero-width, bidi overrides, tag characters and controls — the usual ways to hide
text from a reviewer. Every safety check reads a text with them stripped, so none can split a secret or an
injected instruction into pieces that no check recognises."""

from __future__ import annotations

import unicodedata

#: variation selectors 17–256 carry no glyph of their own and are used to smuggle bytes into text
_SMUGGLING_RANGES = ((0xE0100, 0xE01EF),)
_KEPT_CONTROLS = frozenset("\n\t")


def _is_invisible(ch: str) -> bool:
    if ch in _KEPT_CONTROLS:
        return False
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf"):  # controls; format chars: zero-width, bidi overrides, tags, soft hyphen
        return True
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _SMUGGLING_RANGES)


def strip_invisible(text: str) -> str:
    """Drop control and invisible format characters; keep newlines and tabs; turn CR into a newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch for ch in text if not _is_invisible(ch))
