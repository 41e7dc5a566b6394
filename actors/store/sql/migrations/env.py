"""Alembic environment: always online, on the connection handed over by ``upgrade_to_head``."""

from alembic import context

from actors.store.sql.tables import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through actors.store.sql.migrations.upgrade_to_head(connection)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    compare_type=True,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things in place
)
with context.begin_transaction():
    context.run_migrations()
