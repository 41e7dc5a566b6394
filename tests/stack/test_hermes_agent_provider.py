"""The Hermes Agent memory provider, driven by Hermes Agent's own ``MemoryManager`` against the real stack.

Hermes Agent pins versions the service cannot share (pydantic, cryptography, websockets, ...), so it gets
its own virtual environment: ``hermes-agent`` from PyPI plus this checkout's ``sdk`` package, exactly
what a user installs. The environment is built once and kept under ``.venv/`` (keyed by the Hermes Agent
and Python versions); each run reinstalls only the provider package. The scenarios themselves run in that
environment (``hermes_agent_driver.py``), and their JSON results are checked here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HERMES_AGENT_VERSION = "0.19.0"
DRIVER = Path(__file__).with_name("hermes_agent_driver.py")
PIP = ("-m", "pip", "install", "--quiet", "--disable-pip-version-check")


@dataclass(frozen=True)
class AgentEnv:
    python: Path
    home: Path  # HERMES_HOME with the plugin directory installed

    def run(self, scenario: str, url: str, api_key: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PYTHON"))}
        env.update(HERMES_HOME=str(self.home), HERMES_MEMORY_URL=url, HERMES_MEMORY_API_KEY=api_key)
        done = subprocess.run(
            [str(self.python), str(DRIVER), scenario],
            env=env,
            cwd=self.home,  # nothing of the repository on sys.path: the installed package is what runs
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{scenario} failed:\n{done.stderr[-4000:]}"
        if os.environ.get("HERMES_TEST_SHOW_AGENT"):  # the figures the docs quote
            print(scenario, done.stdout)
        return json.loads(done.stdout.strip().splitlines()[-1])


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), *PIP, *args], check=True, timeout=900)


@pytest.fixture(scope="session")
def hermes_agent(tmp_path_factory: pytest.TempPathFactory) -> AgentEnv:
    venv = (
        ROOT / ".venv" / f"hermes-agent-{HERMES_AGENT_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}"
    )
    python = venv / "bin" / "python"
    if not (venv / ".ready").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
        _pip(python, f"hermes-agent=={HERMES_AGENT_VERSION}", "setuptools>=69")
        (venv / ".ready").touch()
    # this checkout's provider, every run (no build isolation: setuptools is already there)
    _pip(python, "--no-deps", "--force-reinstall", "--no-build-isolation", str(ROOT / "sdk"))
    home = tmp_path_factory.mktemp("hermes-agent-home")
    installer = venv / "bin" / "hermes-memory-provider"
    subprocess.run([str(installer), "install", "--hermes-home", str(home)], check=True, timeout=60)
    return AgentEnv(python=python, home=home)


def contents(http: httpx.Client, key: str, user: str) -> list[str]:
    answer = http.get(f"/v1/users/{user}/memories", headers={"X-API-Key": key})
    answer.raise_for_status()
    return [item["content"] for item in answer.json()["items"]]


def test_two_gateway_users_never_see_each_other(hermes_agent, serve_app, tenant_key, http):
    out = hermes_agent.run("two_users", serve_app, tenant_key)
    alice, bob = out["1001"], out["1002"]
    # a turn synced in session 1 is in session 2's frozen block, and only in its own user's
    assert "peanut" in alice["block"].lower() and "berlin" not in alice["block"].lower()
    assert "berlin" in bob["block"].lower() and "peanut" not in bob["block"].lower()
    # byte-identical for the session, although session 2 wrote a turn in between
    assert alice["block"] == alice["block_again"] and bob["block"] == bob["block_again"]
    assert "berlin" not in alice["prefetch"].lower() and "peanut" not in bob["prefetch"].lower()
    assert all("Berlin" not in hit["content"] for hit in alice["recall"]["hits"])
    assert all("peanut" not in hit["content"] for hit in bob["recall"]["hits"])
    # one gateway user → one Hermes Memory user; the assistant's words are never written
    alice_memories = contents(http, tenant_key, "telegram:1001")
    assert any("peanut" in text for text in alice_memories)
    assert not any("teal" in text or "Berlin" in text for text in alice_memories)
    assert not any("teal" in text for text in contents(http, tenant_key, "telegram:1002"))


def test_prefetch_answers_within_its_budget(hermes_agent, serve_app, tenant_key):
    # HERMES_MEMORY_PREFETCH_BUDGET_MS is unset: the default budget of 800 ms applies
    out = hermes_agent.run("prefetch_budget", serve_app, tenant_key)
    # never longer than the budget plus the manager's thread hand-off, however long the recall takes
    assert max(out["seconds"]) < 0.8 + 0.3, out
    # what was ready in time is fresh; what finished late is served on the next turn
    assert all("vegetarian" in text.lower() for text in out["contexts"] if text)
    assert "vegetarian" in out["after_settling"].lower()
    # a 1 ms budget: the recall cannot be ready, and the turn does not wait for it
    assert out["starved"] == "" and out["starved_seconds"] < 0.3


def test_subagent_and_cron_contexts_do_not_write(hermes_agent, serve_app, tenant_key, http):
    out = hermes_agent.run("read_only_contexts", serve_app, tenant_key)
    for context in ("subagent", "cron"):
        assert out[context] == {
            "ok": False,
            "error": "read_only_context",
            "detail": "this agent context does not write memory",
        }
    assert contents(http, tenant_key, "profile:default") == []


def test_tools_answer_json_and_the_unfreeze_is_audited(hermes_agent, serve_app, tenant_key, http):
    out = hermes_agent.run("tools_and_mirror", serve_app, tenant_key)
    memory_id = out["memory_id"]
    assert out["remembered"]["ok"] and out["remembered"]["outcomes"][0]["action"] == "created"
    assert any(hit["memory_id"] == memory_id for hit in out["recalled"]["hits"])
    unfrozen = out["unfrozen"]
    assert unfrozen["ok"] and unfrozen["memory"]["content"] == "I live in Porto"
    assert unfrozen["memory"]["state"] == "frozen"
    unfreeze = [event for event in out["audit"] if event["action"] == "unfreeze"]
    assert unfreeze and unfreeze[0]["reason"] == "moved to Porto"
    assert unfreeze[0]["source_dialog_id"] == unfrozen["audited"]["dialog_id"]
    assert out["bad_unfreeze"]["ok"] is False and out["bad_unfreeze"]["error"] == "not_found"
    forgotten = out["forgotten"]
    assert forgotten["ok"] and forgotten["memory_id"] == memory_id and forgotten["forgotten"] is True
    assert forgotten["also_forgotten"] == [] and forgotten["detail"].startswith("forgotten everywhere")
    # the built-in memory tool's add is mirrored, its remove forgets the mirror
    assert "User prefers green tea" in out["mirrored"]
    assert "User prefers green tea" not in out["after_remove"]


def test_a_resumed_session_keeps_every_turn(hermes_agent, serve_app, tenant_key):
    memories = hermes_agent.run("resumed_session", serve_app, tenant_key)["memories"]
    assert {"I have a cat named Miso", "I have a dog named Rex"} <= {content for content, _ in memories}
    dialogs = [tuple(dialog_ids) for _, dialog_ids in memories]
    assert len(set(dialogs)) == len(dialogs)  # both were turn 1 of session s1, yet their dialogs differ


def test_unreachable_service_leaves_the_agent_working(hermes_agent):
    # nothing listens on this port: the service is down from the provider's point of view
    out = hermes_agent.run("unreachable", f"http://127.0.0.1:{free_port()}", "hm_unused_key")
    assert out["block"] == "" and out["context"] == ""
    assert out["recalled"]["ok"] is False and out["recalled"]["error"] == "unavailable"
    assert out["remembered"]["ok"] is False and out["remembered"]["error"] == "unavailable"
    assert out["available"] is False
    assert out["seconds"] < 15, out["seconds"]


def test_setup_checks_the_key_and_a_plain_script_reads_the_saved_env(hermes_agent, serve_app, tenant_key):
    out = hermes_agent.run("setup_then_plain_script", serve_app, tenant_key)
    assert any("HERMES_MEMORY_URL and HERMES_MEMORY_API_KEY not set" in w for w in out["warnings"]), out
    said = "\n".join(out["setup_output"])
    assert "not working" in said and "refused the API key" in said  # the wrong key, tried first
    assert "ok: " in said and "accepted the tenant key" in said
    assert out["env_has_key"] and out["env_mode"] == "0o600"
    assert out["recalled"]["ok"] is True
    assert any("shellfish" in hit["content"] for hit in out["recalled"]["hits"]), out["recalled"]
    assert out["entry_point"] == "hermes_memory_provider" and out["entry_point_registers"]
