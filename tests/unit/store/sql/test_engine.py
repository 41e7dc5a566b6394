"""SQLite engines opened at once on a new file all connect: SQLite refuses a journal-mode change at once
(no busy handler) while another opener is changing it, and the engine waits for that opener instead."""

import threading

from sqlalchemy import text

from actors.store.sql.engine import build_engine

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
