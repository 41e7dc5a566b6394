"""The standalone server's session TTL: 30 s unless set, any whole number of seconds from 1, and a setting
that is not one refuses to start with a message naming the variable (not a server that dies later)."""

import pytest

from localstack.milvus import DEFAULT_SESSION_TTL_S, SESSION_TTL_ENV, session_ttl
from schemas.errors import StoreUnavailable


def test_the_default_outlives_a_loaded_machines_missed_keepalives(monkeypatch):
    monkeypatch.delenv(SESSION_TTL_ENV, raising=False)
    assert session_ttl() == DEFAULT_SESSION_TTL_S == 30


@pytest.mark.parametrize("raw", ["1", "10", "120"])
def test_a_whole_number_of_seconds_is_taken(monkeypatch, raw):
    monkeypatch.setenv(SESSION_TTL_ENV, raw)
    assert session_ttl() == int(raw)


@pytest.mark.parametrize("raw", ["0", "-5", "ten", "1.5", ""])
def test_anything_else_is_refused_with_the_variables_name(monkeypatch, raw):
    monkeypatch.setenv(SESSION_TTL_ENV, raw)
    with pytest.raises(StoreUnavailable, match=SESSION_TTL_ENV):
        session_ttl()
