"""SQLite reads a user's items by key and by the index made for each lookup, not through the user's whole
history: a new database carries planner statistics (migration 0007), and every statement a write and a
restatement lookup run is checked with ``EXPLAIN QUERY PLAN`` as SQLite would run it."""

import pytest
from sqlalchemy import event

from actors.core.memory import GateChanges, MemoryItem
from actors.store.sql.store import MemoryStore
from schemas.enums import Kind, Layer, State


def plans(store: MemoryStore, operation) -> list[str]:
    """The query plan of every SELECT on memory_items that ``operation`` runs."""
    seen: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, _many):
        if statement.lstrip().upper().startswith("SELECT") and "FROM memory_items" in statement:
            seen.append((statement, parameters))

    engine = store.database._engine
    event.listen(engine, "before_cursor_execute", capture)
    try:
        operation()
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    with engine.connect() as connection:
        return [
            " | ".join(row[3] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params))
            for sql, params in seen
        ]


def archived(content: str, slot: str | None = None) -> MemoryItem:
    return MemoryItem(
        tenant_id="acme",
        user_id="alice",
        content=content,
        kind=Kind.FACT,
        slot=slot,
        value="x" if slot else None,
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
    )


def test_a_commit_checks_versions_and_tombstones_by_key(store):
    # twenty items: with more values in its IN list, an unguided planner walks the user's rows instead
    stored = [archived(f"memory {n}") for n in range(20)]
    store.memories.commit(GateChanges(upserted={i.memory_id: i for i in stored}))
    new = archived("I live in Rotterdam")
    changes = GateChanges(upserted={i.memory_id: i for i in [*stored, new]})
    (versions,) = plans(store, lambda: store.memories.commit(changes))
    assert "USING INDEX sqlite_autoindex_memory_items_1 (memory_id=?)" in versions


@pytest.mark.parametrize(
    ("lookup", "index"),
    [
        ({"content_hash": "0" * 64}, "ix_memory_items_scope_content_hash"),
        ({"slot": "basic.residence"}, "ix_memory_items_scope_slot"),
        ({"memory_ids": [f"m_{n}" for n in range(20)]}, "sqlite_autoindex_memory_items_1"),
    ],
)
def test_a_restatement_lookup_reads_the_archive_through_its_own_index(store, lookup, index):
    (plan,) = plans(store, lambda: store.memories.archived("acme", "alice", limit=20, **lookup))
    assert f"USING INDEX {index} " in plan
