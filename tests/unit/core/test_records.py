"""The core's records map to the API models field for field (the models read them by attribute): same
fields, same order, so a field added to one side without the other fails here, and the JSON the API
returns (and a session's stored snapshot) is what the records hold."""

from dataclasses import fields
from datetime import UTC, datetime

import pytest

from actors.core.records import (
    CurrentState,
    Profile,
    ProfileSlot,
    SessionContextSnapshot,
    SlotConclusion,
)
from actors.core.relations import Edge
from schemas import api
from schemas.enums import Polarity, State

AT = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("record", "model"),
    [
        (Profile, api.UserProfile),
        (ProfileSlot, api.ProfileSlot),
        (SlotConclusion, api.SlotConclusion),
        (CurrentState, api.StateOut),
        (SessionContextSnapshot, api.SessionContext),
        (Edge, api.RelationEdge),
    ],
)
def test_a_record_has_the_fields_of_its_response_model_in_order(record, model):
    assert [f.name for f in fields(record)] == list(model.model_fields)


def test_a_profile_converts_field_for_field():
    current = SlotConclusion(
        value="suzhou",
        display="Suzhou",
        polarity=Polarity.POSITIVE,
        confidence=0.9,
        memory_ids=["m_1"],
        updated_at=AT,
        weight=0.8,
        state=State.CONFIRMED,
        sessions=2,
        first_stated_at=AT,
        contested_by=["m_2"],
    )
    past = SlotConclusion("hangzhou", "Hangzhou", Polarity.POSITIVE, 0.7, ["m_0"], AT, superseded_by="m_1")
    profile = Profile(
        user_id="alice",
        slots=[ProfileSlot("basic.residence", "residence", True, 0.9, [current], [past], "basic")],
        relations=[Edge("user", "colleague", "Bob", ("m_3",))],
        state=[CurrentState("state.mood", None, "so tired today", "so tired today", "m_4", AT)],
        generated_at=AT,
    )
    out = api.UserProfile.model_validate(profile)
    expected = {f.name: getattr(current, f.name) for f in fields(current)}
    assert out.slots[0].conclusions[0].model_dump() == expected
    assert out.slots[0].history[0].superseded_by == "m_1" and out.slots[0].history[0].weight == 0.0
    edge = api.RelationEdge(source="user", label="colleague", target="Bob", memory_ids=["m_3"])
    assert out.relations == [edge]
    assert out.state[0].stated_at == AT and out.generated_at == AT


def test_a_session_snapshot_converts_to_the_same_json_as_the_model_built_directly():
    text = "# Core facts\n- residence: 苏州"
    snapshot = SessionContextSnapshot("s1", AT, text, "", "residence: 苏州", {"core": "x"})
    direct = api.SessionContext(
        session_id="s1",
        created_at=AT,
        text=text,
        memory_block="",
        user_block="residence: 苏州",
        sections={"core": "x"},
    )
    assert api.SessionContext.model_validate(snapshot).model_dump_json() == direct.model_dump_json()
