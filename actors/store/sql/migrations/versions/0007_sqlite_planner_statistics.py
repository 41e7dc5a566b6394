"""SQLite: planner statistics for the memory table from the start, so a user's items are read by key.

Without statistics SQLite's planner picks the index that matches the most equality columns, and for
``tenant, user, memory_id IN (…)`` (every commit's version check) and ``tenant, user, layer, content_hash``
(every write's restatement lookup) that was the (tenant, user, layer, created) index: each walked the user's
whole history, 3.4 and 2.5 ms for a user of 3,600 items, against 0.02 ms by the primary key and the content
hash index. A new database gets statistics describing the store at scale (SQLite's documented way to fix
plans: rows written to ``sqlite_stat1``); a database that already holds items is analyzed instead, and a
bulk import analyzes again (``Database.refresh_statistics``). PostgreSQL keeps its own statistics.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

#: rows matched by each prefix of an index's columns, at the scale the store is built for: a million
#: memories, 10 tenants, 10,000 memories a user, four layers and states, a content hash naming one memory
_PRESET = {
    "ix_memory_items_scope_layer_created": "1000000 100000 10000 2500 1",
    "ix_memory_items_scope_state": "1000000 100000 10000 2500",
    "ix_memory_items_scope_content_hash": "1000000 100000 10000 1",
    "ix_memory_items_scope_slot": "1000000 100000 10000 50",
}


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    bind.exec_driver_sql("ANALYZE memory_items")  # creates sqlite_stat1; real statistics if it holds items
    if bind.exec_driver_sql("SELECT 1 FROM sqlite_stat1 WHERE tbl = 'memory_items'").first():
        return
    primary_key = next(
        row[1] for row in bind.exec_driver_sql("PRAGMA index_list(memory_items)") if row[3] == "pk"
    )
    rows = [*_PRESET.items(), (primary_key, "1000000 1")]
    for index, stat in rows:
        bind.exec_driver_sql(
            "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('memory_items', ?, ?)", (index, stat)
        )
    # a connection reads the statistics when it loads the schema: this one (pooled, and used next) too
    bind.exec_driver_sql("ANALYZE sqlite_schema")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        bind.exec_driver_sql("DELETE FROM sqlite_stat1 WHERE tbl = 'memory_items'")
