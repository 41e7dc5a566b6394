"""The service's home variable: ``HERMES_MEMORY_HOME``, so exporting Hermes Agent's ``HERMES_HOME`` never
moves the service; the old name still works when the new one is not set, with a deprecation warning."""

import logging
from pathlib import Path

from schemas.settings import HermesSettings


def test_the_new_name_wins_and_the_old_one_still_works_with_a_warning(monkeypatch, caplog):
    monkeypatch.delenv("HERMES_MEMORY_HOME", raising=False)
    monkeypatch.delenv("HERMES_HOME", raising=False)
    assert HermesSettings().home == Path(".hermes")
    monkeypatch.setenv("HERMES_HOME", "/srv/agent-home")
    with caplog.at_level(logging.WARNING, logger="schemas.settings"):
        assert HermesSettings().home == Path("/srv/agent-home")
    assert "HERMES_HOME is deprecated" in caplog.text and "HERMES_MEMORY_HOME" in caplog.text
    caplog.clear()
    monkeypatch.setenv("HERMES_MEMORY_HOME", "/srv/memory-home")
    with caplog.at_level(logging.WARNING, logger="schemas.settings"):
        assert HermesSettings().home == Path("/srv/memory-home")  # Hermes Agent's home no longer moves it
    assert caplog.text == ""
    assert HermesSettings(home=Path("/given")).home == Path("/given")  # a constructor value beats both
