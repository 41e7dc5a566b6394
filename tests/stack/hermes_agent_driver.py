"""Scenarios run INSIDE Hermes Agent's own virtual environment (hermes-agent from PyPI + the
hermes-memory-client package), driving the provider through Hermes Agent's real ``MemoryManager``, loaded
the way Hermes Agent loads it (``plugins.memory.load_memory_provider`` from ``$HERMES_HOME/plugins``).

Run as ``python hermes_agent_driver.py SCENARIO`` with ``HERMES_HOME``, ``HERMES_MEMORY_URL`` and
``HERMES_MEMORY_API_KEY`` set; prints one JSON object. Nothing from the repository is importable here: the
client comes from the installed package. ``tests/stack/test_hermes_agent_provider.py`` asserts on it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider

from sdk.client import HermesClient

TIMEOUT = 30.0


def agent(session_id: str, **identity: Any) -> MemoryManager:
    """What Hermes Agent's init does: load the configured provider, register it, initialize it."""
    manager = MemoryManager()
    provider = load_memory_provider("hermes_memory")
    assert provider is not None and provider.is_available(), "provider not discovered or not configured"
    manager.add_provider(provider)
    manager.initialize_all(session_id=session_id, agent_context="primary", **identity)
    return manager


def turn(manager: MemoryManager, user: str, assistant: str, session_id: str) -> str:
    """One conversation turn as the agent loop runs it: prefetch, (the model), sync, queue the next."""
    context = manager.prefetch_all(user, session_id=session_id)
    manager.sync_all(user, assistant, session_id=session_id)
    manager.queue_prefetch_all(user, session_id=session_id)
    return context


def settle(manager: MemoryManager) -> None:
    """Wait until the manager's worker and the provider's writer have sent everything queued."""
    assert manager.flush_pending(timeout=TIMEOUT)
    provider = manager.get_provider("hermes_memory")
    assert provider is not None and provider.flush(TIMEOUT)


def tool(manager: MemoryManager, name: str, **args: Any) -> dict[str, Any]:
    return json.loads(manager.handle_tool_call(name, args))


def client() -> HermesClient:
    return HermesClient(os.environ["HERMES_MEMORY_URL"], os.environ["HERMES_MEMORY_API_KEY"])


def two_users() -> dict[str, Any]:
    """Two gateway users on one platform: session 1 writes, session 2 sees its own user's memory only."""
    out: dict[str, Any] = {}
    said = {"1001": "I'm allergic to peanuts", "1002": "I live in Berlin"}
    for user_id, words in said.items():
        first = agent("s1", platform="telegram", user_id=user_id)
        turn(first, words, "Noted, I will keep your favourite colour teal in mind.", "s1")
        settle(first)
        first.shutdown_all()
        second = agent("s2", platform="telegram", user_id=user_id)
        block = second.build_system_prompt()
        turn(second, "Anything else I should know?", "Sure.", "s2")  # a write inside session 2
        settle(second)
        out[user_id] = {
            "block": block,
            "block_again": second.build_system_prompt(),
            "prefetch": second.prefetch_all("what should I avoid eating, and where do I live?"),
            "recall": tool(second, "hermes_memory_recall", query="peanut allergy Berlin", k=10),
        }
        second.shutdown_all()
    return out


def prefetch_budget() -> dict[str, Any]:
    """Prefetch never takes longer than its budget; a recall that finishes late is served next time;
    with a 1 ms budget nothing is ready and the turn does not wait."""
    manager = agent("s1", platform="discord", user_id="carol")
    provider = manager.get_provider("hermes_memory")
    turn(manager, "I'm vegetarian and I love hiking in the Alps", "Great.", "s1")
    settle(manager)
    assert provider.recalls_settled(TIMEOUT)
    recall_seconds = []
    with client() as http:  # the recall itself, for comparison with the budget
        for _ in range(3):
            started = time.monotonic()
            http.recall("discord:carol", {"query": "what food do I like?"})
            recall_seconds.append(time.monotonic() - started)
    seconds, contexts = [], []
    for query in ("what food do I like?", "what do I usually eat?", "which diet do I follow?"):
        started = time.monotonic()
        contexts.append(manager.prefetch_all(query, session_id="s1"))
        seconds.append(time.monotonic() - started)
    assert provider.recalls_settled(TIMEOUT)
    after_settling = manager.prefetch_all("what food do I like?", session_id="s1")
    manager.shutdown_all()
    os.environ["HERMES_MEMORY_PREFETCH_BUDGET_MS"] = "1"  # read when the provider initializes
    hurried = agent("s1", platform="discord", user_id="carol")
    started = time.monotonic()
    starved = hurried.prefetch_all("where do I go hiking?", session_id="s1")
    starved_seconds = time.monotonic() - started
    hurried.shutdown_all()
    return {
        "recall_seconds": recall_seconds,
        "seconds": seconds,
        "contexts": contexts,
        "after_settling": after_settling,
        "starved": starved,
        "starved_seconds": starved_seconds,
    }


def read_only_contexts() -> dict[str, Any]:
    """A subagent and a cron run read the user's memory but never write it."""
    out: dict[str, Any] = {}
    for context in ("subagent", "cron"):
        manager = MemoryManager()
        manager.add_provider(load_memory_provider("hermes_memory"))
        manager.initialize_all(session_id=f"{context}-1", agent_context=context, platform="cli")
        turn(manager, f"I'm a {context} and I'm allergic to shellfish", "ok", f"{context}-1")
        settle(manager)
        out[context] = tool(manager, "hermes_memory_remember", content="I drive a red car")
        manager.on_memory_write("add", "user", "User likes jazz")
        settle(manager)
        manager.shutdown_all()
    return out


def tools_and_mirror() -> dict[str, Any]:
    """remember → recall → (confirm + freeze over HTTP) → audited unfreeze → forget; built-in mirroring."""
    manager = agent("s1", platform="slack", user_id="dave")
    user = "slack:dave"
    remembered = tool(manager, "hermes_memory_remember", content="I live in Lisbon")
    memory_id = remembered["outcomes"][0]["memory_id"]
    recalled = tool(manager, "hermes_memory_recall", query="where do I live?")
    with client() as http:
        confirmed = http.confirm(user, memory_id, {"session_id": "s0", "reason": "stated before"})
        if confirmed.state != "frozen":  # a declared residence confirmed in a second session freezes by rule
            http.freeze(user, memory_id, {"reason": "home city confirmed"})
        unfrozen = tool(
            manager,
            "hermes_memory_unfreeze",
            memory_id=memory_id,
            reason="moved to Porto",
            new_content="I live in Porto",
        )
        audit = [event.model_dump(mode="json") for event in http.get_memory(user, memory_id).audit]
        bad_unfreeze = tool(manager, "hermes_memory_unfreeze", memory_id="m_" + "0" * 32, reason="nothing")
        forgotten = tool(manager, "hermes_memory_forget", memory_id=memory_id, reason="asked to forget")
        manager.on_memory_write("add", "user", "User prefers green tea")
        settle(manager)
        mirrored = [m.content for m in http.list_memories(user).items]
        manager.on_memory_write("remove", "user", "User prefers green tea")
        settle(manager)
        after_remove = [m.content for m in http.list_memories(user).items]
    manager.shutdown_all()
    return {
        "remembered": remembered,
        "recalled": recalled,
        "unfrozen": unfrozen,
        "audit": audit,
        "bad_unfreeze": bad_unfreeze,
        "forgotten": forgotten,
        "mirrored": mirrored,
        "after_remove": after_remove,
        "memory_id": memory_id,
    }


def resumed_session() -> dict[str, Any]:
    """The same session id opened twice (``/resume``): turn numbers restart, no turn is taken for a resend."""
    for words in ("I have a cat named Miso", "I have a dog named Rex"):
        manager = agent("s1", platform="telegram", user_id="ivy")
        turn(manager, words, "Nice.", "s1")
        settle(manager)
        manager.shutdown_all()
    with client() as http:
        items = http.list_memories("telegram:ivy").items
    return {"memories": [(m.content, m.source_dialog_ids) for m in items]}


def unreachable() -> dict[str, Any]:
    """The service is down: every manager call still returns promptly, and the provider says unavailable."""
    started = time.monotonic()
    manager = agent("s1", platform="telegram", user_id="erin")
    provider = manager.get_provider("hermes_memory")
    block = manager.build_system_prompt()
    context = turn(manager, "I'm allergic to peanuts", "Noted.", "s1")
    settle(manager)
    recalled = tool(manager, "hermes_memory_recall", query="allergy")
    remembered = tool(manager, "hermes_memory_remember", content="I live in Oslo")
    available = provider.is_available()
    manager.shutdown_all()
    return {
        "block": block,
        "context": context,
        "recalled": recalled,
        "remembered": remembered,
        "available": available,
        "seconds": time.monotonic() - started,
    }


def setup_then_plain_script() -> dict[str, Any]:
    """``hermes memory setup hermes_memory`` (Hermes Agent's own command) with a wrong key, then the right
    one; then a plain script, with nothing in its environment, drives ``MemoryManager`` on what setup saved
    in ``$HERMES_HOME/.env``. Also: what an unconfigured provider says, and the declared entry point."""
    import builtins
    import getpass
    import logging
    from importlib.metadata import entry_points

    from hermes_cli.memory_setup import cmd_setup_provider

    url = os.environ.pop("HERMES_MEMORY_URL")
    key = os.environ.pop("HERMES_MEMORY_API_KEY")
    home = os.environ["HERMES_HOME"]
    warnings: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: warnings.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("hermes_memory_provider").addHandler(handler)
    unconfigured = load_memory_provider("hermes_memory")
    unconfigured.initialize("s0", platform="telegram", user_id="zed")
    answers = iter([url, key[:-1] + ("0" if key[-1] != "0" else "1"), "", key])
    builtins.input = lambda prompt="": next(answers)
    getpass.getpass = lambda prompt="": next(answers)
    shown: list[str] = []
    original_print = builtins.print
    builtins.print = lambda *args, **kwargs: shown.append(" ".join(str(a) for a in args))
    try:
        cmd_setup_provider("hermes_memory")
    finally:
        builtins.print = original_print
    env_file = open(os.path.join(home, ".env"), encoding="utf-8").read()
    manager = agent("s1", platform="telegram", user_id="yara")
    turn(manager, "I'm allergic to shellfish", "Noted.", "s1")
    settle(manager)
    recalled = tool(manager, "hermes_memory_recall", query="what am I allergic to")
    manager.shutdown_all()
    points = {ep.name: ep for ep in entry_points(group="hermes_agent.memory_providers")}
    module = points["hermes_memory"].load() if "hermes_memory" in points else None
    return {
        "warnings": warnings,
        "setup_output": shown,
        "env_has_key": f"HERMES_MEMORY_API_KEY={key}" in env_file,
        "env_mode": oct(os.stat(os.path.join(home, ".env")).st_mode & 0o777),
        "recalled": recalled,
        "entry_point": points["hermes_memory"].value if module is not None else None,
        "entry_point_registers": callable(getattr(module, "register", None)),
    }


SCENARIOS = {
    f.__name__: f
    for f in (
        two_users,
        prefetch_budget,
        read_only_contexts,
        tools_and_mirror,
        resumed_session,
        unreachable,
        setup_then_plain_script,
    )
}

if __name__ == "__main__":
    print(json.dumps(SCENARIOS[sys.argv[1]](), default=str))
