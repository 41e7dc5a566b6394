"""Figures the jobs derive from a user's items: slot conclusions and their digests (profile drift), the
outcome of past evictions (eviction hit rate), and the conclusions a cohort may share.

Definitions (also in ``docs/jobs.md``):

* a user's **slot conclusions**: for each profile slot, the sorted values the USER profile concludes
  (``actors.core.profile.slot_conclusions``, the same function the profile API uses: one value of a
  single-valued slot, every value of a multi-valued one; ``not <value>`` for a negative one; temporary
  ``state.*`` slots excluded);
* **profile drift** of a user: the share of slots, among those concluded at the last run or now, whose
  conclusion changed since the last run; a run reports the mean over users that had a previous snapshot.
  Only digests are stored between runs, never the values;
* **eviction hit rate**: of the items archived in the look-back window (capacity evictions and stale
  pending items cleared, by the live gate or a job), the share not restored since — an eviction undone
  by a restore (a restatement, or the restore job) removed something that was still wanted. The newest
  evictions have had the least time to be undone, so each nightly run reports a rolling figure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from actors.core import profile
from actors.core.memory import MemoryItem
from schemas.enums import Polarity, State

CONCLUDED_STATES = frozenset({State.CONFIRMED, State.FROZEN})
#: slots a cohort may aggregate: observed tastes and interaction style, never declared personal facts
#: (``basic.*``: residence, health, family…), relations, tasks or temporary states
COHORT_SLOT_PREFIXES = ("preference.", "style.")


def _label(claim: profile.Claim) -> str:
    return f"not {claim.value}" if claim.polarity is Polarity.NEGATIVE else claim.value


def slot_conclusions(items: Iterable[MemoryItem], history: Iterable[MemoryItem] = ()) -> dict[str, list[str]]:
    """The profile's conclusions per slot, as sorted labels; ``history`` (superseded and expired items) gives
    the values merged into a summary, as it does for the profile."""
    return {
        slot: sorted({_label(claim) for claim in claims})
        for slot, claims in profile.slot_conclusions(items, history).items()
    }


def digests(conclusions: dict[str, list[str]]) -> dict[str, str]:
    return {
        slot: hashlib.sha256("\x1f".join(labels).encode()).hexdigest()[:16]
        for slot, labels in conclusions.items()
    }


def drift(previous: dict[str, str] | None, current: dict[str, str]) -> float | None:
    """Share of slots whose conclusion changed; None without a previous snapshot or any slot at all."""
    if previous is None:
        return None
    slots = set(previous) | set(current)
    if not slots:
        return None
    return sum(previous.get(s) != current.get(s) for s in slots) / len(slots)


@dataclass(frozen=True, slots=True)
class EvictionOutcomes:
    evicted: int = 0
    restored: int = 0  # of those, brought back since

    def __add__(self, other: EvictionOutcomes) -> EvictionOutcomes:
        return EvictionOutcomes(self.evicted + other.evicted, self.restored + other.restored)

    @property
    def hit_rate(self) -> float | None:
        return None if not self.evicted else (self.evicted - self.restored) / self.evicted


def eviction_outcomes(moves: Iterable[tuple[str | None, str, datetime]]) -> EvictionOutcomes:
    """From (memory id, "archive" | "restore", at), oldest first: each archive event is one eviction, a hit
    unless a restore of the same item follows it."""
    open_evictions: dict[str | None, int] = {}
    evicted = restored = 0
    for memory_id, action, _at in moves:
        if action == "archive":
            evicted += 1
            open_evictions[memory_id] = open_evictions.get(memory_id, 0) + 1
        elif open_evictions.get(memory_id):
            open_evictions[memory_id] -= 1
            restored += 1
    return EvictionOutcomes(evicted, restored)


def cohort_claims(items: Iterable[MemoryItem]) -> set[tuple[str, str, str]]:
    """(slot, polarity, value) a user holds that a cohort may count: concluded, valued, eligible slots."""
    return {
        (item.slot, item.polarity.value, item.value)
        for item in items
        if item.is_active
        and item.state in CONCLUDED_STATES
        and item.slot
        and item.value
        and item.slot.startswith(COHORT_SLOT_PREFIXES)
    }
