"""What forgetting one memory takes with it (docs/trust.md#4-erasure), as plain Python over the user's
items of every state (active, archived, superseded):

* the item itself;
* every summary that merged it, and the sources of every summary forgotten (a summary quotes its sources,
  its sources are its words): forgotten with it, never rebuilt;
* its words in every other item's turn text (``source_text``): "I broke my wrist skiing and I love opera"
  gave two memories that both kept the whole turn; forgetting the wrist cuts the clause out of the opera
  item's turn text, and where a word of it would still remain the turn text goes altogether (the item keeps
  its own words);
* its words in every other item's context (``context``: the turns said before it,
  ``actors.core.said_before``), cut the same way (a context keeps none of its item's own words, so any
  word of them left takes it all).

The store deletes the items (tombstones and redacted audit payloads left), rewrites the turn texts, drops the
vectors and the rendered snapshots, and scrubs SQLite's log; the service reloads the user's engine, so no
in-memory structure (recall views, BM25 postings, the archive) keeps anything of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from actors.core.memory import MemoryItem
from actors.language.tokens import content_units

_SPEAKER = re.compile(r"^[^:]{1,62}:\s+")


@dataclass(frozen=True, slots=True)
class Forgetting:
    #: the item asked for first, then what goes with it
    memory_ids: list[str]
    #: items that stay, their turn text cut
    rewritten: list[MemoryItem]


def plan_forgetting(memory_id: str, items: Mapping[str, MemoryItem]) -> Forgetting:
    gone = [memory_id]
    changed = True
    while changed:
        changed = False
        for item in items.values():
            linked = item.memory_id not in gone and (
                any(m in gone for m in item.merged_from)
                or any(item.memory_id in items[g].merged_from for g in gone if g in items)
            )
            if linked:
                gone.append(item.memory_id)
                changed = True
    words = [items[g].content for g in gone if g in items]
    rewritten = []
    for item in items.values():
        if item.memory_id in gone or not (item.source_text or item.context):
            continue
        turn = cut_out(item.source_text, words, item.content) if item.source_text else None
        context = cut_out(item.context, words, "") if item.context else None
        if (turn, context) != (item.source_text, item.context):
            rewritten.append(replace(item, source_text=turn, context=context))
    return Forgetting(gone, rewritten)


def cut_out(text: str, forgotten: list[str], own: str) -> str | None:
    """``text`` less every forgotten content (with and without a speaker tag); None when a word of them
    that the item's own content does not hold would still be left."""
    lost = set(content_units(" ".join(forgotten))) - set(content_units(own))
    variants = {v for words in forgotten for v in (words, _SPEAKER.sub("", words)) if v}
    if not (lost & set(content_units(text))) and not any(v in text for v in variants):
        return text  # nothing of them here
    for variant in variants:
        text = text.replace(variant, " ")
    text = " ".join(text.split())
    if lost & set(content_units(text)):
        return None
    return text or None
