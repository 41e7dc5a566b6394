"""The database every repository shares: one engine, and the sessions they open on it.

A repository (``actors.store.sql.memories``, ``tenants``, ...) is given the ``Database`` and opens one
session per operation: ``reading`` (one transaction) or ``writing`` (one transaction that takes the write
lock at BEGIN on SQLite, ``actors.store.sql.engine``), errors translated to ``schemas.errors`` either way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Select, text
from sqlalchemy.orm import Session

from actors.core.memory import MemoryItem
from actors.store.sql.engine import WRITE_OPTION, build_engine, scrub_sqlite_log, translated_errors
from actors.store.sql.mapping import item_from_record

log = logging.getLogger(__name__)


class Database:
    def __init__(self, url: str, *, echo: bool = False):
        self.url = url
        self._engine = build_engine(url, echo=echo)

    def create_schema(self) -> None:
        # alembic is slow to import: import it before taking the write lock, not while holding it (on a
        # loaded machine the import alone kept concurrent starters waiting past the busy timeout)
        from actors.store.sql.migrations import upgrade_to_head

        with translated_errors("create_schema"), self._engine.connect() as connection:
            connection = connection.execution_options(**{WRITE_OPTION: True})
            with connection.begin():
                upgrade_to_head(connection)

    def dispose(self) -> None:
        self._engine.dispose()

    @contextmanager
    def reading(self, operation: str) -> Iterator[Session]:
        with translated_errors(operation), Session(self._engine) as session, session.begin():
            yield session

    @contextmanager
    def writing(self, operation: str) -> Iterator[Session]:
        write = {WRITE_OPTION: True}
        with translated_errors(operation), Session(self._engine, execution_options=write) as session:
            with session.begin():
                yield session

    def items(self, operation: str, query: Select[Any]) -> list[MemoryItem]:
        """The items of a query over the item table's rows (plain rows, no identity map)."""
        with self.reading(operation) as session:
            return [item_from_record(record) for record in session.execute(query).mappings()]

    def refresh_statistics(self) -> None:
        """Fresh planner statistics of the memory table, after a bulk load (an import, a benchmark's seed)."""
        with self.writing("refresh_statistics") as session:
            session.execute(text("ANALYZE memory_items"))

    def scrub(self) -> None:
        """Overwrite SQLite's log after an erasure, so erased text does not linger in it (no-op elsewhere)."""
        with translated_errors("scrub"):
            if not scrub_sqlite_log(self._engine):
                log.warning("SQLite's log could not be scrubbed within the busy timeout; the next scrub will")
