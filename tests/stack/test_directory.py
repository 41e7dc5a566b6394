"""The actor directory on a real Ray: race-free activation, LRU and idle passivation, retry after a
passivated or crashed actor without applying a write twice.

The user actors here run the real ``UserActor`` shell over a tiny counter service that keeps its state in
a JSON file per user, standing in for SQL: so state surviving passivation is observable, and the gate is
not needed.
"""

import asyncio
import json
import os
import sys
import time
import uuid
from functools import partial
from pathlib import Path

import pytest
import ray
import ray.cloudpickle
from actors.directory import call_user, directory_actor, user_actor_name
from actors.user_actor import HostedService

from schemas.settings import HermesSettings

pytestmark = [pytest.mark.stack, pytest.mark.slow]

# the workers import this module by value: tests/ is not an installed package
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class CounterService:
    """Counts writes per user in a file; records applied request ids like the real service does in SQL."""

    def __init__(self, path: Path):
        self._path = path

    def _load(self) -> dict:
        return json.loads(self._path.read_text()) if self._path.exists() else {"count": 0, "applied": {}}

    def write_turns(self, *, request_id: str, crash_after_commit: bool = False) -> int:
        state = self._load()
        if request_id in state["applied"]:
            return state["applied"][request_id]
        state["count"] += 1
        state["applied"][request_id] = state["count"]
        self._path.write_text(json.dumps(state))
        if crash_after_commit and not (self._path.parent / "crashed").exists():
            (self._path.parent / "crashed").touch()
            os._exit(1)  # the write is durable, the reply is lost: the caller must retry safely
        return state["count"]

    def profile(self) -> int:
        return self._load()["count"]

    def recall(self) -> int:
        """The trace the call runs in, as the actor sees it."""
        from opentelemetry import trace

        return trace.get_current_span().get_span_context().trace_id


def counter_factory(state_dir: str, tenant_id: str, user_id: str, settings: HermesSettings) -> HostedService:
    return HostedService(
        service=CounterService(Path(state_dir) / f"{tenant_id}.{user_id}.json"), close=lambda: None
    )


def failing_once_factory(
    state_dir: str, tenant_id: str, user_id: str, settings: HermesSettings
) -> HostedService:
    flag = Path(state_dir) / f"failed-once.{user_id}"
    if not flag.exists():
        flag.touch()
        raise RuntimeError("SQL not reachable yet")
    return counter_factory(state_dir, tenant_id, user_id, settings)


@pytest.fixture
def make_directory(ray_session, tmp_path):
    created = []

    def make(factory=counter_factory, **overrides):
        settings = HermesSettings(namespace=f"dir-{uuid.uuid4().hex[:8]}", **overrides)
        handle = directory_actor(settings, partial(factory, str(tmp_path)))
        created.append(handle)
        return settings, handle

    yield make
    for handle in created:
        ray.get(handle.passivate_all.remote())
        ray.kill(handle)


def write(directory, user_id: str, **kwargs) -> int:
    kwargs.setdefault("request_id", uuid.uuid4().hex)
    return asyncio.run(call_user(directory, "acme", user_id, "write_turns", **kwargs))


def eventually(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def passivations(directory) -> int:
    return ray.get(directory.stats.remote()).passivations


def actor_alive(settings: HermesSettings, user_id: str) -> bool:
    try:
        ray.get_actor(user_actor_name("acme", user_id), namespace=settings.namespace)
    except ValueError:
        return False
    return True


def test_lru_passivation_keeps_the_cap_and_state_survives(make_directory):
    settings, directory = make_directory(max_live_actors=3, actor_idle_seconds=3600)
    users = [f"u{i}" for i in range(6)]
    for user in users:
        assert write(directory, user) == 1
    stats = ray.get(directory.stats.remote())
    assert (stats.live, stats.activations) == (3, 6)
    assert eventually(lambda: passivations(directory) == 3)
    assert [actor_alive(settings, user) for user in users] == [False] * 3 + [True] * 3

    # the least recently used goes first: touch u3, then activate u0 again → u4 is passivated
    write(directory, "u3")
    assert write(directory, "u0") == 2  # reactivated; its count was kept outside the actor
    assert eventually(lambda: passivations(directory) == 4)
    assert not actor_alive(settings, "u4") and actor_alive(settings, "u3")
    latency = ray.get(directory.stats.remote()).activation_latency
    print(f"activation latency over {latency.samples}: p50={latency.p50_ms} ms p95={latency.p95_ms} ms")
    assert latency.samples == 7 and latency.p50_ms > 0


def test_concurrent_first_calls_share_one_activation_and_run_in_order(make_directory):
    _, directory = make_directory(max_live_actors=3)

    async def burst():
        return await asyncio.gather(
            *(call_user(directory, "acme", "u1", "write_turns", request_id=f"r{i}") for i in range(8))
        )

    assert sorted(asyncio.run(burst())) == list(range(1, 9))
    assert ray.get(directory.stats.remote()).activations == 1

    handle, _ = ray.get(directory.get.remote("acme", "u1"))
    refs = [handle.call.remote("write_turns", request_id=f"ordered{i}") for i in range(20)]
    assert ray.get(refs) == list(range(9, 29))  # one caller's calls run in submission order


def test_idle_actors_are_passivated_by_the_sweep(make_directory):
    settings, directory = make_directory(max_live_actors=8, actor_idle_seconds=0.3)
    write(directory, "idle")
    assert eventually(lambda: passivations(directory) == 1)
    stats = ray.get(directory.stats.remote())
    assert (stats.live, stats.idle_passivations) == (0, 1)
    assert not actor_alive(settings, "idle")
    assert write(directory, "idle") == 2


def test_call_queued_behind_passivate_is_retried_once(make_directory):
    _, directory = make_directory(max_live_actors=3)
    write(directory, "u1")
    handle, _ = ray.get(directory.get.remote("acme", "u1"))
    # passivation slips in behind the directory's back: the next call fails, is retried on a new actor
    handle.passivate.remote()
    assert write(directory, "u1", request_id="after-passivate") == 2
    assert ray.get(directory.stats.remote()).activations == 2


def test_crash_after_commit_is_retried_without_applying_twice(make_directory):
    _, directory = make_directory(max_live_actors=3)
    assert write(directory, "u1") == 1
    assert write(directory, "u1", request_id="req-crash", crash_after_commit=True) == 2
    assert asyncio.run(call_user(directory, "acme", "u1", "profile")) == 2


def test_unknown_operations_are_refused(make_directory):
    from actors.errors import InvalidInput

    _, directory = make_directory()
    with pytest.raises(InvalidInput, match="unknown operation"):
        asyncio.run(call_user(directory, "acme", "u1", "__init__"))


def test_user_actor_shell_stays_lean(make_directory):
    _, directory = make_directory()
    handle, _ = ray.get(directory.get.remote("acme", "lean"))
    assert ray.get(handle.status.remote())["heavy_modules"] == []


def test_trace_context_travels_with_the_call(make_directory):
    from opentelemetry.sdk.trace import TracerProvider

    _, directory = make_directory()
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("http request") as request_span:
        seen = asyncio.run(call_user(directory, "acme", "traced", "recall"))
    assert seen == request_span.get_span_context().trace_id != 0


def test_failed_start_is_unavailable_then_recovers(make_directory):
    from actors.errors import StoreUnavailable

    _, directory = make_directory(factory=failing_once_factory)
    with pytest.raises(StoreUnavailable, match="failed to start"):
        write(directory, "flaky")
    assert write(directory, "flaky") == 1  # the dead actor's name was released: a fresh start works
