"""The Hermes Agent provider's pure parts: which memory user a conversation is, ids made safe, and where its
settings come from. (The provider itself runs in Hermes Agent's environment: tests/stack.)"""

import json
import re

from schemas.ids import USER_ID_PATTERN
from sdk.hermes_memory_provider.config import CONFIG_FILE, ProviderSettings, memory_user_id, safe_id


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
