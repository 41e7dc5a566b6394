"""Fixtures shared by the unit tests: a real SQL store (SQLite in tmp_path) with the tenant ``acme``."""

import pytest

from actors.store.sql.store import MemoryStore


@pytest.fixture
def store(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    yield store
    store.dispose()
