"""SQLite engines opened at once on a new file all connect: SQLite refuses a journal-mode change at once
(no busy handler) while another opener is changing it, and the engine waits for that opener instead. A scrub
after a deletion leaves no byte of it in the file or its log even while another connection's checkpoint is
running. JSON columns read back what was stored."""

import json
import sqlite3
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from actors.store.sql.engine import build_engine, dump_json, load_json, scrub_sqlite_log

OPENERS = 6
ROUNDS = 25


def test_openers_racing_on_a_new_file_all_connect_in_wal_mode(tmp_path):
    failures: list[BaseException] = []
    modes: set[str] = set()
    for round_ in range(ROUNDS):
        url = f"sqlite:///{tmp_path / f'race-{round_}.db'}"
        start = threading.Barrier(OPENERS)

        def open_and_read(url: str = url, start: threading.Barrier = start) -> None:
            engine = build_engine(url)
            try:
                start.wait()
                with engine.connect() as connection:
                    modes.add(connection.execute(text("PRAGMA journal_mode")).scalar_one())
            except BaseException as error:  # surfaced by the assertion below
                failures.append(error)
            finally:
                engine.dispose()

        threads = [threading.Thread(target=open_and_read) for _ in range(OPENERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    assert modes == {"wal"}


def test_a_scrub_waits_out_another_connections_checkpoint(tmp_path):
    """A checkpoint that finds another one running gives up at once (SQLite does not call the busy handler
    for that lock): the scrub must try again, or the deleted row stays in the file's old page."""
    path = tmp_path / "scrub.db"
    engine = build_engine(f"sqlite:///{path}")
    secret = "Zq" + "secret" * 100
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE notes (body TEXT)"))
        connection.execute(text("INSERT INTO notes VALUES (:body), ('kept')"), {"body": secret})
    assert scrub_sqlite_log(engine)  # the secret's page now sits in the database file itself

    def other_connection() -> sqlite3.Connection:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA busy_timeout=15000")
        return connection

    reader, checkpointer, probe = other_connection(), other_connection(), other_connection()
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM notes").fetchall()  # holds the snapshot from before the deletion
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM notes WHERE body = :body"), {"body": secret})

    def checkpoint_until_done() -> None:  # blocks on the reader, holding the checkpoint lock meanwhile
        while checkpointer.execute("PRAGMA wal_checkpoint(FULL)").fetchone()[0]:
            pass

    other = threading.Thread(target=checkpoint_until_done)
    other.start()
    while not probe.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[0]:
        pass  # until the other checkpoint holds the lock (a probe that took it first only delays it)
    threading.Timer(0.3, reader.execute, ["COMMIT"]).start()
    try:
        assert scrub_sqlite_log(engine)
        files = [f for f in tmp_path.iterdir() if f.name.startswith("scrub.db")]
        assert [f.name for f in files if b"Zq" in f.read_bytes()] == []
    finally:
        other.join()
        for connection in (reader, checkpointer, probe):
            connection.close()
        engine.dispose()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_json_columns_read_back_as_stored_and_every_empty_list_is_its_own(value):
    stored = dump_json(value)
    assert load_json(stored) == json.loads(stored)
    first, second = load_json(dump_json([])), load_json(dump_json([]))
    assert first == [] and first is not second  # a caller may grow the list it was given
