"""Working-memory compression (docs/design.md#the-bounded-gate): same-slot items among the oldest merge into
one summary item that keeps every source dialog id (ten "had spicy noodles" points become one food summary),
so overflow shrinks working memory without losing where anything came from.
"""

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime

import numpy as np

from actors.core.memory import MemoryItem
from actors.core.recall.vectors import vector_bytes
from actors.core.slots import spec
from schemas.enums import Kind, Polarity, Source, State

SUMMARY_MAX_CHARS = 1000
#: the turns a summary's sources were said in, joined, for recall (``MemoryItem.source_text``)
SUMMARY_TURNS_MAX_CHARS = 2000


def plan_compression(oldest: list[MemoryItem]) -> list[list[MemoryItem]]:
    """Groups of two or more mergeable items; temporary states and unslotted items are never merged."""
    groups: dict[tuple[str, Polarity, Kind], list[MemoryItem]] = defaultdict(list)
    for item in oldest:
        if item.slot is None or item.kind is Kind.STATE or item.is_frozen:
            continue
        groups[(item.slot, item.polarity, item.kind)].append(item)
    return [g for g in groups.values() if len(g) >= 2]


def merge_group(group: list[MemoryItem], now: datetime) -> MemoryItem:
    ordered = sorted(group, key=lambda i: (i.created_at, i.memory_id))
    first = ordered[0]
    values = list(dict.fromkeys(i.value for i in ordered if i.value))
    slot_spec = spec(first.slot)
    label = slot_spec.label if slot_spec else first.slot
    contents = list(dict.fromkeys(i.content for i in ordered))
    if values:
        head = f"{label}: {', '.join(values)} (summary of {len(ordered)} mentions)"
        content = f"{head} — " + "; ".join(contents)
    else:
        content = "; ".join(contents)
    turns = " ".join(dict.fromkeys(i.source_text or i.content for i in ordered))
    contexts = "\n".join(dict.fromkeys(i.context for i in ordered if i.context))
    return MemoryItem(
        tenant_id=first.tenant_id,
        user_id=first.user_id,
        content=content[:SUMMARY_MAX_CHARS],
        kind=first.kind,
        layer=first.layer,
        state=State.PENDING,
        polarity=first.polarity,
        slot=first.slot,
        value=values[0] if len(values) == 1 else None,
        importance=max(i.importance for i in ordered),
        confidence=min(1.0, sum(i.confidence for i in ordered) / len(ordered) + 0.05 * (len(ordered) - 1)),
        write_score=max(i.write_score for i in ordered),
        access_count=sum(i.access_count for i in ordered),
        source=Source.USER_REPEATED,
        source_session_id=first.source_session_id,
        source_dialog_ids=tuple(dict.fromkeys(d for i in ordered for d in i.source_dialog_ids)),
        confirmed_sessions=tuple(dict.fromkeys(s for i in ordered for s in i.confirmed_sessions)),
        forced=any(i.forced for i in ordered),
        created_at=first.created_at,
        updated_at=now,
        last_accessed_at=max(i.last_accessed_at for i in ordered),
        merged_from=tuple(i.memory_id for i in ordered),
        source_text=turns[:SUMMARY_TURNS_MAX_CHARS],
        context=contexts[:SUMMARY_TURNS_MAX_CHARS] or None,
    )


def summary_vector(summary: MemoryItem, vector_of: Callable[[str], np.ndarray | None]) -> bytes | None:
    """A merged summary stands for the topic its sources share: the normalized mean of their vectors (no
    model call — embedding the long joined text was most of a consolidation pass's cost). None when the
    item is not a summary or a source's vector is unknown. ``vector_of``: a source's vector by memory id."""
    vectors = [vector_of(memory_id) for memory_id in summary.merged_from]
    known = [v for v in vectors if v is not None]
    if not vectors or len(known) < len(vectors):
        return None
    mean = np.mean(known, axis=0)
    norm = float(np.linalg.norm(mean))
    return None if norm == 0.0 else vector_bytes(mean / norm)
