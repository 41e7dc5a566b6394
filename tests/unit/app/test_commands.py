"""The user commands (``actors.app.commands``), run on a real service (SQLite, the hashing embedder): every
command answers its declared response type, survives the pickling Ray ships it through, and declares its
effect; a preview decides like the write and stores nothing; resolving an alert goes through the user's
service, audited and fenced. The layers above pass commands through generic ``run`` methods whose types
mypy checks (``make lint``)."""

import pickle
from typing import Any

import pytest

from actors.adapters.embedding import HashEmbedder
from actors.app import commands
from actors.app.commands import (
    Alerts,
    Confirm,
    Effect,
    EraseUser,
    Forget,
    Freeze,
    GetMemory,
    ImportRecords,
    ListMemories,
    PreviewTurns,
    Profile,
    Recall,
    ResolveAlert,
    StartSession,
    Unfreeze,
    UserCommand,
    WriteMemory,
    WriteTurns,
)
from actors.app.service import UserMemoryService
from schemas import api
from schemas.api_tenant import ResolveAlertRequest
from schemas.enums import AlertKind, AlertStatus, Kind, State
from schemas.errors import NotFound
from schemas.settings import GatePolicy


def run(command, svc):
    """A command as a host runs it: prepared (the request read once), then run on the user's service."""
    return command.run(svc, command.prepare(svc.writes.extractor, svc.writes.clock()))


def service(store, user="alice"):
    return UserMemoryService("acme", user, store=store, embedder=HashEmbedder(64), policy=GatePolicy())


def turns(session, *texts):
    said = [api.TurnIn(text=text, dialog_id=f"{session}-d{n}") for n, text in enumerate(texts)]
    return api.WriteTurnsRequest(session_id=session, turns=said)


def every_command() -> set[type[UserCommand]]:
    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        return found.union(*(subclasses(c) for c in found))

    declared = subclasses(UserCommand)
    return {cls for cls in declared if cls.__module__ == commands.__name__ and "run" in vars(cls)}


def response_type(cls: type[UserCommand]) -> type:
    """The ``R`` of ``UserCommand[R]`` that ``cls`` derives from."""
    for base in cls.__mro__:
        metadata = getattr(base, "__pydantic_generic_metadata__", None)
        if metadata and metadata["origin"] is UserCommand and metadata["args"]:
            return metadata["args"][0]
    raise AssertionError(f"{cls.__name__} names no response type")


def test_only_the_writes_store_and_every_command_declares_an_effect():
    effects = {cls.__name__: cls.effect for cls in every_command()}
    assert len(effects) == 16
    storing = {name for name, effect in effects.items() if effect is Effect.STORES}
    assert storing == {"WriteTurns", "WriteMemory", "ImportRecords"}
    assert effects["PreviewTurns"] is Effect.READS and effects["ResolveAlert"] is Effect.CHANGES
    assert WriteTurns.name() == "write_turns" and EraseUser.name() == "erase_user"


def test_every_command_answers_its_response_type_and_pickles(store):
    svc = service(store)
    said = run(WriteTurns(request=turns("s1", "I'm allergic to peanuts", "I love jazz music")), svc)
    run(WriteTurns(request=turns("s2", "I'm allergic to peanuts")), svc)
    conflict = run(WriteTurns(request=turns("s3", "I think I don't mind peanuts")), svc)
    allergy, jazz = (o.memory_id for o in said.outcomes)
    alert = conflict.alerts[0].alert_id
    memory = {
        "content": "I prefer tea",
        "kind": Kind.PREFERENCE,
        "session_id": "s4",
        "dialog_ids": ["s4-d0"],
        "slot": "preference.drink",
        "value": "tea",
    }
    runs: list[UserCommand[Any]] = [
        WriteMemory(request=memory, request_id="r1"),
        PreviewTurns(request=turns("s5", "I live in Hangzhou")),
        Recall(request={"query": "what should I avoid cooking?"}),
        StartSession(request={"session_id": "s5"}),
        ListMemories(limit=5),
        GetMemory(memory_id=allergy),
        Confirm(memory_id=jazz),
        Freeze(memory_id=jazz, request={"reason": "the user asked"}),
        Unfreeze(memory_id=jazz, request={"reason": "moved on", "dialog_id": "s6-d0", "new_value": "blues"}),
        Alerts(status="all"),
        ResolveAlert(alert_id=alert),
        Profile(),
        ImportRecords(request={"records": []}),
        Forget(memory_id=jazz),
        EraseUser(),
    ]
    assert {type(c) for c in runs} | {WriteTurns} == every_command()
    for command in runs:
        assert pickle.loads(pickle.dumps(command)) == command
        answer = run(command, svc)
        assert isinstance(answer, response_type(type(command))), command.name()


def test_a_command_validates_its_parameters_when_built():
    with pytest.raises(ValueError, match="memory_id"):
        GetMemory(memory_id="m_not-hex")
    with pytest.raises(ValueError):
        ListMemories(limit=501)
    with pytest.raises(ValueError):
        Recall(request={"query": "q"}, extra=1)


def test_a_preview_decides_like_the_write_and_stores_nothing(store):
    svc = service(store)
    run(WriteTurns(request=turns("s1", "I'm allergic to peanuts", "I live in Hangzhou")), svc)

    def state():
        items = {item.memory_id: item.snapshot() for item in svc.work.engine.items.values()}
        return store.memories.count("acme", "alice"), items

    before = state()
    request = turns("s2", "I'm allergic to peanuts", "actually I moved to Suzhou", "I love hiking")
    preview = run(PreviewTurns(request=request), svc)
    assert state() == before

    def decided(answer):
        return [(o.action, o.state, o.memory.content, o.memory.value) for o in answer.outcomes]

    assert decided(run(PreviewTurns(request=request), svc)) == decided(preview)  # nothing of it was kept

    written = run(WriteTurns(request=request), svc)
    assert [(o.action, o.state, o.layer) for o in preview.outcomes] == [
        (o.action, o.state, o.layer) for o in written.outcomes
    ]
    stored = {o.memory_id: store.memories.get("acme", "alice", o.memory_id) for o in written.outcomes}
    for shown, done in zip(preview.outcomes, written.outcomes, strict=True):
        assert (shown.memory.content, shown.memory.slot, shown.memory.value) == (
            stored[done.memory_id].content,
            stored[done.memory_id].slot,
            stored[done.memory_id].value,
        )
    assert [o.memory.value for o in preview.outcomes if o.action == "corrected"] == ["suzhou"]


def test_resolving_an_alert_is_audited_once_and_only_for_its_user(store):
    svc = service(store)
    run(WriteTurns(request=turns("s1", "I'm allergic to peanuts")), svc)
    run(WriteTurns(request=turns("s2", "I'm allergic to peanuts")), svc)
    alert = run(WriteTurns(request=turns("s3", "I think I don't mind peanuts")), svc).alerts[0]
    assert alert.kind is AlertKind.FROZEN_CONFLICT
    with pytest.raises(NotFound):
        run(ResolveAlert(alert_id=alert.alert_id), service(store, "bob"))

    done = run(ResolveAlert(alert_id=alert.alert_id, request=ResolveAlertRequest(reason="reviewed")), svc)
    assert done.status is AlertStatus.RESOLVED
    again = run(ResolveAlert(alert_id=alert.alert_id, request=ResolveAlertRequest(reason="twice")), svc)
    assert again.status is AlertStatus.RESOLVED
    assert store.alerts.find("acme", "alice") == []
    trail = [e for e in store.audit.events("acme", "alice", alert.memory_id) if e.action == "resolve_alert"]
    assert [(e.actor, e.reason, e.after["status"]) for e in trail] == [("operator", "reviewed", "resolved")]
    # the service's own copy agrees with SQL: the closed alert is no longer open in its memory
    assert all(a.alert_id != alert.alert_id for a in svc.work.engine.ledger._open_alerts)
    assert service(store).work.engine.ledger._open_alerts == []
    assert svc.memories.item(alert.memory_id).state is State.FROZEN
