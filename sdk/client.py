"""The Python client for the Hermes Memory HTTP API: synchronous (``HermesClient``) and asynchronous
(``AsyncHermesClient``), over httpx, typed with the API models of ``schemas.api``.

One method per user command of the service (``actors.app.commands``: ``Recall`` is ``recall``,
``PreviewTurns`` is ``preview_turns``), each the description of its HTTP request, plus ``create_tenant``;
the client holds the API key and sends it as ``X-API-Key``. In-cluster code runs the same command through the
Serve handle: ``client.recall("u1", req)`` is ``handle.run.remote(key, "u1", Recall(request=req))``::

    with HermesClient("http://127.0.0.1:8000", api_key) as hermes:
        hermes.write_turns("u1", {"session_id": "s1", "turns": [{"text": "I'm allergic to peanuts",
                                                                  "dialog_id": "d1"}]})
        hits = hermes.recall("u1", {"query": "what should I avoid cooking?"}).hits

    async with AsyncHermesClient(url, api_key) as hermes:
        context = await hermes.start_session("u1", {"session_id": "s2"})

Requests may be the ``schemas.api`` models or plain dicts (the server validates either way); answers are
the response models.

Retries (``RetryPolicy``; the default makes 4 attempts):

* 429 and 503 are retried on every method: the server refused before applying anything. A
  ``Retry-After`` header is honoured (never retried sooner); one longer than ``max_retry_after`` ends the
  retries at once, raising the error with ``retry_after`` set.
* A request that never reached the server (connection refused, connect timeout) is retried on every
  method. One that may have been applied (read timeout, dropped connection, another 5xx such as the 500
  Serve's proxy answers when a replica dies mid-request) is retried only where repeating it is harmless:
  reads, recall, sessions, previews, forget, and the two writes.
* Writes (``write_turns``, ``write_memory``) always carry an ``Idempotency-Key``: the caller's, else one
  the client makes; every retry of the call sends the same key, so the server applies it once.
* Between attempts: the ``Retry-After`` if given, else exponential backoff with jitter.

Exceptions — everything the client raises derives from ``HermesClientError``:

* ``HermesClientError``
    * ``HermesConnectionError``: no HTTP answer after the retries (refused, reset, DNS)
        * ``HermesTimeout``: the last attempt timed out
    * ``HermesHTTPError``: a non-2xx answer; ``status``, the server's ``error`` name and ``detail``,
      ``retry_after`` (seconds, when the server sent one)
        * ``ClientError`` (4xx): ``InvalidRequestError`` (400, 413, 422 — also raised before sending
          for a user or memory id outside its safe alphabet), ``AuthenticationError`` (401),
          ``PermissionDeniedError`` (403), ``NotFoundError`` (404), ``ConflictError`` (409: a gate
          refusal, e.g. changing a frozen fact without an unfreeze), ``RateLimitedError`` (429)
        * ``ServerError`` (5xx): ``ServiceUnavailableError`` (503)
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
import types
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from schemas.api import (
    AlertList,
    ConfirmRequest,
    CreateTenantRequest,
    DirectoryStats,
    EraseRequest,
    EraseResult,
    ErrorBody,
    ForgetRequest,
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
    TurnsPreview,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Layer, State
from schemas.ids import InvalidIdentifier, check_memory_id, check_user_id

DEFAULT_TIMEOUT_SECONDS = 30.0
AlertFilter = Literal["open", "resolved", "all"]
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
P = ParamSpec("P")

# ------------------------------------------------------------------------------------------- errors


class HermesClientError(Exception):
    """Base of every exception the client raises."""


class HermesConnectionError(HermesClientError):
    """No HTTP answer after the retries: the service is unreachable or dropped the connection."""


class HermesTimeout(HermesConnectionError):
    """The last attempt timed out."""


class HermesHTTPError(HermesClientError):
    """A non-2xx answer: ``status``, the server's ``error`` name and ``detail``, and ``retry_after`` (s)."""

    def __init__(self, status: int, error: str, detail: str, retry_after: float | None = None):
        super().__init__(status, error, detail, retry_after)
        self.status = status
        self.error = error
        self.detail = detail
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"HTTP {self.status} {self.error}: {self.detail}"


class ClientError(HermesHTTPError):
    """4xx: the request was refused as sent."""


class InvalidRequestError(ClientError):
    """400 / 413 / 422: a malformed body, an oversized body, or an id outside its alphabet."""


class AuthenticationError(ClientError):
    """401: a missing or unknown API key."""


class PermissionDeniedError(ClientError):
    """403: the key is valid but not allowed to do this (e.g. a wrong admin key)."""


class NotFoundError(ClientError):
    """404: no such memory (or route)."""


class ConflictError(ClientError):
    """409: a gate refused the change (a frozen fact, a capacity) or a concurrent change won."""


class RateLimitedError(ClientError):
    """429: the tenant's quota; ``retry_after`` says when to come back."""


class ServerError(HermesHTTPError):
    """5xx: the service failed."""


class ServiceUnavailableError(ServerError):
    """503: a store or the user's actor is briefly unavailable; ``retry_after`` says when to come back."""


_ERRORS_BY_STATUS: dict[int, type[HermesHTTPError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
    422: InvalidRequestError,
    429: RateLimitedError,
    503: ServiceUnavailableError,
}


def error_from(response: httpx.Response) -> HermesHTTPError:
    """The typed exception for a non-2xx answer (``ErrorBody`` when the server sent one)."""
    retry_after = _retry_after(response)
    try:
        body = ErrorBody.model_validate_json(response.content)
        error, detail = body.error, body.detail
    except ValidationError:  # not one of ours (a proxy in between, say)
        error, detail = "http_error", response.text[:500]
    status = response.status_code
    kind = _ERRORS_BY_STATUS.get(status) or (ServerError if status >= 500 else ClientError)
    return kind(status, error, detail, retry_after)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:  # absent, or an HTTP date (the service never sends one)
        return None


# ------------------------------------------------------------------------------------------ retries


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts a call gets and how long to wait between them (see the module docstring)."""

    attempts: int = 4
    backoff_seconds: float = 0.2
    max_backoff_seconds: float = 5.0
    #: a Retry-After above this is not waited for: the error is raised at once
    max_retry_after: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            return retry_after
        ceiling = min(self.max_backoff_seconds, self.backoff_seconds * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)


NO_RETRIES = RetryPolicy(attempts=1)
_RETRY_STATUSES = frozenset({429, 503})


def _model(model: type[M]) -> Callable[[httpx.Response], M]:
    return lambda response: model.model_validate_json(response.content)


def _json(response: httpx.Response) -> dict[str, Any]:
    return dict(response.json())


@dataclass(frozen=True, slots=True)
class _Call(Generic[T]):
    """One HTTP request and how its answer is read."""

    method: str
    path: str
    decode: Callable[[httpx.Response], T]
    body: BaseModel | dict | None = None
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    #: repeating it after an unknown outcome (read timeout, dropped connection) is harmless
    idempotent: bool = True

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"params": {k: v for k, v in self.params.items() if v is not None}}
        if self.headers:
            kwargs["headers"] = self.headers
        if isinstance(self.body, BaseModel):
            kwargs["json"] = self.body.model_dump(mode="json", exclude_none=True, exclude_unset=True)
        elif self.body is not None:
            kwargs["json"] = self.body
        return kwargs


def _next_step(
    policy: RetryPolicy, call: _Call[Any], attempt: int, outcome: httpx.Response | httpx.TransportError
) -> float | None:
    """Seconds to wait before trying again, or None: the outcome is final (returned or raised)."""
    if attempt >= policy.attempts:
        return None
    if isinstance(outcome, httpx.Response):
        status = outcome.status_code
        if status >= 500 and status not in _RETRY_STATUSES:  # e.g. a replica died mid-request
            return policy.delay(attempt, None) if call.idempotent else None
        if status not in _RETRY_STATUSES:
            return None
        retry_after = _retry_after(outcome)
        if retry_after is not None and retry_after > policy.max_retry_after:
            return None
        return policy.delay(attempt, retry_after)
    never_sent = isinstance(outcome, httpx.ConnectError | httpx.ConnectTimeout)
    return policy.delay(attempt, None) if never_sent or call.idempotent else None


def _final(call: _Call[T], outcome: httpx.Response | httpx.TransportError) -> T:
    if isinstance(outcome, httpx.TimeoutException):
        raise HermesTimeout(f"{call.method} {call.path}: timed out ({outcome})") from outcome
    if isinstance(outcome, httpx.TransportError):
        raise HermesConnectionError(f"{call.method} {call.path}: {outcome!r}") from outcome
    if outcome.is_error:
        raise error_from(outcome)
    return call.decode(outcome)


# --------------------------------------------------------------------------------------- operations


def _segment(check: Callable[[object], str], value: str) -> str:
    """A validated, escaped path segment: an id outside its alphabet never builds another route's URL."""
    try:
        return quote(check(value), safe="")
    except InvalidIdentifier as exc:
        raise InvalidRequestError(422, "invalid_identifier", str(exc)) from None


def _user(user_id: str, tail: str = "") -> str:
    return f"/v1/users/{_segment(check_user_id, user_id)}{tail}"


def _memory(user_id: str, memory_id: str, tail: str = "") -> str:
    return _user(user_id, f"/memories/{_segment(check_memory_id, memory_id)}{tail}")


def _reason(request: ForgetRequest | EraseRequest | dict | None) -> dict[str, Any]:
    if request is None:
        return {}
    reason = request.get("reason") if isinstance(request, dict) else request.reason
    return {"reason": reason}


def _write(path: str, response: type[M], body: BaseModel | dict, key: str | None) -> _Call[M]:
    # one key for every attempt of this call: a retried write is applied once
    headers = {"Idempotency-Key": key or uuid.uuid4().hex}
    return _Call("POST", path, _model(response), body, headers=headers)


class _Operation(Generic[P, T]):
    """One operation, written once as the description of its HTTP request (``_Call[T]``). On a client it
    is a method that sends it: on ``HermesClient`` it answers ``T``, on ``AsyncHermesClient`` it is a
    coroutine of ``T``, and the type checker sees each as such (``HermesClient.recall(client, …)`` too)."""

    def __init__(self, describe: Callable[Concatenate[Any, P], _Call[T]]):
        self._describe = describe
        self.__doc__ = describe.__doc__

    @overload
    def __get__(
        self, client: None, owner: type[HermesClient]
    ) -> Callable[Concatenate[HermesClient, P], T]: ...
    @overload
    def __get__(
        self, client: None, owner: type[AsyncHermesClient]
    ) -> Callable[Concatenate[AsyncHermesClient, P], Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, client: HermesClient, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, client: AsyncHermesClient, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, client: HermesClient | AsyncHermesClient | None, owner: type) -> Any:
        describe = self._describe

        @functools.wraps(describe)
        def unbound(client: HermesClient | AsyncHermesClient, *args: P.args, **kwargs: P.kwargs) -> Any:
            return client._send(describe(client, *args, **kwargs))

        return unbound if client is None else types.MethodType(unbound, client)


def operation(describe: Callable[Concatenate[Any, P], _Call[T]]) -> _Operation[P, T]:
    return _Operation(describe)


class _Operations:
    """Every operation, written once as a request description (``operation``); the two clients differ only
    in ``_send``."""

    @operation
    def write_turns(
        self, user_id: str, request: WriteTurnsRequest | dict, idempotency_key: str | None = None
    ) -> _Call[WriteResult]:
        return _write(_user(user_id, "/turns"), WriteResult, request, idempotency_key)

    @operation
    def preview_turns(self, user_id: str, request: WriteTurnsRequest | dict) -> _Call[TurnsPreview]:
        """What ``write_turns`` would store, without storing anything."""
        return _Call("POST", _user(user_id, "/turns:preview"), _model(TurnsPreview), request)

    @operation
    def write_memory(
        self, user_id: str, request: WriteMemoryRequest | dict, idempotency_key: str | None = None
    ) -> _Call[WriteResult]:
        return _write(_user(user_id, "/memories"), WriteResult, request, idempotency_key)

    @operation
    def recall(self, user_id: str, request: RecallRequest | dict) -> _Call[RecallResponse]:
        return _Call("POST", _user(user_id, "/recall"), _model(RecallResponse), request)

    @operation
    def start_session(self, user_id: str, request: StartSessionRequest | dict) -> _Call[SessionContext]:
        return _Call("POST", _user(user_id, "/sessions"), _model(SessionContext), request)

    @operation
    def list_memories(
        self,
        user_id: str,
        layer: Layer | None = None,
        state: State | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> _Call[MemoryList]:
        params = {"layer": layer, "state": state, "limit": limit, "offset": offset}
        return _Call("GET", _user(user_id, "/memories"), _model(MemoryList), params=params)

    @operation
    def get_memory(self, user_id: str, memory_id: str) -> _Call[MemoryDetail]:
        return _Call("GET", _memory(user_id, memory_id), _model(MemoryDetail))

    @operation
    def confirm(
        self, user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> _Call[MemoryOut]:
        path = _memory(user_id, memory_id, "/confirm")
        return _Call("POST", path, _model(MemoryOut), request, idempotent=False)

    @operation
    def freeze(self, user_id: str, memory_id: str, request: FreezeRequest | dict) -> _Call[MemoryOut]:
        path = _memory(user_id, memory_id, "/freeze")
        return _Call("POST", path, _model(MemoryOut), request, idempotent=False)

    @operation
    def unfreeze(self, user_id: str, memory_id: str, request: UnfreezeRequest | dict) -> _Call[MemoryOut]:
        path = _memory(user_id, memory_id, "/unfreeze")
        return _Call("POST", path, _model(MemoryOut), request, idempotent=False)

    @operation
    def forget(
        self, user_id: str, memory_id: str, request: ForgetRequest | dict | None = None
    ) -> _Call[ForgetResult]:
        path = _memory(user_id, memory_id)
        return _Call("DELETE", path, _model(ForgetResult), params=_reason(request))

    @operation
    def erase_user(self, user_id: str, request: EraseRequest | dict | None = None) -> _Call[EraseResult]:
        return _Call("DELETE", _user(user_id), _model(EraseResult), params=_reason(request))

    @operation
    def alerts(self, user_id: str, status: AlertFilter = "open") -> _Call[AlertList]:
        return _Call("GET", _user(user_id, "/alerts"), _model(AlertList), params={"status": status})

    @operation
    def profile(self, user_id: str) -> _Call[UserProfile]:
        return _Call("GET", _user(user_id, "/profile"), _model(UserProfile))

    @operation
    def create_tenant(self, admin_key: str, request: CreateTenantRequest | dict) -> _Call[TenantCreated]:
        headers = {"X-Admin-Key": admin_key}
        call = _Call(
            "POST", "/admin/tenants", _model(TenantCreated), request, headers=headers, idempotent=False
        )
        return call

    # not on the handle: the directory's figures and the liveness probe
    @operation
    def stats(self) -> _Call[DirectoryStats]:
        return _Call("GET", "/v1/stats", _model(DirectoryStats))

    @operation
    def health(self) -> _Call[dict[str, Any]]:
        return _Call("GET", "/healthz", _json)


def _client_options(base_url: str, api_key: str | None, timeout: float | httpx.Timeout) -> dict[str, Any]:
    headers = {"X-API-Key": api_key} if api_key else {}
    return {"base_url": base_url, "headers": headers, "timeout": timeout}


class HermesClient(_Operations):
    """Synchronous client; ``timeout`` is per attempt (seconds or an ``httpx.Timeout``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_SECONDS,
        retry: RetryPolicy = RetryPolicy(),
        transport: httpx.BaseTransport | None = None,
    ):
        self.retry = retry
        self._http = httpx.Client(transport=transport, **_client_options(base_url, api_key, timeout))

    def _send(self, call: _Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            outcome: httpx.Response | httpx.TransportError
            try:
                outcome = self._http.request(call.method, call.path, **call.request_kwargs())
            except httpx.TransportError as exc:
                outcome = exc
            wait = _next_step(self.retry, call, attempt, outcome)
            if wait is None:
                return _final(call, outcome)
            time.sleep(wait)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HermesClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncHermesClient(_Operations):
    """Asynchronous client: the same methods, each returning an awaitable."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_SECONDS,
        retry: RetryPolicy = RetryPolicy(),
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.retry = retry
        self._http = httpx.AsyncClient(transport=transport, **_client_options(base_url, api_key, timeout))

    async def _send(self, call: _Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            outcome: httpx.Response | httpx.TransportError
            try:
                outcome = await self._http.request(call.method, call.path, **call.request_kwargs())
            except httpx.TransportError as exc:
                outcome = exc
            wait = _next_step(self.retry, call, attempt, outcome)
            if wait is None:
                return _final(call, outcome)
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncHermesClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
