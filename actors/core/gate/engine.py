"""The two gates for one user's memory, as plain Python (no Ray, no I/O).

``GateEngine`` holds the user's loaded items and applies every rule of the two gates
(docs/design.md#gate-rules) to them. Each public operation returns the ``GateChanges`` it made (items to
upsert, audit events, alerts); the caller commits them to SQL in one transaction before acknowledging, and
reloads the engine if that commit fails.

The engine is a composition of collaborators that share one ``Ledger`` (``actors.core.gate.ledger``: the
items, the change set, the audit events and alerts — the one place that records a change):

* ``BoundedGate`` (``bounded``): capacities, compression, eviction, decay, recall heat, restore, forget;
* ``FrozenGate`` (``frozen``): confirm, the freeze rules, frozen conflicts, the audited unfreeze; it asks the
  bounded gate for room in long-term, and the bounded gate hands the summaries it confirms to the frozen
  gate's freeze rules through a callback;
* ``BatchPasses`` (``passes``): the batch jobs' consolidation pass and archive restore.

The write path itself lives here, in the order the rules fix: restatement (dedup → confirm instead of
insert), then the frozen-conflict check, then the bounded capacity check, then insertion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from actors.core.gate.bounded import BoundedGate
from actors.core.gate.frozen import FREEZE_RULES, FrozenGate
from actors.core.gate.ledger import Ledger, Outcome, union, without
from actors.core.gate.passes import CONSOLIDATION_ACTOR, BatchPasses, ConsolidationCounts
from actors.core.gate.valuation import decay_score
from actors.core.memory import Alert, Candidate, GateChanges, MemoryItem, content_hash, utcnow
from actors.core.slots import is_vital, refines, same_value, spec
from actors.language.tokens import same_words
from schemas.enums import AlertKind, Kind, Layer, Polarity, Source, State
from schemas.errors import InvalidInput, InvalidTransition
from schemas.settings import GatePolicy

__all__ = ["FREEZE_RULES", "GateEngine", "Outcome"]


class GateEngine:
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        policy: GatePolicy,
        items: Iterable[MemoryItem] = (),
        clock: Callable[[], datetime] = utcnow,
    ):
        self.ledger = Ledger(tenant_id, user_id, policy, items, clock)
        self.bounded = BoundedGate(self.ledger, on_confirmed=self._freeze_if_due)
        self.frozen = FrozenGate(self.ledger, self.bounded)
        self.passes = BatchPasses(self.ledger, self.bounded, self.frozen)

    def _freeze_if_due(self, item: MemoryItem, actor: str) -> None:
        self.frozen.freeze_if_due(item, actor)

    # ------------------------------------------------------------------ the user's memory (the ledger)

    @property
    def tenant_id(self) -> str:
        return self.ledger.tenant_id

    @property
    def user_id(self) -> str:
        return self.ledger.user_id

    @property
    def items(self) -> dict[str, MemoryItem]:
        return self.ledger.items

    @property
    def policy(self) -> GatePolicy:
        return self.ledger.policy

    @policy.setter
    def policy(self, policy: GatePolicy) -> None:
        self.ledger.policy = policy

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.ledger.clock

    def active(self, layer: Layer | None = None) -> list[MemoryItem]:
        return self.ledger.active(layer)

    def count(self, layer: Layer) -> int:
        return self.ledger.count(layer)

    def frozen_count(self) -> int:
        return self.ledger.frozen_count()

    def get(self, memory_id: str) -> MemoryItem:
        return self.ledger.get(memory_id)

    def forget_inactive(self) -> None:
        self.ledger.forget_inactive()

    def seed_alerts(self, alerts: Iterable[Alert]) -> None:
        self.ledger.seed_alerts(alerts)

    def drain(self) -> GateChanges:
        return self.ledger.drain()

    def resolve_alert(self, alert: Alert, *, reason: str, actor: str) -> GateChanges:
        """A person closed the open ``alert``: the change set holds it resolved, with its audit event."""
        self.ledger.resolve_alert(alert, reason=reason, actor=actor)
        return self.ledger.drain()

    # ------------------------------------------------------------------ the gates' own operations

    def confirm(
        self, memory_id: str, *, session_id: str | None = None, actor: str = "user", reason: str = ""
    ) -> GateChanges:
        """The user or an operator confirms a pending item. A pending challenge (a statement kept apart
        because it contradicts a frozen or a vital fact) confirmed this way takes effect: the facts it
        contradicts are superseded by it, a frozen one through an audited unfreeze."""
        item = self.ledger.require_active(memory_id)
        if item.state is not State.PENDING:
            raise InvalidTransition(
                f"memory {memory_id} is {item.state}, only pending items can be confirmed"
            )
        if session_id and session_id not in item.confirmed_sessions:
            item.confirmed_sessions += (session_id,)
        self.frozen.confirm_item(item, reason or "explicitly confirmed", actor)
        for target in self._contradicted_by(item):
            if target.memory_id not in item.conflicts_with:
                continue
            if target.is_frozen:
                self.ledger.transition(
                    target, State.UNFROZEN, "unfreeze", f"confirmed challenge {item.memory_id} applies", actor
                )
            self.ledger.supersede(target, item, actor)
            item.conflicts_with = without(item.conflicts_with, target.memory_id)
        self._after_statement(item, self.clock(), actor)
        return self.ledger.drain()

    def freeze(self, memory_id: str, *, reason: str, actor: str) -> GateChanges:
        return self.frozen.freeze(memory_id, reason=reason, actor=actor)

    def unfreeze(
        self,
        memory_id: str,
        *,
        reason: str,
        dialog_id: str,
        actor: str,
        new_content: str | None = None,
        new_value: str | None = None,
    ) -> GateChanges:
        return self.frozen.unfreeze(
            memory_id,
            reason=reason,
            dialog_id=dialog_id,
            actor=actor,
            new_content=new_content,
            new_value=new_value,
        )

    def restore(self, memory_id: str, *, actor: str, reason: str) -> GateChanges:
        return self.bounded.restore(memory_id, actor=actor, reason=reason)

    def decay(self) -> GateChanges:
        return self.bounded.decay()

    def record_access(self, memory_ids: Iterable[str]) -> GateChanges:
        return self.bounded.record_access(memory_ids)

    def consolidate(self, actor: str = CONSOLIDATION_ACTOR) -> tuple[ConsolidationCounts, GateChanges]:
        self.frozen.refreeze_due(actor)
        return self.passes.consolidate(actor)

    def refreeze_due(self, actor: str = "system") -> GateChanges:
        """Freeze again, unchanged, every item whose unfreeze window closed with no new value (the service
        asks this before a recall or a session's context; a write and consolidation do it themselves)."""
        self.frozen.refreeze_due(actor)
        return self.ledger.drain()

    def restore_archived(
        self, items: Iterable[MemoryItem], *, actor: str, reason: str
    ) -> tuple[GateChanges, list[str], list[str]]:
        return self.passes.restore_archived(items, actor=actor, reason=reason)

    # ------------------------------------------------------------------ write path

    def write(
        self, cand: Candidate, *, near_duplicates: Sequence[tuple[str, float]] = (), actor: str = "user"
    ) -> tuple[Outcome, GateChanges]:
        if not cand.content.strip():
            raise InvalidInput("empty memory content")
        self.frozen.refreeze_due("system")
        outcome = self._admit(cand, near_duplicates, actor)
        self._engage_positively(cand, actor)
        return outcome, self.ledger.drain()

    def _admit(self, cand: Candidate, near_duplicates: Sequence[tuple[str, float]], actor: str) -> Outcome:
        now = self.clock()
        restated = self._find_restatement(cand, near_duplicates)
        if restated is not None and not cand.is_correction:
            # a plain restatement: no contradiction scan over the active items (the hot path)
            outcome = self._restate(restated, cand, now, actor)
            kept = self._keep_own_words(restated, cand, near_duplicates, actor)
            if kept is None:
                return outcome
            return replace(outcome, detail=f"{outcome.detail}; its words kept as {kept.memory_id}")
        contradicted = self._contradicted_by(cand)
        frozen_conflicts = [i for i in contradicted if i.is_frozen]
        reopened = [i for i in contradicted if i.state is State.UNFROZEN]
        if reopened and not frozen_conflicts:
            return self._change_unfrozen(reopened[0], restated, cand, now, actor)
        # an allergy, health or diet fact is never denied or changed by one utterance, correction or not
        vital = [i for i in contradicted if is_vital(i.slot)]
        corrects = (
            bool(frozen_conflicts)
            and cand.is_correction
            and not vital
            and not retracts(cand, frozen_conflicts)
        )
        if restated is not None and not corrects:
            return self._restate(restated, cand, now, actor)
        if corrects:
            target = frozen_conflicts[0]
            corrections = len(target.supersedes)
            self.frozen.modify_frozen(target, cand, reason="explicit correction", actor=actor, now=now)
            if restated is not None and restated.is_active and restated is not target:
                # "Call me Sam" waited as a challenge; "actually my name is Sam" applied it: one fact now
                self.ledger.supersede(restated, target, actor)
            self._after_statement(target, now, actor)
            self._review_if_corrected_often(target, corrections)
            return Outcome.of(target, "corrected", "frozen item unfrozen, changed and re-frozen")
        item = self._insert(cand, now, actor)
        if frozen_conflicts:
            self.frozen.record_frozen_conflict(item, frozen_conflicts, actor)
            return Outcome.of(item, "conflict", "kept pending: contradicts a frozen fact")
        if vital:
            self.frozen.record_vital_retraction(item, vital, actor)
            return Outcome.of(
                item, "conflict", "kept pending: contradicts a vital fact until confirmed in another session"
            )
        # a correction supersedes the values it replaces and inherits their confirmation (never frozen:
        # only a frozen item it replaces is re-frozen, above); with nothing to replace it is a statement
        # like any other — "actually I moved to Rotterdam" from a new user is a pending fact, not core
        replaced = contradicted if cand.is_correction and item.kind is not Kind.STATE else []
        for old in replaced:
            self.ledger.supersede(old, item, actor)
        if any(old.state is State.CONFIRMED for old in replaced):
            self.ledger.transition(
                item, State.CONFIRMED, "confirm", "a correction inherits the value it replaces", actor
            )
            self.frozen.place_confirmed(item, actor)
        elif len(item.confirmed_sessions) >= self.policy.confirmations_to_confirm:
            self.frozen.confirm_item(item, "restated in distinct sessions", actor)
        if replaced:
            self._review_if_corrected_often(item, max(len(old.supersedes) for old in replaced))
        self._after_statement(item, now, actor)
        return Outcome.of(item, "corrected" if replaced else "created")

    def _change_unfrozen(
        self, target: MemoryItem, restated: MemoryItem | None, cand: Candidate, now: datetime, actor: str
    ) -> Outcome:
        """A statement against an item unfrozen by an audited unfreeze, within its window: the change the
        unfreeze was for. A new value modifies the item and freezes it again; a denial supersedes it and
        stays a confirmed statement (a withdrawn fact never freezes)."""
        reason = "new value within the unfreeze window"
        if retracts(cand, [target]):
            item = restated if restated is not None and restated.is_active else self._insert(cand, now, actor)
            self.ledger.supersede(target, item, actor)
            if item.state is State.PENDING:
                self.ledger.transition(item, State.CONFIRMED, "confirm", reason, actor)
                self.frozen.place_confirmed(item, actor)
            return Outcome.of(item, "corrected", "replaces the fact unfrozen for a change")
        self.frozen.modify_frozen(target, cand, reason=reason, actor=actor, now=now)
        if restated is not None and restated.is_active and restated is not target:
            self.ledger.supersede(restated, target, actor)
        self._after_statement(target, now, actor)
        return Outcome.of(target, "corrected", "the unfrozen fact changed and frozen again")

    def _engage_positively(self, cand: Candidate, actor: str) -> None:
        """A positive statement about what a negative memory rejects — the same slot and value, positive
        polarity ("I watched horror films all weekend, loved them" against "don't recommend horror") — is a
        positive engagement with the rejected thing. Each statement the gate admitted counts once,
        restatements included (one that already ended the negative memory, as its third contradiction or
        by superseding it, has nothing left to count against). After ``positive_engagements_to_demote`` of
        them the negative memory loses its negative-priority weight (``valuation.negative_weight``) in
        recall and eviction; nothing else about it changes (the contradiction rules still apply to it, and
        a frozen one stays frozen: engagement is heat, not content)."""
        if cand.polarity is not Polarity.POSITIVE or not cand.slot or not cand.value:
            return
        needed = self.policy.positive_engagements_to_demote
        for item in self.ledger.active():
            if item.polarity is not Polarity.NEGATIVE or (item.slot, item.value) != (cand.slot, cand.value):
                continue
            item.positive_engagements += 1
            self.ledger.touch(item)
            if item.positive_engagements == needed:
                reason = f"{needed} positive engagements with {item.value}: negative priority ends"
                self.ledger.event(item, "demote", reason, item.snapshot(), actor, cand.dialog_ids)

    def _find_restatement(
        self, cand: Candidate, near_duplicates: Sequence[tuple[str, float]]
    ) -> MemoryItem | None:
        digest = content_hash(cand.content)
        candidates = [i for i in self.items.values() if i.is_active or i.state is State.ARCHIVED]
        # a reading's claim restates claims: a slot-less memory of the same words is what its words restate
        # (``_keep_own_words``), never where its claim goes
        reading = cand.as_ruled is not None
        for item in candidates:
            if reading and not item.slot:
                continue
            # the same words say the same thing, unless they hold two slots (我在阿里巴巴做开发: a job and
            # an employer, each its own memory)
            slots_agree = item.slot == cand.slot or None in (item.slot, cand.slot)
            if item.content_hash == digest and item.polarity is cand.polarity and slots_agree:
                return item
        if cand.slot and cand.value:
            same_slot = [i for i in candidates if (i.slot, i.polarity) == (cand.slot, cand.polarity)]
            for item in same_slot:
                if item.value == cand.value:
                    return item
            # "I have a dog", then "my dog is called Max": the same dog, named at last
            for item in same_slot:
                if same_value(cand.slot, cand.value, item.value):
                    return item
        for memory_id, similarity in sorted(near_duplicates, key=lambda p: -p[1]):
            near = self.items.get(memory_id)
            if near is None or similarity < self.policy.near_duplicate_similarity:
                continue
            if reading and not near.slot:
                continue
            # words no reader gave a slot are not a claim's restatement: near-identical words a reader read
            # once ("recipe number 25 from my grandmother") and not again ("… number 27 …") differ
            if near.slot and not cand.slot:
                continue
            if near.value and cand.value:
                same_claim = near.value == cand.value
            else:  # no value to compare: the words must say the same thing too
                same_claim = same_words(near.content, cand.content)
            same_claim = same_claim and near.polarity is cand.polarity
            if same_claim and (near.is_active or near.state is State.ARCHIVED):
                return near
        return None

    def _keep_own_words(
        self,
        restated: MemoryItem,
        cand: Candidate,
        near_duplicates: Sequence[tuple[str, float]],
        actor: str,
    ) -> MemoryItem | None:
        """A reading of the semantic reader restated ``restated`` and confirmed it; the clause it read was, to
        the rules, a memory of its own (``Candidate.as_ruled``: a whole sentence of the turn, not a claim cut
        from it), and it stays one — admitted like any slot-less statement, so words said again confirm
        the memory that holds them — unless the restated item holds these very words. The claim is one item
        whatever the wording; the turn's words, its time and its session stay searchable."""
        words = cand.as_ruled
        if words is None or restated.content_hash == content_hash(words.content):
            return None
        others = [(memory_id, s) for memory_id, s in near_duplicates if memory_id != restated.memory_id]
        return self.items[self._admit(words, others, actor).memory_id]

    def _restate(self, item: MemoryItem, cand: Candidate, now: datetime, actor: str) -> Outcome:
        if item.is_frozen:
            return Outcome.of(item, "confirmed", "already frozen")
        challenged = self.ledger.frozen_challenged_by(item)
        if item.state is State.ARCHIVED:
            self.bounded.restore_item(item, actor, reason="restated by the user")
        before = item.snapshot()
        if refines(item.slot, cand.value, item.value):
            item.value = cand.value
        item.source_dialog_ids = union(item.source_dialog_ids, cand.dialog_ids)
        new_session = cand.session_id not in item.confirmed_sessions
        if new_session:
            item.confirmed_sessions += (cand.session_id,)
            item.source = Source.USER_REPEATED if item.source is not Source.INFERRED else item.source
        # rounded: 0.8 restated twice is 0.9, not 0.9000000000000001 (which would pass "above 0.9")
        item.importance = round(min(1.0, max(item.importance, cand.importance) + 0.05), 6)
        item.confidence = round(min(1.0, max(item.confidence, cand.confidence) + 0.05), 6)
        item.forced = item.forced or cand.forced
        item.last_accessed_at = now
        item.updated_at = now
        self.ledger.event(
            item, "restate", f"restated in session {cand.session_id}", before, actor, cand.dialog_ids
        )
        if (
            item.state is State.PENDING
            and len(item.confirmed_sessions) >= self.policy.confirmations_to_confirm
            and not challenged  # a challenge to a frozen fact stays pending until someone reviews it
        ):
            self.frozen.confirm_item(item, "restated in distinct sessions", actor)
        elif item.state is State.CONFIRMED:
            self.frozen.freeze_if_due(item, actor)
        self.ledger.touch(item)
        self._after_statement(item, now, actor)
        if challenged:
            # a statement against a frozen fact, made again: still not applied; each session counts
            for target in challenged:
                self.frozen.review_if_contested(target)
            return Outcome.of(item, "conflict", "kept pending: restates a challenge to a frozen fact")
        return Outcome.of(item, "confirmed", "restatement of an existing memory")

    def _insert(self, cand: Candidate, now: datetime, actor: str) -> MemoryItem:
        self.bounded.make_room(Layer.WORKING, actor)
        item = MemoryItem(
            tenant_id=self.tenant_id,
            user_id=self.user_id,
            content=cand.content,
            kind=cand.kind,
            polarity=cand.polarity,
            slot=cand.slot,
            value=cand.value,
            importance=max(cand.importance, 0.9) if cand.forced else cand.importance,
            confidence=cand.confidence,
            write_score=cand.write_score,
            source=cand.source,
            source_session_id=cand.session_id,
            source_dialog_ids=tuple(cand.dialog_ids),
            confirmed_sessions=(cand.session_id,),
            forced=cand.forced,
            created_at=cand.observed_at,
            updated_at=now,
            last_accessed_at=cand.observed_at,
            source_text=cand.source_text,
            context=cand.context,
        )
        item.decay_score = decay_score(item, self.policy, now)
        self.ledger.add(item)
        self.ledger.event(
            item, "create", "new memory enters working as pending", None, actor, cand.dialog_ids
        )
        if cand.forced and item.kind is not Kind.STATE:
            self.bounded.make_room(Layer.LONGTERM, actor)
            self.ledger.move(item, Layer.LONGTERM, "explicit remember: kept beyond working memory", actor)
        return item

    def _after_statement(self, item: MemoryItem, now: datetime, actor: str) -> None:
        """Apply what a statement implies for the items it contradicts or complements."""
        for other in self._contradicted_by(item):
            if other.is_frozen or other.memory_id == item.memory_id:
                continue
            settled = item.state in (State.CONFIRMED, State.FROZEN)
            if item.kind is Kind.STATE or settled:
                self.ledger.supersede(other, item, actor)
                continue
            if is_vital(other.slot):
                # unconfirmed statements do not wear a vital fact down: it waits for one to be confirmed
                other.conflicts_with = union(other.conflicts_with, [item.memory_id])
                item.conflicts_with = union(item.conflicts_with, [other.memory_id])
                self.ledger.touch(other)
                self.ledger.touch(item)
                continue
            before = other.snapshot()
            other.contradiction_count += 1
            other.confidence = round(other.confidence * 0.8, 6)
            other.conflicts_with = union(other.conflicts_with, [item.memory_id])
            item.conflicts_with = union(item.conflicts_with, [other.memory_id])
            self.ledger.event(other, "contradicted", f"contradicted by {item.memory_id}", before, actor)
            self.ledger.touch(item)
            if other.contradiction_count >= self.policy.contradictions_to_expire:
                self.ledger.transition(
                    other, State.EXPIRED, "expire", "repeatedly contradicted by newer facts", actor
                )
        for other in self._complemented_by(item):
            if other.memory_id not in item.complements:
                item.complements += (other.memory_id,)
                self.ledger.touch(item)
                if not other.is_frozen:
                    other.complements = union(other.complements, [item.memory_id])
                    self.ledger.touch(other)
        if item.state is State.CONFIRMED:
            self.frozen.freeze_if_due(item, actor)

    def _contradicted_by(self, stmt: Candidate | MemoryItem) -> list[MemoryItem]:
        if not stmt.slot or not stmt.value:
            return []
        slot_spec = spec(stmt.slot)
        found = []
        for item in self.active():
            if getattr(stmt, "memory_id", None) == item.memory_id or item.slot != stmt.slot or not item.value:
                continue
            if same_value(stmt.slot, item.value, stmt.value):
                if item.polarity is not stmt.polarity:
                    found.append(item)
            elif slot_spec is not None and slot_spec.single_valued and item.polarity is stmt.polarity:
                found.append(item)
        return found

    def _complemented_by(self, item: MemoryItem) -> list[MemoryItem]:
        slot_spec = spec(item.slot)
        if slot_spec is None or slot_spec.single_valued or not item.value:
            return []
        return [
            o
            for o in self.active()
            if o.memory_id != item.memory_id
            and o.slot == item.slot
            and o.value
            and o.value != item.value
            and o.polarity is item.polarity
        ]

    def _review_if_corrected_often(self, item: MemoryItem, before: int) -> None:
        """A fact the user corrected ``contradictions_to_review`` times (each correction leaves the old value
        in ``supersedes``, a replaced item hands its own on) raises a review once, when the count reaches
        it (``before`` is the count of the value corrected): which value holds, or is something misread?"""
        if before < self.policy.contradictions_to_review <= len(item.supersedes):
            self.ledger.alert(
                AlertKind.REPEATED_CORRECTION,
                item.memory_id,
                f"{item.slot or 'memory'} {item.memory_id} corrected {len(item.supersedes)} times: review it",
                list(item.supersedes),
                once=True,
            )


def retracts(cand: Candidate, frozen: list[MemoryItem]) -> bool:
    """The candidate denies a frozen fact ("shellfish is fine for me now" against a shellfish allergy) rather
    than replacing its value ("actually I moved to Suzhou"): even worded as a correction it is not applied
    at once — a wrongly retracted allergy costs more than a late one — but kept pending for review."""
    return any(same_value(cand.slot, f.value, cand.value) and f.polarity is not cand.polarity for f in frozen)
