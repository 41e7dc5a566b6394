"""How much a memory is worth now: decay (docs/design.md#the-bounded-gate) and the value used to rank eviction
candidates.

``decay_score = importance * factor(kind) ** days_since_last_access``; frozen items do not decay. The value of
an item for eviction is ``decay × confidence``, lifted by how often it was recalled and lowered when another
active item already says the same thing (uniqueness); negative memories weigh 1.2 while they are fresh.
"""

import math
from datetime import datetime

from actors.core.memory import MemoryItem
from actors.core.slots import is_withdrawal
from schemas.enums import Polarity
from schemas.settings import GatePolicy

_SECONDS_PER_DAY = 86400.0


def days_between(earlier: datetime, later: datetime) -> float:
    return max(0.0, (later - earlier).total_seconds() / _SECONDS_PER_DAY)


def decay_score(item: MemoryItem, policy: GatePolicy, now: datetime) -> float:
    if item.is_frozen:
        return item.importance
    factor = policy.decay.factor(item.kind)
    return item.importance * float(factor ** days_between(item.last_accessed_at, now))


def negative_weight(item: MemoryItem, policy: GatePolicy, now: datetime) -> float:
    """1.2 for a negative memory during its priority window, until the user engages positively 3 times. A
    withdrawn fact ("shellfish is fine for me now") is no rejection: it weighs 1.0."""
    if item.polarity is not Polarity.NEGATIVE or is_withdrawal(item.slot, item.polarity):
        return 1.0
    if item.positive_engagements >= policy.positive_engagements_to_demote:
        return 1.0
    if days_between(item.created_at, now) > policy.negative_priority_days:
        return 1.0
    return policy.fusion.negative_weight


def eviction_value(item: MemoryItem, policy: GatePolicy, now: datetime, *, duplicated: bool) -> float:
    heat = 1.0 + 0.1 * math.log1p(item.access_count)
    uniqueness = 0.7 if duplicated else 1.0
    return (
        decay_score(item, policy, now)
        * item.confidence
        * heat
        * uniqueness
        * negative_weight(item, policy, now)
    )
