"""The stateless steps of one user's calls: values in, values out, no state of the user kept here.

The refusal policy of caller-written text (``cleaned_text``, ``refusal``, ``structured_candidate``), the
passage vectors of texts (``passage_vectors``), the gates' decision of a write's candidates (``decide``), and
the mapping of the core's answers to the API models (``write_outcome``, ``write_result``, ``turns_preview``,
``recall_hit``). The per-user parts (``actors.app.unit_of_work``, ``actors.app.recall_state``) and the
resource managers (``actors.app.resources``) call them with what they hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, cast

import numpy as np

from actors.adapters.embedding import Embedder
from actors.adapters.tracing import span
from actors.app.write import not_kept_detail
from actors.core.context import challenge_note, slot_template
from actors.core.extraction import Dropped
from actors.core.gate.engine import GateEngine, Outcome
from actors.core.memory import Alert, Candidate, GateChanges, MemoryItem, content_hash
from actors.core.recall.engine import Hit
from actors.core.recall.vectors import vector_bytes
from actors.core.recall.view import ActiveView
from actors.core.slots import is_style
from actors.core.style import canonical_style
from actors.language.safety.injection import Neutralized, neutralize_injection
from actors.language.safety.orders import addressed_to_assistant, plain_value
from actors.language.safety.secrets import redact
from schemas import api
from schemas.enums import Polarity

NOT_AN_INSTRUCTION = not_kept_detail(Dropped.INSTRUCTION.value)
OUTSIDE_VOCABULARY = "not kept: a style value outside the closed vocabulary (actors.core.style)"

# ------------------------------------------------------------------------------ the refusal policy


def cleaned_text(text: str) -> Neutralized:
    """Caller-written text as it may be stored: secrets and identifiers redacted, invisible characters
    dropped, instruction-like spans flagged (the extractor does the same for conversation turns)."""
    return neutralize_injection(redact(text).text)


def refusal(
    slot: str | None, value: str | None, polarity: Polarity, content: str
) -> str | tuple[str, str] | None:
    """How a structured write obeys the instruction rule: a detail why it is not kept, or the (content,
    value) it is kept as (the service's template), or None when it is an ordinary statement."""
    if is_style(slot):
        style = canonical_style(cast(str, slot), value)
        if style is None:
            return OUTSIDE_VOCABULARY
        return cast(str, slot_template(slot, style, polarity, content)), style
    if not addressed_to_assistant(content):
        return None
    if slot and plain_value(value):
        return cast(str, slot_template(slot, value, polarity, content)), cast(str, value)
    return NOT_AN_INSTRUCTION


def structured_candidate(request: api.WriteMemoryRequest) -> Candidate | list[api.NotKept]:
    """The one candidate of a structured write, cleaned and held to the instruction rule; or, when it is
    not kept, what the answer says of it (nothing, for an instruction to a model)."""
    cleaned = cleaned_text(request.content)
    value = None if request.value is None else cleaned_text(request.value)
    if cleaned.flagged or (value is not None and value.flagged):
        return []
    content, slot_value = cleaned.text, None if value is None else value.text
    refused = refusal(request.slot, slot_value, request.polarity, content)
    if isinstance(refused, str):
        dialog_id = request.dialog_ids[0] if request.dialog_ids else ""
        return [api.NotKept(dialog_id=dialog_id, detail=refused)]
    if refused is not None:  # a style value or an order's slot: stored as the service's template
        content, slot_value = refused
    return Candidate(
        content=content,
        kind=request.kind,
        session_id=request.session_id,
        dialog_ids=list(request.dialog_ids),
        polarity=request.polarity,
        slot=request.slot,
        value=slot_value,
        importance=request.importance,
        confidence=request.confidence,
        source=request.source,
        forced=request.remember,
        write_score=max(request.importance, 0.9 if request.remember else 0.0),
    )


# ------------------------------------------------------------------------------ vectors and decisions


def passage_vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Passage vectors of ``texts``, float32, one row each."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    with span("embedder.embed_passages", texts=len(texts)):
        return np.asarray(embedder.embed_passages(texts), dtype=np.float32)


def embed_into(embedder: Embedder, items: Sequence[MemoryItem]) -> None:
    """Give each item its content's passage vector, as the bytes SQL stores."""
    vectors = passage_vectors(embedder, [item.content for item in items])
    for item, vector in zip(items, vectors, strict=True):
        item.embedding = vector_bytes(vector)


class NearDuplicates(Protocol):
    """Where a decision finds each candidate's near-duplicates: the active items' view of an engine."""

    def active_view(self, engine: GateEngine) -> ActiveView:
        """The view of the engine's active items as the last commit left them."""
        ...

    def changed_view(self, engine: GateEngine) -> ActiveView:
        """A view of the engine's active items after a decision changed them (not committed yet)."""
        ...


def decide(
    engine: GateEngine,
    candidates: Sequence[Candidate],
    vectors: np.ndarray,
    views: NearDuplicates,
    archived_like: Callable[[Candidate], Iterable[MemoryItem]],
) -> tuple[list[Outcome], GateChanges]:
    """The candidates through ``engine``'s gates, one by one, each with its near-duplicates from ``views``
    (a candidate's includes the ones before it) and the archived items it may restate (``archived_like``),
    so the gate can restore instead of duplicating. A new item takes its candidate's vector as bytes."""
    changes = GateChanges()
    outcomes: list[Outcome] = []
    view: ActiveView | None = None
    with span("gate.write", candidates=len(candidates)):
        for cand, vector in zip(candidates, vectors, strict=True):
            for item in archived_like(cand):
                engine.items.setdefault(item.memory_id, item)
            if view is None:
                view = views.changed_view(engine) if changes.upserted else views.active_view(engine)
            outcome, step = engine.write(cand, near_duplicates=view.nearest(vector, 3))
            for item in step.upserted.values():
                if item.embedding is None and item.content_hash == content_hash(cand.content):
                    item.embedding = vector_bytes(vector)
            outcomes.append(outcome)
            changes.merge(step)
            if step.upserted:  # the next candidate's near-duplicates include this one
                view = None
    return outcomes, changes


# ------------------------------------------------------------------------------ API answers


def write_outcome(outcome: Outcome) -> api.WriteOutcome:
    return api.WriteOutcome(
        memory_id=outcome.memory_id,
        action=outcome.action,
        state=outcome.state,
        layer=outcome.layer,
        detail=outcome.detail,
    )


def write_result(
    user_id: str,
    outcomes: list[Outcome],
    ignored: int,
    alerts: list[Alert],
    not_kept: Sequence[api.NotKept] = (),
) -> api.WriteResult:
    return api.WriteResult(
        user_id=user_id,
        outcomes=[write_outcome(o) for o in outcomes],
        alerts=[api.AlertOut.model_validate(a) for a in alerts],
        ignored_turns=ignored,
        not_kept=list(not_kept),
    )


def turns_preview(
    user_id: str, forked: GateEngine, outcomes: list[Outcome], alerts: list[Alert], ignored: int
) -> api.TurnsPreview:
    """A preview's answer: each outcome with the memory as the forked engine left it."""
    return api.TurnsPreview(
        user_id=user_id,
        outcomes=[
            api.PreviewOutcome(
                **write_outcome(o).model_dump(),
                memory=api.MemoryOut.model_validate(forked.get(o.memory_id)),
            )
            for o in outcomes
        ],
        alerts=[api.AlertOut.model_validate(a) for a in alerts],
        ignored_turns=ignored,
    )


def recall_hit(hit: Hit, items: Mapping[str, MemoryItem]) -> api.RecallHit:
    """A recalled memory as the API shows it, its scores rounded; a pending challenge to confirmed facts
    carries its caution (``context.challenge_note``)."""
    breakdown = api.ScoreBreakdown(
        semantic=round(hit.scores.get("semantic", 0.0), 4),
        time_decay=round(hit.time_decay, 4),
        importance=round(hit.item.importance, 4),
        routes={route: round(score, 4) for route, score in hit.scores.items()},
        relevance=round(hit.relevance, 4),
        boosts=hit.boosts,
        total=round(hit.total, 6),
    )
    return api.RecallHit(
        memory=api.MemoryOut.model_validate(hit.item),
        score=breakdown,
        routes=sorted(hit.routes),
        contradicts=hit.contradicts,
        caution=challenge_note(hit.item, items),
    )
