"""The Serve wiring on a real Ray Serve: HTTP routes and deployment-handle methods reach the user's host,
per tenant, with errors mapped, and a host that keeps only one user resident (every switch of user
passivates the other) answering exactly as one that keeps them all.

The app runs with the hashing embedder and SQLite only (nothing here reads the vector index), so this test
exercises the Ray/Serve layer and the host runtime; the full stack is the end-to-end API tests'.
"""

import itertools
import string
import uuid

import httpx
import pytest
import ray

from actors.app.commands import GetMemory, Recall, WriteMemory
from actors.runtime.host import POOL_ACTOR_NAME
from schemas.api import WriteMemoryRequest, WriteResult
from schemas.errors import NotFound
from schemas.settings import HermesSettings
from tests.conftest import free_port
from tests.stack.trust_stack import kill_app_actors

pytestmark = [pytest.mark.stack, pytest.mark.slow]

APP_NAME = "hermes-wiring"
PREFIX = "/wiring"


@pytest.fixture(scope="module")
def serve_port(ray_session):
    from ray import serve
    from ray.serve.context import _get_global_client

    client = _get_global_client(raise_if_no_controller_running=False)
    started_here = client is None
    if started_here:
        serve.start(http_options={"host": "127.0.0.1", "port": free_port()})
        client = _get_global_client()
    yield client.http_config.port
    if started_here:
        serve.shutdown()


@pytest.fixture(scope="module")
def wiring(serve_port, tmp_path_factory):
    """The HermesMemory app on one host that keeps a single user resident."""
    from ray import serve

    from actors.store.sql.store import MemoryStore
    from serve.app import build_app

    home = tmp_path_factory.mktemp("wiring")
    settings = HermesSettings(
        home=home,
        sql_url=f"sqlite:///{home / 'hermes.db'}",
        namespace=f"wiring-{uuid.uuid4().hex[:8]}",
        embedder="hash",
        hosts=1,
        host_max_users=1,  # every switch of user passivates the other
        admin_key="wiring-admin",
    )
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    keys = {tenant: store.tenants.create(tenant) for tenant in ("acme", "globex")}
    handle = serve.run(build_app(settings), name=APP_NAME, route_prefix=PREFIX)
    with httpx.Client(base_url=f"http://127.0.0.1:{serve_port}{PREFIX}", timeout=60) as http:
        yield http, handle, keys, settings
    serve.delete(APP_NAME)
    kill_app_actors(settings.namespace)
    store.dispose()


_NOTES = itertools.count()


def fresh_words(count: int) -> list[str]:
    """Words no other note of this module holds, so no note restates another (five random picks from 13
    words made a pair sharing four in 88 % of the six notes one user got, and a write came back
    'confirmed')."""
    return [_letters(next(_NOTES)) + "x" for _ in range(count)]


def _letters(number: int) -> str:
    return "".join(string.ascii_lowercase[int(digit)] for digit in f"{number:04d}")


def note(n: int = 0) -> dict:
    return {
        "content": f"note {' '.join(fresh_words(5))} number {n}",
        "kind": "fact",
        "session_id": "s1",
        "dialog_ids": [f"d{n}"],
        "remember": True,
    }


def write(http, key: str, user: str, n: int = 0, **headers: str) -> httpx.Response:
    return http.post(f"/v1/users/{user}/memories", json=note(n), headers={"X-API-Key": key, **headers})


def total(http, key: str, user: str) -> int:
    response = http.get(f"/v1/users/{user}/memories", headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()["total"]


def test_http_writes_are_scoped_per_tenant_and_survive_passivation(wiring):
    http, _, keys, settings = wiring
    for _ in range(3):  # alternating users and tenants with one resident user: constant passivation
        for tenant, n in (("acme", 2), ("globex", 1)):
            for i in range(n):
                response = write(http, keys[tenant], "u1", i)
                assert response.status_code == 200, response.text
                assert [o["action"] for o in response.json()["outcomes"]] == ["created"]
    assert (total(http, keys["acme"], "u1"), total(http, keys["globex"], "u1")) == (6, 3)
    stats = http.get("/v1/stats", headers={"X-API-Key": keys["acme"]}).json()
    assert stats["max_live"] == 1 and stats["live"] <= 1 and stats["passivations"] >= 6
    assert stats["hosts"] == 1
    pool = ray.get_actor(POOL_ACTOR_NAME, namespace=settings.namespace)
    assert ray.get(pool.size.remote()) == 1
    print(f"activation latency through Serve: {stats['activation_latency']}")


def test_idempotency_key_applies_a_write_once(wiring):
    http, _, keys, _ = wiring
    headers = {"X-API-Key": keys["acme"], "Idempotency-Key": f"k-{uuid.uuid4().hex}"}
    before = total(http, keys["acme"], "idem")
    body = note()
    first = http.post("/v1/users/idem/memories", json=body, headers=headers).json()
    write(http, keys["acme"], "other")  # the user is passivated in between
    second = http.post("/v1/users/idem/memories", json=body, headers=headers).json()
    assert first == second and total(http, keys["acme"], "idem") == before + 1


def test_errors_cross_ray_and_map_to_http(wiring):
    http, _, keys, _ = wiring
    missing = http.get(f"/v1/users/u1/memories/m_{'0' * 32}", headers={"X-API-Key": keys["acme"]})
    assert missing.status_code == 404 and missing.json() == {
        "error": "not_found",
        "detail": f"memory m_{'0' * 32} not found",
    }
    unauthorized = http.post(
        "/v1/users/u1/recall", json={"query": "q"}, headers={"X-API-Key": "hm_acme_nope"}
    )
    assert unauthorized.status_code == 401
    injected = http.post(
        '/v1/users/a" or user_id != "x/recall', json={"query": "q"}, headers={"X-API-Key": keys["acme"]}
    )
    assert injected.status_code == 422 and injected.json()["error"] == "invalid_request"
    too_big = http.post(
        "/v1/users/u1/turns", content=b"x" * (1024 * 1024 + 1), headers={"X-API-Key": keys["acme"]}
    )
    assert too_big.status_code == 413 and too_big.json()["error"] == "body_too_large"


def test_handle_methods_share_the_code_path(wiring):
    http, handle, keys, _ = wiring
    before = total(http, keys["globex"], "py-agent")
    write = WriteMemory(request=WriteMemoryRequest.model_validate(note(3)))
    result = handle.run.remote(keys["globex"], "py-agent", write, idempotency_key="py-3").result()
    assert isinstance(result, WriteResult) and len(result.outcomes) == 1
    assert total(http, keys["globex"], "py-agent") == before + 1  # same host, same state, either door
    again = handle.run.remote(keys["globex"], "py-agent", write, idempotency_key="py-3").result()
    assert again == result and total(http, keys["globex"], "py-agent") == before + 1  # applied once
    with pytest.raises(NotFound):
        handle.run.remote(keys["globex"], "py-agent", GetMemory(memory_id="m_" + "0" * 32)).result()
    with pytest.raises(Exception, match="invalid API key"):
        handle.run.remote("hm_globex_wrong", "py-agent", Recall(request={"query": "q"})).result()


def test_admin_creates_tenants_whose_keys_work(wiring):
    http, _, _, _ = wiring
    tenant_id = f"t_{uuid.uuid4().hex[:10]}"
    denied = http.post("/admin/tenants", json={"tenant_id": tenant_id}, headers={"X-Admin-Key": "guess"})
    assert denied.status_code == 403
    created = http.post(
        "/admin/tenants", json={"tenant_id": tenant_id}, headers={"X-Admin-Key": "wiring-admin"}
    )
    assert created.status_code == 201
    key = created.json()["api_key"]
    assert write(http, key, "u9").status_code == 200
