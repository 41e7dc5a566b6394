"""The registry of language packs, by code. Adding a language is one new pack folder and one line here;
which packs extraction reads with comes from the settings (``HERMES_EXTRACTOR_LANGUAGES``)."""

from __future__ import annotations

from actors.language import en, zh
from actors.language.pack import LanguagePack

#: every pack, in the order the tokenizer reads their words
PACKS: dict[str, LanguagePack] = {"en": en.PACK, "zh": zh.PACK}


def packs(codes: tuple[str, ...] | list[str] | None = None) -> tuple[LanguagePack, ...]:
    """The packs named by ``codes`` (all when None), in the registry's order."""
    if codes is None:
        return tuple(PACKS.values())
    unknown = sorted(set(codes) - set(PACKS))
    if unknown:
        raise ValueError(f"unknown language pack(s): {', '.join(unknown)}; known: {', '.join(PACKS)}")
    chosen = tuple(p for code, p in PACKS.items() if code in codes)
    if not any(p.reads is None for p in chosen):
        fallbacks = [code for code, p in PACKS.items() if p.reads is None]
        raise ValueError(f"the languages must include a fallback pack ({', '.join(fallbacks)})")
    return chosen
