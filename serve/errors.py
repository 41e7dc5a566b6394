"""Every error → HTTP mapping, in one place. Bodies are always ``ErrorBody(error, detail)``.

* ``HermesError`` and its tree (``schemas.errors``, which draws every class with its status) → the class's
  ``status_code``; the ``error`` field is the class name in snake case (``invalid_identifier``); those
  carrying ``retry_after_seconds`` (``StoreUnavailable`` → 503, ``RateLimited`` → 429) also send
  ``Retry-After``. A rejected identifier echoes at most its first 64 characters.
* Request validation → 422, one line per problem (``body.turns.0.text: String should have at most 8000
  characters``); input values are not echoed.
* A user host still down after the router's retries → 503 with ``Retry-After``.
* Anything else → 500 with a generic message (the traceback goes to the log, not to the caller).
* Starlette's own HTTP errors (unknown route 404, 405) keep their status.
* ``error_body(exc)``: the same ``ErrorBody`` for an exception raised outside a route (the MCP tools).
* A body over the limit → 413 before it is parsed (``BodySizeLimit``): at once when ``Content-Length``
  says so, else as soon as the streamed bytes pass the limit.
"""

import logging
import math
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from ray.exceptions import RayActorError, RayTaskError
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schemas.api import ErrorBody
from schemas.errors import HermesError

log = logging.getLogger(__name__)

_CAMEL_BOUNDARY = re.compile(r"(?<!^)(?=[A-Z])")
ACTOR_UNAVAILABLE = "the user's host is restarting; retry"
_PATH_FIELDS = {"memory_id", "alert_id"}
_HTTP_ERROR_NAMES = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}


def error_name(exc: BaseException) -> str:
    """``StoreUnavailable`` → ``store_unavailable``: the machine-readable ``error`` field."""
    return _CAMEL_BOUNDARY.sub("_", type(exc).__name__).lower()


def _body(status: int, error: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        ErrorBody(error=error, detail=detail).model_dump(), status_code=status, headers=headers
    )


def hermes_error_response(exc: HermesError) -> JSONResponse:
    # StoreUnavailable (503) and the rate limiter's 429 say when to come back
    retry_after = getattr(exc, "retry_after_seconds", None)
    headers = None if retry_after is None else {"Retry-After": str(max(1, math.ceil(retry_after)))}
    return _body(exc.status_code, error_name(exc), exc.message, headers)


def validation_detail(exc: RequestValidationError) -> str:
    lines = []
    for problem in exc.errors():
        where = ".".join(str(part) for part in problem.get("loc", ()))
        message = problem.get("msg", "invalid value")
        if problem.get("type") == "missing":
            message = "field required"
        lines.append(f"{where}: {message}" if where else message)
    return "; ".join(lines)


def _http_location(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Where the HTTP API takes a command's field: ``request`` is the body, ids are in the path, the rest
    (page, filters) in the query."""
    field, *rest = loc or ("",)
    if field == "request":
        return ("body", *rest)
    return ("path" if field in _PATH_FIELDS else "query", field, *rest)


def error_body(exc: Exception) -> ErrorBody | None:
    """What the HTTP API answers for ``exc`` (a request body that failed validation as if it came over HTTP),
    or ``None`` for an unexpected error (whose message is not for the caller)."""
    cause = exc.cause if isinstance(exc, RayTaskError) else exc
    if isinstance(cause, HermesError):
        return ErrorBody(error=error_name(cause), detail=cause.message)
    if isinstance(cause, ValidationError):  # a user command that could not be built from the arguments
        errors = [{**problem, "loc": _http_location(problem["loc"])} for problem in cause.errors()]
        return ErrorBody(error="invalid_request", detail=validation_detail(RequestValidationError(errors)))
    if isinstance(cause, RayActorError):
        return ErrorBody(error="actor_unavailable", detail=ACTOR_UNAVAILABLE)
    return None


async def _on_hermes_error(_: Request, exc: Exception) -> JSONResponse:
    # a Ray task error carrying one of ours is also an instance of it: report the original
    cause = exc.cause if isinstance(exc, RayTaskError) else exc
    assert isinstance(cause, HermesError)
    return hermes_error_response(cause)


async def _on_validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return _body(422, "invalid_request", validation_detail(exc))


async def _on_http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    error = _HTTP_ERROR_NAMES.get(exc.status_code, "http_error")
    return _body(exc.status_code, error, str(exc.detail), dict(exc.headers or {}) or None)


async def _on_actor_unavailable(_: Request, exc: Exception) -> JSONResponse:
    log.warning("user host unavailable after retries: %s", str(exc).splitlines()[0])
    return _body(503, "actor_unavailable", ACTOR_UNAVAILABLE, {"Retry-After": "1"})


async def _on_unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error", exc_info=exc)
    return _body(500, "internal_error", "internal error; see the service log")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(HermesError, _on_hermes_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(HTTPException, _on_http_error)
    app.add_exception_handler(RayActorError, _on_actor_unavailable)
    app.add_exception_handler(Exception, _on_unexpected)


class BodySizeLimit:
    """ASGI middleware refusing request bodies larger than ``max_bytes`` with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            too_large = _body(413, "body_too_large", f"request body exceeds {self.max_bytes} bytes")
            await too_large(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                # FastAPI re-raises HTTPException from body reading: it reaches _on_http_error as a 413
                raise HTTPException(413, f"request body exceeds {self.max_bytes} bytes")
            return message

        await self.app(scope, limited_receive, send)
