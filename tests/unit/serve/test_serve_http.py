"""The HTTP layer without Ray: routes, authentication, the one error mapping, the body limit.

The real ``Gateway`` runs with its host router replaced by a recorder, so request validation, id checks and
idempotency keys are exercised exactly as in production; only the trip to the user's host is faked.
"""

from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ray.exceptions import ActorDiedError

from actors.app.commands import (
    Alerts,
    Confirm,
    Effect,
    EraseUser,
    Forget,
    GetMemory,
    ListMemories,
    PreviewTurns,
    Profile,
    Recall,
    StartSession,
    Unfreeze,
    UserCommand,
    WriteMemory,
    WriteTurns,
)
from actors.core.tenancy import KeyGrant, TenantLimits
from schemas.api import (
    AlertList,
    MemoryList,
    ProfileSlot,
    RecallResponse,
    SessionContext,
    SlotConclusion,
    TurnsPreview,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Layer
from schemas.errors import FrozenItemError, NotFound, StoreUnavailable
from schemas.settings import HermesSettings
from serve.app import MAX_BODY_BYTES, create_fastapi_app
from serve.gateway import Gateway
from serve.routes.deps import current_gateway

KEY = "hm_acme_secret"
OTHER_KEY = "hm_other_secret"
ALICE_KEY = "hm_acme_alicesecret"
MEMORY_ID = "m_" + "a" * 32


class FakeDirectory:
    """Stands for ``actors.app.directory.TenantDirectory``: three keys, no quotas."""

    def __init__(self):
        self.grants = {
            KEY: KeyGrant("acme"),
            OTHER_KEY: KeyGrant("other"),
            ALICE_KEY: KeyGrant("acme", "alice"),
        }

    def authenticate(self, api_key: str) -> KeyGrant | None:
        return self.grants.get(api_key)

    def limits(self, tenant_id: str) -> TenantLimits:
        return TenantLimits()  # unlimited: quotas have their own tests

    def create_tenant(
        self, tenant_id: str, name: str = "", group_profile_consent: bool = False, limits=None
    ) -> str:
        key = f"hm_{tenant_id}_new"
        self.grants[key] = KeyGrant(tenant_id)
        return key


class _RecordingRouter:
    """Stands for the host router: records the command the gateway sends and answers from ``replies``."""

    def __init__(self, gateway: "RecordingGateway"):
        self.gateway = gateway

    async def run(self, tenant_id: str, user_id: str, command: UserCommand, trace_context: Any) -> Any:
        self.gateway.calls.append((tenant_id, user_id, command))
        reply = self.gateway.replies.get(type(command))
        if isinstance(reply, BaseException):
            raise reply
        return reply


class RecordingGateway(Gateway):
    """The real gateway; the trip to the user's host is recorded and answered from ``replies``."""

    def __init__(self, admin_key: str = ""):
        super().__init__(HermesSettings(admin_key=admin_key), FakeDirectory(), hosts=_RecordingRouter(self))
        self.calls: list[tuple[str, str, UserCommand]] = []
        self.replies: dict[type[UserCommand], Any] = {}


@pytest.fixture
def gateway():
    return RecordingGateway(admin_key="root-key")


@pytest.fixture
def client(gateway):
    app = create_fastapi_app()
    app.dependency_overrides[current_gateway] = lambda: gateway
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def turns(text: str = "I live in Hangzhou") -> dict:
    return {"session_id": "s1", "turns": [{"text": text, "dialog_id": "d1"}]}


def empty_write(user_id: str = "u1") -> WriteResult:
    return WriteResult(user_id=user_id, outcomes=[], alerts=[], ignored_turns=0)


def assert_error(response, status: int, error: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "detail"} and body["error"] == error
    return body


def test_write_turns_reaches_the_callers_tenant_with_a_request_id(client, gateway):
    gateway.replies[WriteTurns] = empty_write()
    response = client.post("/v1/users/u1/turns", json=turns(), headers={"X-API-Key": KEY})
    assert response.status_code == 200 and response.json()["user_id"] == "u1"
    tenant, user, command = gateway.calls[-1]
    assert (tenant, user, type(command)) == ("acme", "u1", WriteTurns)
    assert isinstance(command.request, WriteTurnsRequest) and len(command.request_id or "") == 32

    client.post("/v1/users/u1/turns", json=turns(), headers={"X-API-Key": OTHER_KEY})
    assert gateway.calls[-1][0] == "other"
    assert gateway.calls[-1][2].request_id != command.request_id  # fresh when no idempotency key


def test_a_preview_is_a_read_without_a_request_id(client, gateway):
    preview = {"user_id": "u1", "outcomes": [], "alerts": [], "ignored_turns": 1}
    gateway.replies[PreviewTurns] = TurnsPreview.model_validate(preview)
    response = client.post("/v1/users/u1/turns:preview", json=turns(), headers={"X-API-Key": KEY})
    assert response.status_code == 200 and response.json() == preview
    command = gateway.calls[-1][2]
    assert type(command) is PreviewTurns and command.request.turns[0].text == "I live in Hangzhou"
    assert PreviewTurns.effect is Effect.READS and not hasattr(command, "request_id")


def test_idempotency_key_becomes_the_request_id(client, gateway):
    gateway.replies[WriteMemory] = empty_write()
    body = {"content": "allergic to peanuts", "kind": "fact", "session_id": "s1", "dialog_ids": ["d1"]}
    headers = {"X-API-Key": KEY, "Idempotency-Key": "req-42"}
    assert client.post("/v1/users/u1/memories", json=body, headers=headers).status_code == 200
    command = gateway.calls[-1][2]
    assert type(command) is WriteMemory and isinstance(command.request, WriteMemoryRequest)
    assert command.request_id == "req-42"
    bad = client.post(
        "/v1/users/u1/memories", json=body, headers={"X-API-Key": KEY, "Idempotency-Key": "a b"}
    )
    assert_error(bad, 422, "invalid_request")


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "hm_acme_wrong"}, {"X-API-Key": "x" * 300}])
def test_missing_or_unknown_key_is_401_and_nothing_is_called(client, gateway, headers):
    assert_error(client.post("/v1/users/u1/turns", json=turns(), headers=headers), 401, "unauthorized")
    assert_error(client.get("/v1/stats", headers=headers), 401, "unauthorized")
    assert gateway.calls == []


def test_a_user_key_is_refused_every_route_beyond_its_user(client, gateway):
    spec = client.get("/openapi.json").json()
    probed = 0
    for path, methods in spec["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method in methods:
            url = path.replace("{user_id}", "bob").replace("{memory_id}", MEMORY_ID)
            url = url.replace("{alert_id}", "a_" + "b" * 32).replace("{key_id}", "k_" + "c" * 16)
            response = client.request(method.upper(), url, json={}, headers={"X-API-Key": ALICE_KEY})
            detail = assert_error(response, 403, "forbidden")["detail"]
            expected = "cannot reach another user" if "{user_id}" in path else "need a tenant key"
            expected = "importing needs a tenant key" if path.endswith("/import") else expected
            assert "bound to user 'alice'" in detail and expected in detail, (method, path, detail)
            probed += 1
    assert probed > 15 and gateway.calls == []
    gateway.replies[Recall] = RecallResponse(query="q", hits=[])
    own = client.post("/v1/users/alice/recall", json={"query": "q"}, headers={"X-API-Key": ALICE_KEY})
    assert own.status_code == 200, own.text
    assert [(tenant, user, type(command)) for tenant, user, command in gateway.calls] == [
        ("acme", "alice", Recall)
    ]


@pytest.mark.parametrize("bad_user", ['a" or tenant_id != "x', "a b", "ü", "x" * 200])
def test_bad_user_ids_in_the_path_are_422_with_a_bounded_echo(client, gateway, bad_user):
    response = client.post(f"/v1/users/{bad_user}/recall", json={"query": "q"}, headers={"X-API-Key": KEY})
    detail = assert_error(response, 422, "invalid_request")["detail"]
    assert detail.startswith("path.user_id: ") and len(detail) < 200
    assert gateway.calls == []


def test_bad_memory_id_is_422(client):
    response = client.get("/v1/users/u1/memories/m_not-hex", headers={"X-API-Key": KEY})
    assert "memory_id" in assert_error(response, 422, "invalid_request")["detail"]


def test_validation_messages_name_the_field(client):
    response = client.post("/v1/users/u1/turns", json=turns("x" * 8001), headers={"X-API-Key": KEY})
    detail = assert_error(response, 422, "invalid_request")["detail"]
    assert "body.turns.0.text" in detail and "8000" in detail
    extra = client.post(
        "/v1/users/u1/turns", json=turns() | {"tenant_id": "other"}, headers={"X-API-Key": KEY}
    )
    assert "Extra inputs" in assert_error(extra, 422, "invalid_request")["detail"]
    slot = {"content": "c", "kind": "fact", "session_id": "s", "dialog_ids": ["d"], "slot": "basic.password"}
    wrong_slot = client.post("/v1/users/u1/memories", json=slot, headers={"X-API-Key": KEY})
    assert "unknown slot" in assert_error(wrong_slot, 422, "invalid_request")["detail"]


def test_oversized_body_is_413_before_parsing(client, gateway):
    huge = b'{"session_id": "s1", "turns": [' + b" " * MAX_BODY_BYTES + b"]}"
    headers = {"X-API-Key": KEY, "Content-Type": "application/json"}
    assert_error(client.post("/v1/users/u1/turns", content=huge, headers=headers), 413, "body_too_large")

    def streamed():  # no Content-Length: the limit is enforced on the bytes as they arrive
        yield huge[: MAX_BODY_BYTES // 2]
        yield huge[MAX_BODY_BYTES // 2 :]

    assert_error(
        client.post("/v1/users/u1/turns", content=streamed(), headers=headers), 413, "body_too_large"
    )
    assert gateway.calls == []


@pytest.mark.parametrize(
    "raised, status, error",
    [
        (NotFound("memory m_x not found"), 404, "not_found"),
        (FrozenItemError("frozen: use unfreeze"), 409, "frozen_item_error"),
        (StoreUnavailable("sql down", retry_after_seconds=2.5), 503, "store_unavailable"),
        (ActorDiedError(), 503, "actor_unavailable"),
        (RuntimeError("secret internals"), 500, "internal_error"),
    ],
)
def test_errors_map_to_http_in_one_place(client, gateway, raised, status, error):
    gateway.replies[GetMemory] = raised
    response = client.get(f"/v1/users/u1/memories/{MEMORY_ID}", headers={"X-API-Key": KEY})
    body = assert_error(response, status, error)
    if isinstance(raised, StoreUnavailable):
        assert response.headers["Retry-After"] == "3"
    if status == 500:
        assert "secret internals" not in body["detail"]


def test_list_filters_and_bounds(client, gateway):
    gateway.replies[ListMemories] = MemoryList(items=[], total=0)
    ok = client.get("/v1/users/u1/memories?layer=core&limit=5&offset=10", headers={"X-API-Key": KEY})
    assert ok.status_code == 200
    assert gateway.calls[-1][2] == ListMemories(layer=Layer.CORE, state=None, limit=5, offset=10)
    for query in ("limit=0", "limit=501", "offset=-1", "layer=attic"):
        assert_error(
            client.get(f"/v1/users/u1/memories?{query}", headers={"X-API-Key": KEY}), 422, "invalid_request"
        )


def test_control_routes_pass_ids_and_bodies(client, gateway):
    headers = {"X-API-Key": KEY}
    client.post(f"/v1/users/u1/memories/{MEMORY_ID}/confirm", headers=headers)
    assert gateway.calls[-1][2] == Confirm(memory_id=MEMORY_ID)
    assert_error(
        client.post(f"/v1/users/u1/memories/{MEMORY_ID}/freeze", json={}, headers=headers),
        422,
        "invalid_request",
    )
    unfreeze = {"reason": "moved", "dialog_id": "d7", "new_value": "suzhou"}
    client.post(f"/v1/users/u1/memories/{MEMORY_ID}/unfreeze", json=unfreeze, headers=headers)
    command = gateway.calls[-1][2]
    assert isinstance(command, Unfreeze) and command.request.new_value == "suzhou"
    client.delete(f"/v1/users/u1/memories/{MEMORY_ID}?reason=wrong", headers=headers)
    command = gateway.calls[-1][2]
    assert isinstance(command, Forget) and command.request.reason == "wrong"
    client.delete("/v1/users/u1", headers=headers)
    assert gateway.calls[-1][2] == EraseUser()


def test_recall_session_alerts(client, gateway):
    headers = {"X-API-Key": KEY}
    gateway.replies[Recall] = RecallResponse(query="tea", hits=[])
    assert client.post("/v1/users/u1/recall", json={"query": "tea"}, headers=headers).json() == {
        "query": "tea",
        "hits": [],
    }
    now = datetime(2024, 1, 1, tzinfo=UTC)
    gateway.replies[StartSession] = SessionContext(
        session_id="s2", created_at=now, text="T", memory_block="M", user_block="U", sections={}
    )
    assert (
        client.post("/v1/users/u1/sessions", json={"session_id": "s2"}, headers=headers).json()["text"] == "T"
    )
    gateway.replies[Profile] = UserProfile(
        user_id="u1",
        slots=[
            ProfileSlot(
                slot="basic.allergy",
                label="allergy",
                single_valued=False,
                confidence=0.9,
                conclusions=[
                    SlotConclusion(
                        value="peanut",
                        polarity="positive",
                        confidence=0.9,
                        memory_ids=[MEMORY_ID],
                        updated_at=now,
                    )
                ],
            )
        ],
    )
    profile = client.get("/v1/users/u1/profile", headers=headers).json()
    assert profile["slots"][0]["conclusions"][0]["memory_ids"] == [MEMORY_ID]
    assert profile["slots"][0]["history"] == []
    gateway.replies[Alerts] = AlertList(alerts=[])
    client.get("/v1/users/u1/alerts", headers=headers)
    assert gateway.calls[-1][2] == Alerts(status="open")
    client.get("/v1/users/u1/alerts?status=all", headers=headers)
    assert gateway.calls[-1][2] == Alerts(status="all")


def test_admin_tenant_creation_needs_the_admin_key(client):
    body = {"tenant_id": "newco", "name": "New Co"}
    assert_error(client.post("/admin/tenants", json=body), 403, "forbidden")
    assert_error(client.post("/admin/tenants", json=body, headers={"X-Admin-Key": "nope"}), 403, "forbidden")
    created = client.post("/admin/tenants", json=body, headers={"X-Admin-Key": "root-key"})
    assert created.status_code == 201 and created.json() == {"tenant_id": "newco", "api_key": "hm_newco_new"}


def test_admin_is_disabled_without_a_configured_key():
    app = create_fastapi_app()
    app.dependency_overrides[current_gateway] = lambda: RecordingGateway(admin_key="")
    with TestClient(app) as client:
        response = client.post("/admin/tenants", json={"tenant_id": "x1"}, headers={"X-Admin-Key": ""})
    assert_error(response, 403, "forbidden")


def test_healthz_and_openapi(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    paths = client.get("/openapi.json").json()["paths"]
    assert "/v1/users/{user_id}/turns" in paths and "/admin/tenants" in paths
    assert_error(client.get("/v2/nothing"), 404, "not_found")
