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
  pending items cleared, by the live gate or a job), the share that were not wanted back. An eviction is a
  *miss* when the item was restored since (a restatement brought it back, or the restore job), when recall
  found it in the archive and put it in a top-k answer (its recall heat is newer than its archiving), or
  when the user restated it since in a new item (same slot and value, or the same words). The newest
  evictions have had the least time to be missed, so each nightly run reports a rolling figure;
* **profile agreement** of a user: the share of the profile's conclusions that no active memory of the user
  contradicts (a conclusion with a ``contested_by`` is one in disagreement with its memories).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from actors.core import profile
from actors.core.memory import MemoryItem
from actors.core.records import Profile
from actors.core.slots import same_value
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
    #: of those, wanted back since: restored, recalled from the archive into an answer, or restated
    missed: int = 0
    restored: int = 0
    recalled: int = 0
    restated: int = 0

    def __add__(self, other: EvictionOutcomes) -> EvictionOutcomes:
        return EvictionOutcomes(
            self.evicted + other.evicted,
            self.missed + other.missed,
            self.restored + other.restored,
            self.recalled + other.recalled,
            self.restated + other.restated,
        )

    @property
    def hit_rate(self) -> float | None:
        return None if not self.evicted else (self.evicted - self.missed) / self.evicted


def eviction_outcomes(
    moves: Iterable[tuple[str | None, str, datetime]],
    archived: Iterable[MemoryItem] = (),
    active: Iterable[MemoryItem] = (),
) -> EvictionOutcomes:
    """From (memory id, "archive" | "restore", at), oldest first: each archive event is one eviction, a hit
    unless it was missed — a restore of the same item follows it, the item (still ``archived``) was recalled
    after it, or an ``active`` item created after it restates it."""
    by_id = {item.memory_id: item for item in archived}
    active = list(active)
    pending: dict[str | None, list[datetime]] = defaultdict(list)
    evicted = restored = 0
    for memory_id, action, at in moves:
        if action == "archive":
            evicted += 1
            pending[memory_id].append(at)
        elif pending.get(memory_id):
            pending[memory_id].pop(0)
            restored += 1
    recalled = restated = 0
    for memory_id, times in pending.items():
        item = by_id.get(memory_id or "")
        for at in times:
            if item is not None and item.last_accessed_at > at:
                recalled += 1
            elif item is not None and any(_restates(other, item, at) for other in active):
                restated += 1
    return EvictionOutcomes(evicted, restored + recalled + restated, restored, recalled, restated)


def _restates(other: MemoryItem, evicted: MemoryItem, at: datetime) -> bool:
    if other.created_at <= at or other.memory_id == evicted.memory_id:
        return False
    if other.content_hash == evicted.content_hash:
        return True
    return bool(
        evicted.slot
        and evicted.value
        and other.slot == evicted.slot
        and other.polarity is evicted.polarity
        and same_value(other.slot, other.value, evicted.value)
    )


def agreement(profile_of_user: Profile) -> float | None:
    """Share of the profile's conclusions that no active memory contradicts; None without a conclusion."""
    conclusions = [c for slot in profile_of_user.slots for c in slot.conclusions]
    if not conclusions:
        return None
    return sum(not c.contested_by for c in conclusions) / len(conclusions)


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
