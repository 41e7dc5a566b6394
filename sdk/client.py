"""The Python client for the Hermes Memory HTTP API: synchronous (``HermesClient``) and asynchronous
(``AsyncHermesClient``), over httpx, typed with the API models of ``schemas.api``.

One method per operation of the API's table (``schemas.endpoints``: ``RECALL`` is ``recall``), each the
operation's ``Call`` — every one a user command of the service (``actors.app.commands``: ``Recall``,
``PreviewTurns``), plus ``create_tenant``, ``stats`` and ``health``; ``send(call)`` sends any call. The
client holds the API key and sends it as ``X-API-Key``. In-cluster code runs the same command through the
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
import uuid
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from schemas import endpoints
from schemas.api import (
    AlertFilter,
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
from schemas.endpoints import PATH_IDS, Call
from schemas.enums import Layer, State
from schemas.ids import InvalidIdentifier

P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_TIMEOUT_SECONDS = 30.0

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


@dataclass(frozen=True, slots=True)
class _Request:
    """A ``Call`` as the HTTP request that carries it (ids checked and escaped, the write's key made)."""

    call: Call[Any]
    path: str
    kwargs: dict[str, Any]

    @classmethod
    def of(cls, call: Call[Any]) -> _Request:
        endpoint = call.endpoint
        ids = {name: _segment(PATH_IDS[name], call.ids[name]) for name in endpoint.ids}
        headers: dict[str, str] = {}
        if endpoint.keyed:  # one key for every attempt of this call: a retried write is applied once
            headers["Idempotency-Key"] = call.idempotency_key or uuid.uuid4().hex
        if call.admin_key is not None:
            headers["X-Admin-Key"] = call.admin_key
        kwargs: dict[str, Any] = {"headers": headers} if headers else {}
        fields = _fields(call.request)
        if endpoint.in_body:
            if fields is not None:
                kwargs["json"] = fields
        else:
            kwargs["params"] = {k: v for k, v in (fields or {}).items() if v is not None}
        return cls(call, endpoint.path.format(**ids), kwargs)

    @property
    def method(self) -> str:
        return self.call.endpoint.method

    def decoded(self, response: httpx.Response) -> Any:
        answer = self.call.endpoint.response
        if isinstance(answer, type) and issubclass(answer, BaseModel):
            return answer.model_validate_json(response.content)
        return response.json()


def _fields(request: BaseModel | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if isinstance(request, BaseModel):
        return request.model_dump(mode="json", exclude_none=True, exclude_unset=True)
    return None if request is None else dict(request)


def _segment(check: Callable[[object], str], value: str) -> str:
    """A validated, escaped path segment: an id outside its alphabet never builds another route's URL."""
    try:
        return quote(check(value), safe="")
    except InvalidIdentifier as exc:
        raise InvalidRequestError(422, "invalid_identifier", str(exc)) from None


def _next_step(
    policy: RetryPolicy, request: _Request, attempt: int, outcome: httpx.Response | httpx.TransportError
) -> float | None:
    """Seconds to wait before trying again, or None: the outcome is final (returned or raised)."""
    if attempt >= policy.attempts:
        return None
    retry_safe = request.call.endpoint.retry_safe
    if isinstance(outcome, httpx.Response):
        status = outcome.status_code
        if status >= 500 and status not in _RETRY_STATUSES:  # e.g. a replica died mid-request
            return policy.delay(attempt, None) if retry_safe else None
        if status not in _RETRY_STATUSES:
            return None
        retry_after = _retry_after(outcome)
        if retry_after is not None and retry_after > policy.max_retry_after:
            return None
        return policy.delay(attempt, retry_after)
    never_sent = isinstance(outcome, httpx.ConnectError | httpx.ConnectTimeout)
    return policy.delay(attempt, None) if never_sent or retry_safe else None


def _final(request: _Request, outcome: httpx.Response | httpx.TransportError) -> Any:
    if isinstance(outcome, httpx.TimeoutException):
        raise HermesTimeout(f"{request.method} {request.path}: timed out ({outcome})") from outcome
    if isinstance(outcome, httpx.TransportError):
        raise HermesConnectionError(f"{request.method} {request.path}: {outcome!r}") from outcome
    if outcome.is_error:
        raise error_from(outcome)
    return request.decoded(outcome)


# --------------------------------------------------------------------------------------- operations


class _Operation(Generic[P, R]):
    """A client method written once, as the ``Call`` it makes (``schemas.endpoints``): on ``HermesClient`` it
    answers ``R``, on ``AsyncHermesClient`` an awaitable of ``R`` — the type checker sees both. Read on the
    class (``HermesClient.recall``) it is the function taking the client first."""

    def __init__(self, describe: Callable[P, Call[R]]):
        self._describe = describe
        self.__doc__ = describe.__doc__
        self.__wrapped__ = describe  # help() and inspect.signature show the method's own parameters

    @overload
    def __get__(
        self, client: None, owner: type[AsyncHermesClient]
    ) -> Callable[Concatenate[AsyncHermesClient, P], Coroutine[Any, Any, R]]: ...
    @overload
    def __get__(
        self, client: None, owner: type[HermesClient]
    ) -> Callable[Concatenate[HermesClient, P], R]: ...
    @overload
    def __get__(
        self, client: AsyncHermesClient, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, R]]: ...
    @overload
    def __get__(self, client: HermesClient, owner: type | None = None) -> Callable[P, R]: ...
    def __get__(self, client: Any, owner: Any = None) -> Any:
        describe = self._describe
        if client is None:
            return lambda client, *args, **kwargs: client.send(describe(*args, **kwargs))
        return functools.wraps(describe)(lambda *args, **kwargs: client.send(describe(*args, **kwargs)))


class _Operations:
    """Every operation of the API, each the ``Call`` of its endpoint; the two clients differ only in
    ``send``. (The methods take no ``self``: ``_Operation`` binds them to the client's ``send``.)"""

    @_Operation
    def write_turns(
        user_id: str, request: WriteTurnsRequest | dict, idempotency_key: str | None = None
    ) -> Call[WriteResult]:
        return endpoints.WRITE_TURNS.call(request, user_id=user_id, idempotency_key=idempotency_key)

    @_Operation
    def preview_turns(user_id: str, request: WriteTurnsRequest | dict) -> Call[TurnsPreview]:
        """What ``write_turns`` would store, without storing anything."""
        return endpoints.PREVIEW_TURNS.call(request, user_id=user_id)

    @_Operation
    def write_memory(
        user_id: str, request: WriteMemoryRequest | dict, idempotency_key: str | None = None
    ) -> Call[WriteResult]:
        return endpoints.WRITE_MEMORY.call(request, user_id=user_id, idempotency_key=idempotency_key)

    @_Operation
    def recall(user_id: str, request: RecallRequest | dict) -> Call[RecallResponse]:
        return endpoints.RECALL.call(request, user_id=user_id)

    @_Operation
    def start_session(user_id: str, request: StartSessionRequest | dict) -> Call[SessionContext]:
        return endpoints.START_SESSION.call(request, user_id=user_id)

    @_Operation
    def list_memories(
        user_id: str,
        layer: Layer | None = None,
        state: State | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Call[MemoryList]:
        page = {"layer": layer, "state": state, "limit": limit, "offset": offset}
        return endpoints.LIST_MEMORIES.call(page, user_id=user_id)

    @_Operation
    def get_memory(user_id: str, memory_id: str) -> Call[MemoryDetail]:
        return endpoints.GET_MEMORY.call(user_id=user_id, memory_id=memory_id)

    @_Operation
    def confirm(
        user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> Call[MemoryOut]:
        return endpoints.CONFIRM.call(request, user_id=user_id, memory_id=memory_id)

    @_Operation
    def freeze(user_id: str, memory_id: str, request: FreezeRequest | dict) -> Call[MemoryOut]:
        return endpoints.FREEZE.call(request, user_id=user_id, memory_id=memory_id)

    @_Operation
    def unfreeze(user_id: str, memory_id: str, request: UnfreezeRequest | dict) -> Call[MemoryOut]:
        return endpoints.UNFREEZE.call(request, user_id=user_id, memory_id=memory_id)

    @_Operation
    def forget(
        user_id: str, memory_id: str, request: ForgetRequest | dict | None = None
    ) -> Call[ForgetResult]:
        return endpoints.FORGET.call(request, user_id=user_id, memory_id=memory_id)

    @_Operation
    def erase_user(user_id: str, request: EraseRequest | dict | None = None) -> Call[EraseResult]:
        return endpoints.ERASE_USER.call(request, user_id=user_id)

    @_Operation
    def alerts(user_id: str, status: AlertFilter = "open") -> Call[AlertList]:
        return endpoints.ALERTS.call({"status": status}, user_id=user_id)

    @_Operation
    def profile(user_id: str) -> Call[UserProfile]:
        return endpoints.PROFILE.call(user_id=user_id)

    @_Operation
    def create_tenant(admin_key: str, request: CreateTenantRequest | dict) -> Call[TenantCreated]:
        return endpoints.CREATE_TENANT.call(request, admin_key=admin_key)

    # not on the handle: the directory's figures and the liveness probe
    @_Operation
    def stats() -> Call[DirectoryStats]:
        return endpoints.STATS.call()

    @_Operation
    def health() -> Call[dict[str, Any]]:
        return endpoints.HEALTH.call()


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

    def send(self, call: Call[R]) -> R:
        """Any operation's call (``schemas.endpoints``), with the retries; answers its response."""
        request = _Request.of(call)
        attempt = 0
        while True:
            attempt += 1
            outcome: httpx.Response | httpx.TransportError
            try:
                outcome = self._http.request(request.method, request.path, **request.kwargs)
            except httpx.TransportError as exc:
                outcome = exc
            wait = _next_step(self.retry, request, attempt, outcome)
            if wait is None:
                answer: R = _final(request, outcome)
                return answer
            time.sleep(wait)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HermesClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncHermesClient(_Operations):
    """Asynchronous client: the same methods, each returning an awaitable of its answer."""

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

    async def send(self, call: Call[R]) -> R:
        """Any operation's call (``schemas.endpoints``), with the retries; answers its response."""
        request = _Request.of(call)
        attempt = 0
        while True:
            attempt += 1
            outcome: httpx.Response | httpx.TransportError
            try:
                outcome = await self._http.request(request.method, request.path, **request.kwargs)
            except httpx.TransportError as exc:
                outcome = exc
            wait = _next_step(self.retry, request, attempt, outcome)
            if wait is None:
                answer: R = _final(request, outcome)
                return answer
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncHermesClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
