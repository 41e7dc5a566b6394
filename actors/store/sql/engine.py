"""Engine construction and error translation for the SQL store.

SQLite is configured for many processes sharing one file: WAL (readers never block the writer), a busy
timeout (writers queue instead of failing), foreign keys on. Python 3.11's sqlite3 only BEGINs before DML,
so SQLAlchemy takes over BEGIN (the recipe in SQLAlchemy's SQLite dialect docs): read transactions are
``BEGIN`` (a consistent WAL snapshot), write transactions are ``BEGIN IMMEDIATE`` so the write lock is taken
up front — a deferred transaction that read first and then tries to write fails at once with SQLITE_BUSY
when another writer got in between, and the busy timeout cannot help it.

Driver errors leave this layer only as the store's own exceptions (``schemas.errors``):
connectivity and lock timeouts → ``StoreUnavailable``; serialization failures, deadlocks and stale
optimistic-lock updates → ``ConcurrentUpdate``; values the schema cannot hold → ``InvalidInput``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.pool import StaticPool

from schemas.errors import ConcurrentUpdate, InvalidInput, StoreUnavailable

#: execution option marking a transaction that will write (SQLite: BEGIN IMMEDIATE)
WRITE_OPTION = "hermes_write"
SQLITE_BUSY_TIMEOUT_MS = 15_000
POSTGRES_CONNECT_TIMEOUT_S = 5
#: SQLSTATEs of PostgreSQL transactions that lost a race: retrying is the right answer
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dump_json(value: Any) -> str:
    # ensure_ascii=False keeps Chinese content readable in the database
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def load_json(text: str) -> Any:
    # most of a memory's six id lists are empty: loading a user reads thousands of "[]"
    return [] if text == "[]" else json.loads(text)


def build_engine(url: str, *, echo: bool = False) -> Engine:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    options: dict[str, Any] = {"echo": echo, "json_serializer": dump_json, "json_deserializer": load_json}
    if backend == "sqlite":
        in_memory = parsed.database in (None, "", ":memory:")
        if in_memory:
            # one shared connection, otherwise every pooled connection sees its own empty database
            options |= {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        engine = create_engine(url, **options)
        _configure_sqlite(engine, wal=not in_memory)
        return engine
    if backend == "postgresql":
        options |= {
            "pool_pre_ping": True,  # a restarted server must not surface as errors on stale connections
            "connect_args": {"connect_timeout": POSTGRES_CONNECT_TIMEOUT_S},
        }
    return create_engine(url, **options)


def _configure_sqlite(engine: Engine, *, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (see _on_begin)
        cursor = dbapi_connection.cursor()
        try:
            # the busy timeout first: every statement after it waits for other connections' locks
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            if wal:
                _switch_to_wal(cursor)
            cursor.execute("PRAGMA foreign_keys=ON")
            # forgotten content must not linger in free space of the file (docs/trust.md#4-erasure)
            cursor.execute("PRAGMA secure_delete=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        writes = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def _switch_to_wal(cursor: Any) -> None:
    """Put the database in WAL mode (it stays so: a no-op for every later opener).

    SQLite does not call the busy handler while it changes the journal mode, so openers racing on a new file
    fail at once with "database is locked" while one of them switches it; they wait here for that one
    instead, as long as the busy timeout would have let them."""
    for last in _busy_attempts():
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode != sqlite3.SQLITE_BUSY or last:
                raise


def scrub_sqlite_log(engine: Engine) -> bool:
    """Copy every page into the database file and empty the write-ahead log: older page versions in the
    WAL, and the file's own pages until they are copied over, still hold what was just deleted.

    A checkpoint that finds another one running (an auto-checkpoint after some other commit, another
    host's scrub) gives up at once without calling the busy handler, and one that finds a reader on an
    older snapshot stops short; so this one is retried until it completes, for as long as the busy timeout.
    Returns whether it completed; if not, the next scrub or the last connection's close finishes it."""
    if engine.dialect.name != "sqlite":
        return True
    with engine.connect() as connection:
        for _ in _busy_attempts():
            # one row: (1 if it could not finish, frames in the log, frames copied into the file)
            if not connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").scalar_one():
                return True
    return False


def _busy_attempts() -> Iterator[bool]:
    """For what SQLite does not call the busy handler for: one attempt after another, a pause growing from
    2 to 100 ms between them, for as long as the busy timeout; each says whether it is the last."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    pause = 0.002
    while time.monotonic() < deadline:
        yield False
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    yield True


def _sqlstate(error: sa_exc.DBAPIError) -> str | None:
    return getattr(error.orig, "sqlstate", None)


@contextmanager
def translated_errors(operation: str) -> Iterator[None]:
    """Run a store operation; driver exceptions come out as ``schemas.errors`` exceptions."""
    try:
        yield
    except StaleDataError as error:
        raise ConcurrentUpdate(f"{operation}: a row changed since it was loaded ({error})") from error
    except sa_exc.DBAPIError as error:
        if _sqlstate(error) in _RETRYABLE_SQLSTATES:
            raise ConcurrentUpdate(f"{operation}: transaction lost a race, retry") from error
        if isinstance(error, sa_exc.DataError):
            raise InvalidInput(f"{operation}: a value does not fit the schema") from error
        if isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError) or error.connection_invalidated:
            raise StoreUnavailable(
                f"{operation}: SQL store unavailable ({type(error.orig).__name__})"
            ) from error
        raise
    except sa_exc.TimeoutError as error:  # connection pool exhausted
        raise StoreUnavailable(f"{operation}: no SQL connection available in time") from error
