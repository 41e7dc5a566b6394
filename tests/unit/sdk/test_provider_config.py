"""The Hermes Agent provider's pure parts: which memory user a conversation is, ids made safe, and where its
settings come from. (The provider itself runs in Hermes Agent's environment: tests/stack.)"""

import json
import re

import httpx
import pytest

from schemas.ids import USER_ID_PATTERN
from sdk.hermes_memory_provider.config import (
    CONFIG_FILE,
    ProviderSettings,
    check_connection,
    memory_user_id,
    read_env_file,
    safe_id,
)


def test_scope_order_is_user_then_gateway_session_then_profile():
    both = {"gateway_session_key": "agent:main:telegram:dm:7", "agent_identity": "coder"}
    assert memory_user_id(platform="telegram", user_id="7", **both) == "telegram:7"
    assert memory_user_id(platform="telegram", **both) == "agent:main:telegram:dm:7"
    assert memory_user_id(agent_identity="coder") == "profile:coder"
    assert memory_user_id() == "profile:default"
    # the same number on two platforms is two people
    assert memory_user_id(platform="discord", user_id="7") != memory_user_id(platform="telegram", user_id="7")


def test_safe_ids_fit_the_service_alphabet_and_long_ones_stay_distinct():
    pattern = re.compile(USER_ID_PATTERN)
    for raw in ("ünïcode user", "/../admin", "a" * 300, "_leading", "x y\nz"):
        assert pattern.fullmatch(safe_id(raw)), raw
    assert safe_id("a" * 200 + "1") != safe_id("a" * 200 + "2")


def test_environment_overrides_the_file_and_the_key_is_never_written(tmp_path, monkeypatch):
    (tmp_path / CONFIG_FILE).write_text(json.dumps({"url": "http://file:1", "prefetch_budget_ms": 500}))
    monkeypatch.setenv("HERMES_MEMORY_URL", "http://env:2")
    monkeypatch.setenv("HERMES_MEMORY_API_KEY", "hm_t_secret")
    settings = ProviderSettings.load(tmp_path)
    assert (settings.url, settings.api_key, settings.prefetch_budget_ms) == (
        "http://env:2",
        "hm_t_secret",
        500,
    )
    ProviderSettings.save(
        {"url": "http://x:3", "api_key": "hm_t_secret", "prefetch_budget_ms": "900"}, str(tmp_path)
    )
    stored = json.loads((tmp_path / CONFIG_FILE).read_text())
    assert stored == {"url": "http://x:3", "prefetch_budget_ms": 900}
    monkeypatch.delenv("HERMES_MEMORY_API_KEY")
    assert not ProviderSettings.load(tmp_path).configured


def test_the_env_file_of_hermes_home_is_read_and_the_environment_wins(tmp_path, monkeypatch):
    for name in ("HERMES_MEMORY_URL", "HERMES_MEMORY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text(
        "# Hermes Agent's secrets\n"
        "OPENAI_API_KEY=sk-other\n"
        "export HERMES_MEMORY_URL='http://dotenv:8000'\n"
        'HERMES_MEMORY_API_KEY="hm_t_fromfile"\n'
        "HERMES_MEMORY_TIMEOUT=2.5 # seconds\n"
        "not a setting\n"
    )
    settings = ProviderSettings.load(tmp_path)
    assert (settings.url, settings.api_key, settings.timeout) == ("http://dotenv:8000", "hm_t_fromfile", 2.5)
    assert settings.configured and settings.missing() == []
    monkeypatch.setenv("HERMES_MEMORY_URL", "http://env:1")
    assert ProviderSettings.load(tmp_path).url == "http://env:1"
    assert read_env_file(tmp_path / "absent") == {}


def test_the_missing_settings_are_named(tmp_path, monkeypatch):
    for name in ("HERMES_MEMORY_URL", "HERMES_MEMORY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert ProviderSettings.load(tmp_path).missing() == ["HERMES_MEMORY_URL", "HERMES_MEMORY_API_KEY"]
    monkeypatch.setenv("HERMES_MEMORY_URL", "http://env:1")
    assert ProviderSettings.load(tmp_path).missing() == ["HERMES_MEMORY_API_KEY"]


def fake_service(policy_status: int, body: dict | None = None) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/healthz":
            return httpx.Response(200, json={"status": "ok"})
        assert request.headers["X-API-Key"] == "hm_t_key"
        return httpx.Response(policy_status, json=body or {})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    ("status", "body", "ok", "says"),
    [
        (200, {"tenant_id": "acme"}, True, "accepted the tenant key of 'acme'"),
        (401, {"error": "unauthorized"}, False, "refused the API key"),
        (403, {"detail": "this API key is bound to user 'alice'"}, False, "use a tenant key"),
    ],
)
def test_setup_checks_the_url_and_the_key(status, body, ok, says):
    answer = check_connection("http://svc:8000/", "hm_t_key", transport=fake_service(status, body))
    assert answer[0] is ok and says in answer[1]


def test_an_unreachable_url_is_said_so():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    ok, message = check_connection("http://nowhere:1", "hm_t_key", transport=httpx.MockTransport(refuse))
    assert not ok and message.startswith("cannot reach http://nowhere:1")


def test_setup_saves_only_a_url_and_key_that_work(tmp_path, monkeypatch):
    from sdk.hermes_memory_provider import setup

    for name in ("HERMES_MEMORY_URL", "HERMES_MEMORY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-keep\nHERMES_MEMORY_API_KEY=hm_t_old\n")
    tried = []

    def fake_check(url, api_key, timeout):
        tried.append((url, api_key))
        return api_key == "hm_t_key", "fine" if api_key == "hm_t_key" else "refused"

    monkeypatch.setattr(setup, "check_connection", fake_check)
    said = []
    urls = iter(["http://svc:8000", ""])
    keys = iter(["hm_t_wrong", "hm_t_key"])
    assert setup.run_setup(tmp_path, lambda _: next(urls), lambda _: next(keys), said.append)
    assert tried == [("http://svc:8000", "hm_t_wrong"), ("http://svc:8000", "hm_t_key")]
    assert any("not working: refused" in line for line in said)
    env = read_env_file(tmp_path / ".env")
    assert env == {
        "OPENAI_API_KEY": "sk-keep",
        "HERMES_MEMORY_API_KEY": "hm_t_key",
        "HERMES_MEMORY_URL": "http://svc:8000",
    }
    assert (tmp_path / ".env").stat().st_mode & 0o777 == 0o600
    assert "hm_t_key" not in (tmp_path / CONFIG_FILE).read_text()

    failing = tmp_path / "other"
    failing.mkdir()
    monkeypatch.setattr(setup, "check_connection", lambda *a, **k: (False, "cannot reach"))
    assert not setup.run_setup(failing, lambda _: "", lambda _: "hm_t_x", said.append)
    assert not (failing / ".env").exists() and not (failing / CONFIG_FILE).exists()
