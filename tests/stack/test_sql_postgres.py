"""The SQL store suite over SQLite *and* a real PostgreSQL, plus concurrency on both.

Every test of ``tests/unit/store/sql/test_sql_store.py`` is imported and runs once per URL: ``store_url``
below overrides the unit module's fixture. Each PostgreSQL test gets a fresh schema (dropped afterwards)
through ``search_path``, so runs never see each other's tables.
"""

import inspect
import threading
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, make_url, text

import tests.unit.store.sql.test_sql_store as suite
from actors.store.sql.store import MemoryStore
from schemas.errors import ConcurrentUpdate, StoreUnavailable

# the shared suite's tests that touch a database, collected again in this module with its fixtures
globals().update(
    {
        name: test
        for name, test in vars(suite).items()
        if name.startswith("test_") and {"store", "store_url"} & set(inspect.signature(test).parameters)
    }
)
store = suite.store
second_store = suite.second_store

THREADS = 8
INCREMENTS_PER_THREAD = 15


def _fresh_postgres_schema(base_url: str) -> tuple[str, str]:
    schema = f"hermes_test_{uuid.uuid4().hex[:12]}"
    engine = create_engine(base_url)
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))  # generated name, not input
    engine.dispose()
    url = make_url(base_url).update_query_dict({"options": f"-csearch_path={schema}"})
    return schema, url.render_as_string(hide_password=False)


def _drop_postgres_schema(base_url: str, schema: str) -> None:
    engine = create_engine(base_url)
    with engine.begin() as connection:
        connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'hermes.db'}"
        return
    base_url = request.getfixturevalue("postgres_url")
    schema, url = _fresh_postgres_schema(base_url)
    try:
        yield url
    finally:
        _drop_postgres_schema(base_url, schema)


def _run_threads(count: int, target) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(n: int) -> None:
        try:
            target(n)
        except BaseException as error:  # surfaced by the assertion in the test
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.slow
def test_concurrent_read_modify_commit_loses_no_update(store, store_url):
    (counter,) = suite.stored(store, suite.item(content="counter"))
    conflicts = [0] * THREADS

    def increment(n: int) -> None:
        own_store = MemoryStore(store_url)  # one engine per thread: like separate processes
        try:
            for _ in range(INCREMENTS_PER_THREAD):
                while True:
                    current = own_store.memories.get(suite.A, suite.ALICE, counter.memory_id)
                    current.access_count += 1
                    try:
                        own_store.memories.commit(suite.changes(current))
                        break
                    except ConcurrentUpdate:
                        conflicts[n] += 1
        finally:
            own_store.dispose()

    assert _run_threads(THREADS, increment) == []
    final = store.memories.get(suite.A, suite.ALICE, counter.memory_id)
    assert final.access_count == THREADS * INCREMENTS_PER_THREAD
    assert final.version == 1 + THREADS * INCREMENTS_PER_THREAD
    assert sum(conflicts) > 0  # the threads really did race


def test_concurrent_create_schema_calls_all_succeed(store_url):
    stores = [MemoryStore(store_url) for _ in range(4)]
    try:
        assert _run_threads(len(stores), lambda n: stores[n].create_schema()) == []
        stores[0].tenants.create(suite.A)
        assert stores[-1].tenants.ids() == [suite.A]
    finally:
        for each in stores:
            each.dispose()


@pytest.mark.postgres
def test_unreachable_postgres_raises_store_unavailable(postgres_url):
    closed_port = make_url(postgres_url).set(port=1).render_as_string(hide_password=False)
    unreachable = MemoryStore(closed_port)
    with pytest.raises(StoreUnavailable):
        unreachable.create_schema()
    with pytest.raises(StoreUnavailable):
        unreachable.keys.authenticate("hm_acme_0123")
    unreachable.dispose()
