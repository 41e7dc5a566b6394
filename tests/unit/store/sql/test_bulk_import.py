"""An import large enough to be a bulk load refreshes the planner's statistics; a small one does not (an
ANALYZE per ordinary batch would cost more than it tells)."""

import pytest
from sqlalchemy import create_engine, text

from actors.core.memory import MemoryItem
from actors.store.sql.store import MemoryStore
from actors.store.sql.transfer import BULK_ROWS, ImportBatch
from schemas.enums import Kind, Layer, State


def analyzed(url: str) -> bool:
    """Whether the planner's statistics describe the table as it is (a new database starts with preset
    ones, migration 0007): the primary key's row count is the table's."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT count(*) FROM memory_items")).scalar_one()
            primary_key = "SELECT stat FROM sqlite_stat1 WHERE idx LIKE 'sqlite_autoindex_memory_items%'"
            stats = connection.execute(text(primary_key)).scalar_one()
            return int(stats.split()[0]) == rows
    finally:
        engine.dispose()


@pytest.mark.parametrize(("count", "expected"), [(BULK_ROWS - 1, False), (BULK_ROWS, True)])
def test_a_bulk_import_refreshes_statistics(tmp_path, count, expected):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = MemoryStore(url)
    store.create_schema()
    store.tenants.create("acme")
    items = [
        MemoryItem(
            tenant_id="acme",
            user_id="alice",
            content=f"memory {n}",
            kind=Kind.EVENT,
            layer=Layer.ARCHIVE,
            state=State.ARCHIVED,
        )
        for n in range(count)
    ]
    counts = store.transfer.add("acme", "alice", ImportBatch(items=items), fence=None)
    store.dispose()
    assert counts.memories_added == count
    assert analyzed(url) is expected
