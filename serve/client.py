"""A small Python client for the Hermes Memory HTTP API, synchronous (``HermesClient``) and asynchronous
(``AsyncHermesClient``), over httpx. Method names and arguments mirror the deployment-handle methods of
``serve.app.HermesMemory``, minus the API key, which the client sends as ``X-API-Key``:

    with HermesClient("http://127.0.0.1:8000", api_key) as hermes:
        hermes.write_turns("u1", {"session_id": "s1", "turns": [{"text": "I'm allergic to peanuts",
                                                                  "dialog_id": "d1"}]})
        hits = hermes.recall("u1", {"query": "what should I avoid cooking?"}).hits

    async with AsyncHermesClient(url, api_key) as hermes:
        context = await hermes.start_session("u1", {"session_id": "s2"})

Every operation is written once (``_Operations``) as a request description; the two clients differ only in
how they send it, so on ``AsyncHermesClient`` each method returns an awaitable of the annotated type.
Errors: any non-2xx answer raises ``HermesHTTPError`` carrying the status and the server's ``ErrorBody``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ValidationError

from schemas.api import (
    AlertList,
    ConfirmRequest,
    CreateTenantRequest,
    DirectoryStats,
    EraseResult,
    ErrorBody,
    ForgetResult,
    FreezeRequest,
    MemoryDetail,
    MemoryList,
    MemoryOut,
    RecallRequest,
    RecallResponse,
    SessionContext,
    StartSessionRequest,
    TenantCreated,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Layer, State

DEFAULT_TIMEOUT_SECONDS = 30.0


class HermesHTTPError(Exception):
    """A non-2xx answer: ``status``, the server's ``error`` name and ``detail``, and ``retry_after`` (s)."""

    def __init__(self, status: int, error: str, detail: str, retry_after: float | None = None):
        super().__init__(status, error, detail, retry_after)
        self.status = status
        self.error = error
        self.detail = detail
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"HTTP {self.status} {self.error}: {self.detail}"


@dataclass(frozen=True, slots=True)
class _Call:
    method: str
    path: str
    response: type[BaseModel] | None  # None: plain JSON
    body: BaseModel | dict | None = None
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"params": {k: v for k, v in self.params.items() if v is not None}}
        if self.headers:
            kwargs["headers"] = self.headers
        if isinstance(self.body, BaseModel):
            kwargs["json"] = self.body.model_dump(mode="json", exclude_none=True)
        elif self.body is not None:
            kwargs["json"] = self.body
        return kwargs


def _decoded(call: _Call, response: httpx.Response) -> Any:
    if response.is_error:
        raise _error_from(response)
    if call.response is None:
        return response.json()
    return call.response.model_validate_json(response.content)


def _error_from(response: httpx.Response) -> HermesHTTPError:
    retry_after = response.headers.get("Retry-After")
    try:
        body = ErrorBody.model_validate_json(response.content)
        error, detail = body.error, body.detail
    except ValidationError:  # not one of ours (a proxy in between, say)
        error, detail = "http_error", response.text[:500]
    return HermesHTTPError(response.status_code, error, detail, float(retry_after) if retry_after else None)


def _idempotency(key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": key} if key else {}


class _Operations:
    def _send(self, call: _Call) -> Any:
        raise NotImplementedError

    def _user(self, user_id: str, tail: str = "") -> str:
        return f"/v1/users/{user_id}{tail}"

    def write_turns(
        self, user_id: str, request: WriteTurnsRequest | dict, idempotency_key: str | None = None
    ) -> WriteResult:
        path = self._user(user_id, "/turns")
        return self._send(_Call("POST", path, WriteResult, request, headers=_idempotency(idempotency_key)))

    def write_memory(
        self, user_id: str, request: WriteMemoryRequest | dict, idempotency_key: str | None = None
    ) -> WriteResult:
        path = self._user(user_id, "/memories")
        return self._send(_Call("POST", path, WriteResult, request, headers=_idempotency(idempotency_key)))

    def recall(self, user_id: str, request: RecallRequest | dict) -> RecallResponse:
        return self._send(_Call("POST", self._user(user_id, "/recall"), RecallResponse, request))

    def start_session(self, user_id: str, request: StartSessionRequest | dict) -> SessionContext:
        return self._send(_Call("POST", self._user(user_id, "/sessions"), SessionContext, request))

    def list_memories(
        self,
        user_id: str,
        layer: Layer | None = None,
        state: State | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> MemoryList:
        params = {"layer": layer, "state": state, "limit": limit, "offset": offset}
        return self._send(_Call("GET", self._user(user_id, "/memories"), MemoryList, params=params))

    def get_memory(self, user_id: str, memory_id: str) -> MemoryDetail:
        return self._send(_Call("GET", self._user(user_id, f"/memories/{memory_id}"), MemoryDetail))

    def confirm(
        self, user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> MemoryOut:
        path = self._user(user_id, f"/memories/{memory_id}/confirm")
        return self._send(_Call("POST", path, MemoryOut, request))

    def freeze(self, user_id: str, memory_id: str, request: FreezeRequest | dict) -> MemoryOut:
        return self._send(
            _Call("POST", self._user(user_id, f"/memories/{memory_id}/freeze"), MemoryOut, request)
        )

    def unfreeze(self, user_id: str, memory_id: str, request: UnfreezeRequest | dict) -> MemoryOut:
        path = self._user(user_id, f"/memories/{memory_id}/unfreeze")
        return self._send(_Call("POST", path, MemoryOut, request))

    def forget(self, user_id: str, memory_id: str, reason: str = "user request") -> ForgetResult:
        path = self._user(user_id, f"/memories/{memory_id}")
        return self._send(_Call("DELETE", path, ForgetResult, params={"reason": reason}))

    def erase_user(self, user_id: str, reason: str = "user request") -> EraseResult:
        return self._send(_Call("DELETE", self._user(user_id), EraseResult, params={"reason": reason}))

    def alerts(self, user_id: str, status: Literal["open", "resolved", "all"] = "open") -> AlertList:
        return self._send(_Call("GET", self._user(user_id, "/alerts"), AlertList, params={"status": status}))

    def profile(self, user_id: str) -> UserProfile:
        return self._send(_Call("GET", self._user(user_id, "/profile"), UserProfile))

    def stats(self) -> DirectoryStats:
        return self._send(_Call("GET", "/v1/stats", DirectoryStats))

    def health(self) -> dict[str, Any]:
        return self._send(_Call("GET", "/healthz", None))

    def create_tenant(self, admin_key: str, request: CreateTenantRequest | dict) -> TenantCreated:
        headers = {"X-Admin-Key": admin_key}
        return self._send(_Call("POST", "/admin/tenants", TenantCreated, request, headers=headers))


def _client_options(base_url: str, api_key: str | None, timeout: float) -> dict[str, Any]:
    headers = {"X-API-Key": api_key} if api_key else {}
    return {"base_url": base_url, "headers": headers, "timeout": timeout}


class HermesClient(_Operations):
    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: httpx.BaseTransport | None = None,
    ):
        self._http = httpx.Client(transport=transport, **_client_options(base_url, api_key, timeout))

    def _send(self, call: _Call) -> Any:
        return _decoded(call, self._http.request(call.method, call.path, **call.request_kwargs()))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HermesClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncHermesClient(_Operations):
    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self._http = httpx.AsyncClient(transport=transport, **_client_options(base_url, api_key, timeout))

    async def _send(self, call: _Call) -> Any:
        return _decoded(call, await self._http.request(call.method, call.path, **call.request_kwargs()))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncHermesClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
