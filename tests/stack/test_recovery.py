"""The service comes back by itself (issue 35): on a stack started as a user starts it (``hermes-memory up
--detach``: its own Ray, Serve with direct ingress, milvus-lite, SQLite), the ingress replica is killed, then
a user's host, each with SIGKILL; after each, writes and recalls are sent until they answer 200 again,
within a generous bound (the stack is built to recover within seconds; before this issue an ingress crash
cost 160 s). Meanwhile a call may find the port closed or get a 503 with ``Retry-After``, never a bare 500
or a 503 without one. At the end every acknowledged write is in SQL once.

Only this stack's processes are killed, by pid, found through its own Ray cluster
(``tests.stack.stack_processes``).
"""

import asyncio
import os
import signal
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from actors.runtime.host import host_name
from actors.runtime.rendezvous import host_of
from tests.conftest import free_port
from tests.stack.stack_processes import stack_processes
from tests.stack.test_cli import run_cli
from tests.stack.trust_stack import duplicated_dialogs, fact_text

pytestmark = [pytest.mark.stack, pytest.mark.slow]

#: seconds allowed for the service to answer again after a kill: far above what it takes, below main's 160 s
RECOVERY_BOUND_S = 120.0
#: a call still unanswered after this is a hang (the router gives up on a dead host after 60 s with a 503)
CALL_TIMEOUT_S = 90.0
TENANT = "demo"
USERS = ["ua", "ub", "uc", "ud"]
#: what a call may meet while a process is down: the port closed for a moment, or a 503 saying when to retry
EXPLAINED = {"503 with Retry-After", "ConnectError", "ReadError", "RemoteProtocolError"}


def outcome(response: httpx.Response) -> str:
    if response.status_code == 503 and "retry-after" in response.headers:
        return "503 with Retry-After"
    return f"{response.status_code} {response.text[:200]}"


async def until_answered(
    client: httpx.AsyncClient, path: str, body: dict, headers: dict, deadline: float, met: Counter
) -> httpx.Response:
    """POST (resent as it is, same headers) until a 200 or the deadline; what else it met goes to ``met``."""
    while True:
        try:
            response = await client.post(path, json=body, headers=headers)
            if response.status_code == 200:
                return response
            met[outcome(response)] += 1
        except httpx.TransportError as exc:
            met[type(exc).__name__] += 1
        assert time.monotonic() < deadline, f"no 200 within {RECOVERY_BOUND_S:.0f} s; met {dict(met)}"
        await asyncio.sleep(0.2)


Acks = dict[tuple[str, str], list[str]]  # (user, dialog id) → the memory ids its write was answered with


async def write_and_recall(base_url: str, key: str, n: int, acks: Acks) -> Counter:
    """Turn ``n`` of every user written (one Idempotency-Key per write, kept across resends) and a recall of
    each, all answered 200 within the bound; returns the other outcomes met."""
    met: Counter = Counter()
    deadline = time.monotonic() + RECOVERY_BOUND_S
    async with httpx.AsyncClient(base_url=base_url, timeout=CALL_TIMEOUT_S) as client:
        for user in USERS:
            body = {"session_id": "s1", "turns": [{"text": fact_text(n), "dialog_id": f"d{n}"}]}
            headers = {"X-API-Key": key, "Idempotency-Key": f"{user}-w{n}"}
            written = await until_answered(client, f"/v1/users/{user}/turns", body, headers, deadline, met)
            acks[(user, f"d{n}")] = [o["memory_id"] for o in written.json()["outcomes"]]
            query = {"query": f"which locker {n}?"}
            await until_answered(client, f"/v1/users/{user}/recall", query, {"X-API-Key": key}, deadline, met)
    return met


def kill_one(home: Path, role: str, name: str | None = None) -> int:
    [victim] = [p for p in stack_processes(home) if p.role == role and (name is None or p.name == name)]
    os.kill(victim.pid, signal.SIGKILL)
    return victim.pid


def unexplained(met: Counter) -> dict[str, int]:
    return {what: count for what, count in met.items() if what not in EXPLAINED}


def test_writes_and_recalls_answer_again_after_the_ingress_and_a_user_host_are_killed(tmp_path):
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    started = run_cli("up", "--detach", "--port", str(port), "--timeout", "240", home=tmp_path, timeout=300)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        key = (tmp_path / "demo.key").read_text().strip()
        acks: Acks = {}
        assert unexplained(asyncio.run(write_and_recall(base_url, key, 0, acks))) == {}

        kill_one(tmp_path, "ingress")
        after_ingress = asyncio.run(write_and_recall(base_url, key, 1, acks))
        assert unexplained(after_ingress) == {}

        hosts = len([p for p in stack_processes(tmp_path) if p.role == "user_host"])
        killed = kill_one(tmp_path, "user_host", host_name(host_of(TENANT, USERS[0], hosts)))
        after_host = asyncio.run(write_and_recall(base_url, key, 2, acks))
        assert unexplained(after_host) == {}
        assert killed not in {p.pid for p in stack_processes(tmp_path)}  # the host was restarted, not spared

        assert_acknowledged_once(tmp_path, acks)
    finally:
        run_cli("down", home=tmp_path)


def assert_acknowledged_once(home: Path, acks: Acks) -> None:
    from actors.store.sql.store import MemoryStore
    from schemas.settings import HermesSettings

    store = MemoryStore.from_settings(HermesSettings(home=home))
    try:
        for user in USERS:
            stored = {item.memory_id: item for item in store.memories.page(TENANT, user, limit=10_000)}
            for (owner, dialog_id), memory_ids in acks.items():
                if owner != user:
                    continue
                assert memory_ids, f"{user}/{dialog_id} acknowledged without a memory"
                for memory_id in memory_ids:
                    assert memory_id in stored, f"{user}/{dialog_id}: {memory_id} acknowledged, not in SQL"
                    assert dialog_id in stored[memory_id].source_dialog_ids
            assert duplicated_dialogs(store, TENANT, user) == []
    finally:
        store.dispose()
