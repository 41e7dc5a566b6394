"""The core's answers as the API's response models (``schemas.api``): the profile and the session context.

One function per record, field by field, so the type checker sees every field the API gains or loses. The
mapping adds and drops nothing: the JSON of a converted record is what the API has always returned (and
what a session's stored snapshot holds, byte for byte).
"""

from actors.core.records import (
    CurrentState,
    Profile,
    ProfileSlot,
    SessionContextSnapshot,
    SlotConclusion,
)
from actors.core.relations import Edge
from schemas import api


def user_profile(profile: Profile) -> api.UserProfile:
    return api.UserProfile(
        user_id=profile.user_id,
        slots=[profile_slot(s) for s in profile.slots],
        relations=[relation_edge(e) for e in profile.relations],
        state=[state_out(s) for s in profile.state],
        generated_at=profile.generated_at,
    )


def profile_slot(slot: ProfileSlot) -> api.ProfileSlot:
    return api.ProfileSlot(
        slot=slot.slot,
        label=slot.label,
        single_valued=slot.single_valued,
        confidence=slot.confidence,
        conclusions=[slot_conclusion(c) for c in slot.conclusions],
        history=[slot_conclusion(c) for c in slot.history],
        group=slot.group,
    )


def slot_conclusion(conclusion: SlotConclusion) -> api.SlotConclusion:
    return api.SlotConclusion(
        value=conclusion.value,
        display=conclusion.display,
        polarity=conclusion.polarity,
        confidence=conclusion.confidence,
        memory_ids=list(conclusion.memory_ids),
        updated_at=conclusion.updated_at,
        weight=conclusion.weight,
        state=conclusion.state,
        frozen=conclusion.frozen,
        sessions=conclusion.sessions,
        first_stated_at=conclusion.first_stated_at,
        contested_by=list(conclusion.contested_by),
        superseded_by=conclusion.superseded_by,
    )


def relation_edge(edge: Edge) -> api.RelationEdge:
    return api.RelationEdge(
        source=edge.source, label=edge.label, target=edge.target, memory_ids=list(edge.backing_ids)
    )


def state_out(state: CurrentState) -> api.StateOut:
    return api.StateOut(
        slot=state.slot,
        value=state.value,
        content=state.content,
        memory_id=state.memory_id,
        stated_at=state.stated_at,
    )


def session_context(snapshot: SessionContextSnapshot) -> api.SessionContext:
    return api.SessionContext(
        session_id=snapshot.session_id,
        created_at=snapshot.created_at,
        text=snapshot.text,
        memory_block=snapshot.memory_block,
        user_block=snapshot.user_block,
        sections=dict(snapshot.sections),
    )
