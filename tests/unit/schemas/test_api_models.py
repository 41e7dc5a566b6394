"""Validation of the public API models: what a caller can send, and how domain records are shown back."""

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from actors.core.memory import Alert, AuditEvent, MemoryItem
from schemas.api import (
    MAX_TURN_CHARS,
    MAX_TURNS_PER_BATCH,
    AlertOut,
    AuditEventOut,
    ConfirmRequest,
    CreateTenantRequest,
    FreezeRequest,
    MemoryOut,
    RecallRequest,
    StartSessionRequest,
    TurnIn,
    UnfreezeRequest,
    WriteMemoryRequest,
    WriteTurnsRequest,
)
from schemas.enums import AlertKind, Kind, Layer, Polarity, State

INJECTION_ID = 'a" or tenant_id != "x'
BAD_IDS = [INJECTION_ID, "", "a b", "a\nb", "ü", "a\\b", "a'b", "x" * 129, "-leading-dash"]


def turns_body(**turn_overrides) -> dict:
    turn = {"role": "user", "text": "I live in Hangzhou", "dialog_id": "d1"} | turn_overrides
    return {"session_id": "s1", "turns": [turn]}


def memory_body(**overrides) -> dict:
    return {
        "content": "allergic to peanuts",
        "kind": "fact",
        "session_id": "s1",
        "dialog_ids": ["d1"],
        "slot": "basic.allergy",
        "value": "peanut",
    } | overrides


def test_valid_turn_batch_parses_with_defaults():
    request = WriteTurnsRequest.model_validate(turns_body())
    assert request.turns[0].role == "user"
    assert request.turns[0].at is None


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_dialog_and_session_ids_are_rejected(bad):
    with pytest.raises(ValidationError, match="dialog_id"):
        WriteTurnsRequest.model_validate(turns_body(dialog_id=bad))
    with pytest.raises(ValidationError, match="session_id"):
        WriteTurnsRequest.model_validate(turns_body() | {"session_id": bad})


def test_injection_id_never_echoed_beyond_64_chars():
    long_bad = INJECTION_ID * 10
    with pytest.raises(ValidationError) as caught:
        TurnIn.model_validate({"text": "hi", "dialog_id": long_bad})
    assert long_bad not in str(caught.value)


def test_oversized_turn_text_is_rejected_and_limit_is_inclusive():
    TurnIn.model_validate({"text": "x" * MAX_TURN_CHARS, "dialog_id": "d1"})
    with pytest.raises(ValidationError, match="at most 8000"):
        TurnIn.model_validate({"text": "x" * (MAX_TURN_CHARS + 1), "dialog_id": "d1"})


def test_batch_size_bounds():
    turn = {"text": "hello", "dialog_id": "d1"}
    WriteTurnsRequest.model_validate({"session_id": "s", "turns": [turn] * MAX_TURNS_PER_BATCH})
    with pytest.raises(ValidationError):
        WriteTurnsRequest.model_validate({"session_id": "s", "turns": [turn] * (MAX_TURNS_PER_BATCH + 1)})
    with pytest.raises(ValidationError):
        WriteTurnsRequest.model_validate({"session_id": "s", "turns": []})


def test_assistant_role_allowed_other_roles_rejected():
    assert TurnIn.model_validate({"role": "assistant", "text": "ok", "dialog_id": "d"}).role == "assistant"
    with pytest.raises(ValidationError):
        TurnIn.model_validate({"role": "system", "text": "ok", "dialog_id": "d"})


def test_naive_turn_time_is_taken_as_utc():
    turn = TurnIn.model_validate({"text": "hi", "dialog_id": "d", "at": "2024-05-01T08:00:00"})
    assert turn.at == datetime(2024, 5, 1, 8, tzinfo=UTC)


@pytest.mark.parametrize(
    "model, body",
    [
        (WriteTurnsRequest, turns_body() | {"tenant_id": "other"}),
        (TurnIn, {"text": "hi", "dialog_id": "d", "user_id": "u2"}),
        (WriteMemoryRequest, memory_body(state="frozen")),
        (RecallRequest, {"query": "q", "filter": 'user_id != ""'}),
        (StartSessionRequest, {"session_id": "s", "extra": 1}),
    ],
)
def test_extra_fields_are_rejected(model, body):
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        model.model_validate(body)


def test_structured_write_checks_slot_and_ranges():
    request = WriteMemoryRequest.model_validate(memory_body())
    assert (request.kind, request.polarity, request.remember) == (Kind.FACT, Polarity.POSITIVE, False)
    with pytest.raises(ValidationError, match="unknown slot"):
        WriteMemoryRequest.model_validate(memory_body(slot="basic.password"))
    with pytest.raises(ValidationError):
        WriteMemoryRequest.model_validate(memory_body(importance=1.5))
    with pytest.raises(ValidationError):
        WriteMemoryRequest.model_validate(memory_body(confidence=-0.1))
    with pytest.raises(ValidationError):
        WriteMemoryRequest.model_validate(memory_body(dialog_ids=[]))
    with pytest.raises(ValidationError):
        WriteMemoryRequest.model_validate(memory_body(kind="secret"))


def test_recall_bounds():
    assert RecallRequest.model_validate({"query": "tea"}).k == 8
    for body in ({"query": ""}, {"query": "q" * 2001}, {"query": "q", "k": 0}, {"query": "q", "k": 51}):
        with pytest.raises(ValidationError):
            RecallRequest.model_validate(body)


def test_session_budget_bounds():
    assert StartSessionRequest.model_validate({"session_id": "s"}).budget_chars is None
    for budget in (199, 20001):
        with pytest.raises(ValidationError):
            StartSessionRequest.model_validate({"session_id": "s", "budget_chars": budget})


def test_reasons_are_bounded_and_unfreeze_needs_reason_and_dialog():
    with pytest.raises(ValidationError):
        ConfirmRequest.model_validate({"reason": "r" * 1001})
    with pytest.raises(ValidationError):
        FreezeRequest.model_validate({"reason": ""})
    with pytest.raises(ValidationError, match="dialog_id"):
        UnfreezeRequest.model_validate({"reason": "moved"})
    with pytest.raises(ValidationError, match="reason"):
        UnfreezeRequest.model_validate({"dialog_id": "d9"})
    assert UnfreezeRequest.model_validate({"reason": "moved", "dialog_id": "d9"}).new_content is None


def test_tenant_ids_use_the_partition_alphabet():
    assert CreateTenantRequest.model_validate({"tenant_id": "acme_1"}).tenant_id == "acme_1"
    for bad in ("1acme", "acme-1", "a" * 49, INJECTION_ID):
        with pytest.raises(ValidationError):
            CreateTenantRequest.model_validate({"tenant_id": bad})


def test_memory_out_mirrors_the_item_without_tenant():
    item = MemoryItem(
        tenant_id="acme",
        user_id="u1",
        content="lives in Suzhou",
        kind=Kind.FACT,
        layer=Layer.CORE,
        state=State.FROZEN,
        slot="basic.residence",
        value="suzhou",
        source_dialog_ids=["d1", "d2"],
        confirmed_sessions=["s1", "s2"],
        frozen_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    out = MemoryOut.model_validate(item)
    dumped = out.model_dump()
    assert "tenant_id" not in dumped
    assert (out.memory_id, out.layer, out.state, out.value) == (
        item.memory_id,
        Layer.CORE,
        State.FROZEN,
        "suzhou",
    )
    assert out.source_dialog_ids == ["d1", "d2"] and out.content_hash == item.content_hash
    # the output owns its lists: later changes to the domain item (its id tuples are replaced, never mutated)
    # do not leak into a sent response
    item.source_dialog_ids += ("d3",)
    assert out.source_dialog_ids == ["d1", "d2"]


def test_audit_and_alert_views():
    event = AuditEvent("acme", "u1", "m_" + "0" * 32, "freeze", "user", "declared", None, {"state": "frozen"})
    assert AuditEventOut.model_validate(event).after == {"state": "frozen"}
    alert = Alert("acme", "u1", AlertKind.FROZEN_CONFLICT, None, "conflict", related_ids=["m_x"])
    out = AlertOut.model_validate(alert)
    assert (out.alert_id, out.kind, out.related_ids) == (alert.alert_id, AlertKind.FROZEN_CONFLICT, ["m_x"])
    assert "tenant_id" not in out.model_dump()
