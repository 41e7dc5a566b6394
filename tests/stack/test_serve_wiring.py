"""The Serve wiring on a real Ray Serve: HTTP routes and deployment-handle methods reach the user's actor
through the directory, per tenant, with errors mapped and retries across passivation.

The user actors run a scripted service (state in a JSON file per tenant+user) so this test depends only on
the Ray/Serve layer and the SQL store (API keys), not on the gate, the embedder or Milvus; the full stack is
exercised by the end-to-end API tests.
"""

import json
import sys
import uuid
from functools import partial
from pathlib import Path

import httpx
import pytest
import ray
import ray.cloudpickle
from actors.directory import directory_actor
from actors.user_actor import HostedService

from actors.errors import NotFound
from schemas.api import MemoryList, RecallResponse, WriteOutcome, WriteResult, WriteTurnsRequest
from schemas.enums import Layer, State
from schemas.ids import new_memory_id
from schemas.settings import HermesSettings
from tests.conftest import free_port

pytestmark = [pytest.mark.stack, pytest.mark.slow]

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
APP_NAME = "hermes-wiring"
PREFIX = "/wiring"


class ScriptedService:
    """Counts turns per (tenant, user) in a file; remembers applied request ids like the real service."""

    def __init__(self, path: Path, user_id: str):
        self._path = path
        self._user_id = user_id

    def _load(self) -> dict:
        return json.loads(self._path.read_text()) if self._path.exists() else {"turns": 0, "applied": {}}

    def write_turns(self, req: WriteTurnsRequest, request_id: str | None = None) -> WriteResult:
        state = self._load()
        if request_id in state["applied"]:
            return WriteResult.model_validate(state["applied"][request_id])
        state["turns"] += len(req.turns)
        outcomes = [
            WriteOutcome(
                memory_id=new_memory_id(), action="created", state=State.PENDING, layer=Layer.WORKING
            )
            for _ in req.turns
        ]
        result = WriteResult(user_id=self._user_id, outcomes=outcomes, alerts=[], ignored_turns=0)
        state["applied"][request_id] = result.model_dump(mode="json")
        self._path.write_text(json.dumps(state))
        return result

    def list_items(self, layer=None, state=None, limit=100, offset=0) -> MemoryList:
        return MemoryList(items=[], total=self._load()["turns"])

    def recall(self, req) -> RecallResponse:
        if req.query == "missing":
            raise NotFound("no such memory in this scope")
        return RecallResponse(query=req.query, hits=[])


def scripted_factory(state_dir: str, tenant_id: str, user_id: str, settings: HermesSettings) -> HostedService:
    path = Path(state_dir) / f"{tenant_id}.{user_id}.json"
    return HostedService(service=ScriptedService(path, user_id), close=lambda: None)


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
    """The HermesMemory deployment over a directory whose actors run the scripted service."""
    from ray import serve

    from actors.store.sql import MemoryStore
    from serve.app import HermesMemory

    home = tmp_path_factory.mktemp("wiring")
    settings = HermesSettings(
        home=home,
        sql_url=f"sqlite:///{home / 'hermes.db'}",
        namespace=f"wiring-{uuid.uuid4().hex[:8]}",
        max_live_actors=1,  # every switch of user passivates the other: retries happen all the time
        admin_key="wiring-admin",
    )
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    keys = {tenant: store.create_tenant(tenant) for tenant in ("acme", "globex")}
    directory = directory_actor(settings, partial(scripted_factory, str(home)))
    handle = serve.run(HermesMemory.bind(settings.model_dump_json()), name=APP_NAME, route_prefix=PREFIX)
    with httpx.Client(base_url=f"http://127.0.0.1:{serve_port}{PREFIX}", timeout=60) as http:
        yield http, handle, keys, directory
    serve.delete(APP_NAME)
    ray.get(directory.passivate_all.remote())
    ray.kill(directory)
    store.dispose()


def turns(n: int = 1) -> dict:
    return {"session_id": "s1", "turns": [{"text": f"turn {i}", "dialog_id": f"d{i}"} for i in range(n)]}


def total(http, key: str, user: str) -> int:
    response = http.get(f"/v1/users/{user}/memories", headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()["total"]


def test_http_writes_are_scoped_per_tenant_and_survive_passivation(wiring):
    http, _, keys, directory = wiring
    for _ in range(3):  # alternating users and tenants with one live actor: constant passivation
        for tenant, n in (("acme", 2), ("globex", 1)):
            response = http.post("/v1/users/u1/turns", json=turns(n), headers={"X-API-Key": keys[tenant]})
            assert response.status_code == 200, response.text
            assert len(response.json()["outcomes"]) == n
    assert (total(http, keys["acme"], "u1"), total(http, keys["globex"], "u1")) == (6, 3)
    stats = http.get("/v1/stats", headers={"X-API-Key": keys["acme"]}).json()
    assert stats["max_live"] == 1 and stats["live"] <= 1 and stats["passivations"] >= 6
    print(f"activation latency through Serve: {stats['activation_latency']}")


def test_idempotency_key_applies_a_write_once(wiring):
    http, _, keys, _ = wiring
    headers = {"X-API-Key": keys["acme"], "Idempotency-Key": f"k-{uuid.uuid4().hex}"}
    before = total(http, keys["acme"], "idem")
    first = http.post("/v1/users/idem/turns", json=turns(2), headers=headers).json()
    second = http.post("/v1/users/idem/turns", json=turns(2), headers=headers).json()
    assert first == second and total(http, keys["acme"], "idem") == before + 2


def test_errors_cross_ray_and_map_to_http(wiring):
    http, _, keys, _ = wiring
    missing = http.post("/v1/users/u1/recall", json={"query": "missing"}, headers={"X-API-Key": keys["acme"]})
    assert missing.status_code == 404 and missing.json() == {
        "error": "not_found",
        "detail": "no such memory in this scope",
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
    result = handle.write_turns.remote(
        keys["globex"], "py-agent", WriteTurnsRequest.model_validate(turns(3))
    ).result()
    assert isinstance(result, WriteResult) and len(result.outcomes) == 3
    assert total(http, keys["globex"], "py-agent") == before + 3  # same actor, same state, either door
    with pytest.raises(NotFound):
        handle.recall.remote(keys["globex"], "py-agent", {"query": "missing"}).result()
    with pytest.raises(Exception, match="invalid API key"):
        handle.recall.remote("hm_globex_wrong", "py-agent", {"query": "q"}).result()


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
    assert http.post("/v1/users/u9/turns", json=turns(), headers={"X-API-Key": key}).status_code == 200
