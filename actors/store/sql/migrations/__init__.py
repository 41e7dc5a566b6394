"""Alembic migrations of the SQL store, run programmatically (no ``alembic.ini``): ``upgrade_to_head``.

New revisions go in ``versions/``; generate one against a scratch database with
``alembic.command.revision(config_for(connection), message, autogenerate=True)`` and review it by hand.
"""

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import Connection

#: pg_advisory_xact_lock key serializing concurrent upgrades of one PostgreSQL database
_SCHEMA_LOCK_KEY = 0x4E524D45  # "HERM"


def config_for(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    config.attributes["connection"] = connection
    return config


def upgrade_to_head(connection: Connection) -> None:
    """Migrate the database behind ``connection`` to the newest revision; a no-op when already there.

    Runs inside the connection's transaction. On PostgreSQL an advisory lock makes concurrent callers
    (several processes starting at once) wait for each other instead of racing to create the same tables;
    on SQLite the caller's ``BEGIN IMMEDIATE`` does the same.
    """
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK_KEY})
    command.upgrade(config_for(connection), "head")
