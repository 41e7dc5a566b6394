"""The gateway's span of each command, by OpenTelemetry's GenAI memory conventions: named by its
``gen_ai.operation.name`` when it is a memory operation, with the store (the tenant), the record's id, and
the answer's record count; never the user id or any content."""

from actors.app.commands import (
    Alerts,
    EraseUser,
    Forget,
    GetMemory,
    ListMemories,
    PreviewTurns,
    Recall,
    WriteTurns,
)
from schemas.api import AlertList, MemoryList, RecallResponse, WriteResult
from serve.gateway import command_span_attributes, command_span_name
from tests.unit.app.test_commands import every_command

MEMORY_ID = "m_" + "a" * 32
OPERATIONS = {
    "create_memory",
    "upsert_memory",
    "update_memory",
    "delete_memory",
    "search_memory",
    "delete_memory_store",
}
TURNS = {"session_id": "s1", "turns": [{"text": "my secret garden is Qx1", "dialog_id": "d1"}]}


def test_each_command_is_the_memory_operation_it_does():
    named = {cls.__name__: cls.operation.value if cls.operation else None for cls in every_command()}
    assert named == {
        "WriteTurns": "upsert_memory",
        "WriteMemory": "upsert_memory",
        "ImportRecords": "create_memory",
        "PreviewTurns": None,
        "Recall": "search_memory",
        "StartSession": "search_memory",
        "ListMemories": "search_memory",
        "GetMemory": "search_memory",
        "Confirm": "update_memory",
        "Freeze": "update_memory",
        "Unfreeze": "update_memory",
        "ResolveAlert": None,
        "Forget": "delete_memory",
        "EraseUser": "delete_memory_store",
        "Alerts": None,
        "Profile": None,
    }
    assert {value for value in named.values() if value} <= OPERATIONS


def test_span_names_and_attributes():
    recall = Recall(request={"query": "what is my secret garden called"})
    assert command_span_name(recall) == "search_memory"
    assert command_span_attributes("acme", recall) == {
        "tenant_id": "acme",
        "hermes.command": "recall",
        "gen_ai.operation.name": "search_memory",
        "gen_ai.provider.name": "hermes_memory",
        "gen_ai.memory.store.id": "acme",
    }
    forget = Forget(memory_id=MEMORY_ID)
    assert command_span_attributes("acme", forget)["gen_ai.memory.record.id"] == MEMORY_ID
    assert command_span_name(EraseUser()) == "delete_memory_store"
    assert command_span_name(PreviewTurns(request=TURNS)) == "hermes.preview_turns"
    assert "gen_ai.operation.name" not in command_span_attributes("acme", Alerts())
    for command in (recall, forget, WriteTurns(request=TURNS), GetMemory(memory_id=MEMORY_ID)):
        shown = str(command_span_attributes("acme", command))
        assert "secret" not in shown and "Qx1" not in shown  # no content, ever


def test_record_counts_come_from_the_answer():
    # model_construct: only the list lengths matter here
    assert Recall(request={"query": "q"}).record_count(RecallResponse.model_construct(hits=[1, 2, 3])) == 3
    assert WriteTurns(request=TURNS).record_count(WriteResult.model_construct(outcomes=[1, 2])) == 2
    assert ListMemories().record_count(MemoryList.model_construct(items=[1], total=9)) == 1
    assert Alerts().record_count(AlertList(alerts=[])) is None
