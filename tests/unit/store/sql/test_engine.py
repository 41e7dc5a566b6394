"""SQLite engines opened at once on a new file all connect: SQLite refuses a journal-mode change at once
(no busy handler) while another opener is changing it, and the engine waits for that opener instead. JSON
columns read back what was stored."""

import json
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from actors.store.sql.engine import build_engine, dump_json, load_json

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
