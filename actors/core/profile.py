"""The USER profile (docs/design.md#the-profile): slot conclusions aggregated from the memories that back
them.

A *claim* is every active memory saying the same thing about a slot: the same value with the same polarity
("lives in Hangzhou" said in English in one session and in Chinese in the next is one claim, backed by both
items — the gate folds restatements into one item, compression merges same-slot items, so a claim is
usually one or two items). Per slot:

* **support** of a claim — a noisy-OR over its items, each counted once per distinct session that stated it
  (up to three): ``1 − Π (1 − confidence_i) ** sessions_i``. Repeated confirmation raises it.
* **challengers** of a claim — claims that contradict it: another value of a single-valued slot, or the same
  value with the opposite polarity. Each lowers the confidence, it does not flip the conclusion:
  ``confidence = support · Π (1 − 0.3 · support_j)``.
* **conclusion** — single-valued slots keep one value: the claim with the firmest standing (frozen, then
  confirmed, then pending), then the most sessions, then the *earliest* statement: a newcomer stated once
  never unseats the incumbent. It is rewritten only when the newcomer gets confirmed (restated in another
  session) or arrives as an explicit correction — the gate then supersedes the old item at once.
  Multi-valued slots (preferences, allergies) keep every value, ranked by weight: confidence × how recently
  it was stated (the kind's decay curve) × the negative-priority weight (×1.2 for 14 days).
* **history** — superseded and expired values of the slot, newest first (an old residence after a move).

Temporary states (``state.*``) never become slot conclusions: they are reported apart, from working memory
only, newest per slot. Relations (``user –colleague→ Bob``) come from ``actors.core.relations``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from actors.core.context import display_value, shown_value
from actors.core.gate.valuation import days_between, negative_weight
from actors.core.memory import MemoryItem
from actors.core.records import CurrentState, Profile, ProfileSlot, SlotConclusion
from actors.core.relations import EntityGraph
from actors.core.slots import is_temporary, same_value, spec
from schemas.enums import Kind, Layer, Polarity, State
from schemas.settings import GatePolicy
from schemas.slots import SlotSpec

MAX_SESSIONS_COUNTED = 3
CHALLENGE_STRENGTH = 0.3
_STANDING = {State.FROZEN: 3, State.CONFIRMED: 2, State.UNFROZEN: 2, State.PENDING: 1}


@dataclass
class Claim:
    slot: str
    value: str
    polarity: Polarity
    items: list[MemoryItem] = field(default_factory=list)

    @property
    def support(self) -> float:
        doubt = 1.0
        for item in self.items:
            sessions = min(max(len(item.confirmed_sessions), 1), MAX_SESSIONS_COUNTED)
            doubt *= (1.0 - min(item.confidence, 0.999)) ** sessions
        return 1.0 - doubt

    @property
    def standing(self) -> int:
        return max(_STANDING.get(i.state, 0) for i in self.items)

    @property
    def sessions(self) -> int:
        return len({s for i in self.items for s in i.confirmed_sessions})

    @property
    def first_stated(self) -> datetime:
        return min(i.created_at for i in self.items)

    @property
    def last_stated(self) -> datetime:
        return max(i.updated_at for i in self.items)

    @property
    def frozen(self) -> bool:
        return any(i.is_frozen for i in self.items)

    def contradicts(self, other: Claim, slot_spec: SlotSpec | None) -> bool:
        if other is self:
            return False
        if same_value(self.slot, other.value, self.value):
            return other.polarity is not self.polarity
        single = slot_spec is not None and slot_spec.single_valued
        return single and other.polarity is self.polarity


def _standing_order(claim: Claim) -> tuple[int, int, float, float]:
    """Frozen over confirmed over pending, then more sessions, then the incumbent (earliest stated)."""
    return claim.standing, claim.sessions, -claim.first_stated.timestamp(), claim.support


def merged_values(history: Iterable[MemoryItem]) -> dict[str, list[str]]:
    """summary id → the values of the items merged into it (a summary of several values has none itself)."""
    found: dict[str, list[str]] = defaultdict(list)
    for item in sorted(history, key=lambda i: (i.created_at, i.memory_id)):
        if item.superseded_by and item.value and item.value not in found[item.superseded_by]:
            found[item.superseded_by].append(item.value)
    return found


def claims_by_slot(items: Iterable[MemoryItem], merged: dict[str, list[str]]) -> dict[str, list[Claim]]:
    """Active, non-temporary, slotted items grouped into claims per slot; a summary backs each value merged
    into it."""
    grouped: dict[str, dict[tuple[str, Polarity], Claim]] = defaultdict(dict)
    for item in sorted(items, key=lambda i: (i.created_at, i.memory_id)):
        if not item.is_active or not item.slot or is_temporary(item.slot) or item.kind is Kind.STATE:
            continue
        values = [item.value] if item.value else merged.get(item.memory_id, [])
        for value in values:
            claim = grouped[item.slot].setdefault(
                (value, item.polarity), Claim(item.slot, value, item.polarity)
            )
            claim.items.append(item)
    return {slot: list(claims.values()) for slot, claims in grouped.items()}


def concluded(slot: str, claims: list[Claim]) -> list[Claim]:
    """The slot's conclusions: one winner per group of rival claims — the whole slot when single-valued,
    else per value. The one definition the profile (``ProfileBuilder``) and the profile-drift metric
    (``jobs.profiles.slot_conclusions``) share."""
    slot_spec = spec(slot)
    single = slot_spec is not None and slot_spec.single_valued
    rivals: dict[str, list[Claim]] = defaultdict(list)
    for claim in claims:
        rivals["" if single else claim.value].append(claim)
    return [max(group, key=_standing_order) for group in rivals.values()]


def slot_conclusions(
    active: Iterable[MemoryItem], history: Iterable[MemoryItem] = ()
) -> dict[str, list[Claim]]:
    """Every slot's conclusions, by slot name: what ``ProfileBuilder.build`` reports for the same items."""
    grouped = claims_by_slot(active, merged_values(history))
    return {slot: concluded(slot, grouped[slot]) for slot in sorted(grouped)}


class ProfileBuilder:
    def __init__(self, policy: GatePolicy, now: datetime):
        self.policy = policy
        self.now = now

    def confidence(self, claim: Claim, rivals: list[Claim]) -> float:
        slot_spec = spec(claim.slot)
        value = claim.support
        for rival in rivals:
            if claim.contradicts(rival, slot_spec):
                value *= 1.0 - CHALLENGE_STRENGTH * rival.support
        return value

    def weight(self, claim: Claim, confidence: float) -> float:
        slot_spec = spec(claim.slot)
        kind = slot_spec.kind if slot_spec else claim.items[0].kind
        recency = (
            1.0
            if claim.frozen
            else self.policy.decay.factor(kind) ** days_between(claim.last_stated, self.now)
        )
        priority = max(negative_weight(i, self.policy, self.now) for i in claim.items)
        return confidence * recency * priority

    def conclusions(self, slot: str, claims: list[Claim]) -> list[Claim]:
        """One winner per group of rival claims: the whole slot when single-valued, else per value."""
        return concluded(slot, claims)

    def slot(self, slot: str, claims: list[Claim], history: list[MemoryItem]) -> ProfileSlot:
        slot_spec = spec(slot)
        values = []
        for claim in self.conclusions(slot, claims):
            confidence = self.confidence(claim, claims)
            values.append(_conclusion(claim, confidence, self.weight(claim, confidence), claims, slot_spec))
        values.sort(key=lambda v: (-v.weight, v.value))
        current = {(v.value, v.polarity) for v in values}
        past = [h for h in history if (h.value, h.polarity) not in current]
        return ProfileSlot(
            slot=slot,
            label=slot_spec.label if slot_spec else slot,
            group=slot.split(".", 1)[0],
            single_valued=slot_spec is not None and slot_spec.single_valued,
            confidence=round(max((v.confidence for v in values), default=0.0), 4),
            conclusions=values,
            history=[_past(h) for h in sorted(past, key=lambda h: (h.updated_at, h.memory_id), reverse=True)],
        )

    def build(self, user_id: str, active: list[MemoryItem], history: list[MemoryItem]) -> Profile:
        """``history``: the user's superseded and expired items (values replaced, items merged away)."""
        grouped = claims_by_slot(active, merged_values(history))
        merged_away = {source for item in active for source in item.merged_from}
        past_by_slot: dict[str, list[MemoryItem]] = defaultdict(list)
        for item in history:
            if item.slot and item.value and not is_temporary(item.slot) and item.memory_id not in merged_away:
                past_by_slot[item.slot].append(item)
        slots = [self.slot(s, grouped[s], past_by_slot.get(s, [])) for s in sorted(grouped)]
        graph = EntityGraph.from_items(active)
        return Profile(
            user_id=user_id,
            generated_at=self.now,
            slots=slots,
            relations=graph.edges,
            state=current_state(active),
        )


def current_state(active: list[MemoryItem]) -> list[CurrentState]:
    """The newest temporary state per ``state.*`` slot, from working memory only."""
    newest: dict[str, MemoryItem] = {}
    for item in active:
        temporary = item.kind is Kind.STATE or is_temporary(item.slot)
        if temporary and item.layer is Layer.WORKING:
            key = item.slot or "state.situation"
            if key not in newest or (item.created_at, item.memory_id) > (
                newest[key].created_at,
                newest[key].memory_id,
            ):
                newest[key] = item
    return [
        CurrentState(
            slot=slot, value=i.value, content=i.content, memory_id=i.memory_id, stated_at=i.created_at
        )
        for slot, i in sorted(newest.items())
    ]


def _conclusion(
    claim: Claim, confidence: float, weight: float, claims: list[Claim], slot_spec: SlotSpec | None
) -> SlotConclusion:
    ordered = sorted(claim.items, key=lambda i: (i.created_at, i.memory_id))
    return SlotConclusion(
        value=claim.value,
        display=_display(claim.slot, claim.value, ordered),
        polarity=claim.polarity,
        confidence=round(confidence, 4),
        memory_ids=[i.memory_id for i in ordered],
        updated_at=claim.last_stated,
        weight=round(weight, 4),
        state=max(ordered, key=lambda i: _STANDING.get(i.state, 0)).state,
        frozen=claim.frozen,
        sessions=claim.sessions,
        first_stated_at=claim.first_stated,
        contested_by=[i.memory_id for c in claims if claim.contradicts(c, slot_spec) for i in c.items],
    )


def _display(slot: str, value: str, items: list[MemoryItem]) -> str:
    """The value as the user first wrote it among the claim's memories."""
    forms = (shown_value(slot, value, i.content) for i in items)
    return next((f for f in forms if f != display_value(value)), display_value(value))


def _past(item: MemoryItem) -> SlotConclusion:
    return SlotConclusion(
        value=item.value or "",
        display=_display(item.slot or "", item.value or "", [item]),
        polarity=item.polarity,
        confidence=round(item.confidence, 4),
        memory_ids=[item.memory_id],
        updated_at=item.updated_at,
        state=item.state,
        first_stated_at=item.created_at,
        superseded_by=item.superseded_by,
    )
