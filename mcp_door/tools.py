"""The Model Context Protocol door: one tool set, whichever transport carries it.

``memory_server(caller_of, describe)`` builds an ``mcp`` ``MCPServer`` whose tools are the user operations an
agent needs — recall, remember, list memories, forget, profile, start session, confirm, the audited
unfreeze — and whose resource ``hermes://users/{user_id}/sessions/{session_id}`` is a session's context
snapshot. Each tool but ``remember`` is one operation of the API's table (``schemas.endpoints``), offered as
it is declared there (``OFFERED``): the tool's name, description and answer are the endpoint's, its
arguments the ids of its path and the fields of its request, with their descriptions. ``remember`` is the
one tool that chooses between two operations (a turn, or one structured memory).

The tools know nothing of keys or transports: ``caller_of(ctx)`` says, for each call, where its ``Call``
is sent (``MemoryOperations``: the gateway with the caller's tenant bound, in the Serve app; the HTTP client,
over stdio) and whether the connection is bound to one user. An argument is checked where the operation
runs, as the HTTP API checks it, so ``describe(exc)`` turns what is raised into the ``ErrorBody`` the HTTP
API would answer; a tool then fails with ``error: detail``, the same words.

Every call reaches one user: the ``user_id`` argument, or the connection's bound user, which a call may
name but not change.
"""

from __future__ import annotations

import inspect
import types
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar, Union, get_args, get_origin

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

from schemas import endpoints
from schemas.api import ErrorBody, WriteResult
from schemas.endpoints import Call, Endpoint
from schemas.enums import Kind, Polarity

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)
SERVER_NAME = "hermes-memory"
SNAPSHOT_URI = "hermes://users/{user_id}/sessions/{session_id}"
INSTRUCTIONS = (
    "Long-term memory of the user across sessions. At the start of a conversation call start_session "
    "and put its text in your context; call recall before answering anything that depends on the user; "
    "call remember with what the user said (their own words), once per user turn. Frozen facts change "
    "only through unfreeze with a reason."
)


@dataclass(frozen=True, slots=True)
class Offered:
    """An operation offered as a tool, under its own name; ``omit``: request fields an agent is not shown
    (the operation's default applies)."""

    endpoint: Endpoint[Any, Any]
    omit: frozenset[str] = frozenset()


OFFERED = (
    Offered(endpoints.RECALL, omit=frozenset({"include_archive"})),
    Offered(endpoints.LIST_MEMORIES),
    Offered(endpoints.FORGET),
    Offered(endpoints.PROFILE),
    Offered(endpoints.START_SESSION),
    Offered(endpoints.CONFIRM),
    Offered(endpoints.UNFREEZE),
)


class MemoryOperations(Protocol):
    """Where the tools' calls go, each scoped to the caller's tenant already."""

    async def send(self, call: Call[R]) -> R: ...


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a call comes from: the operations scoped to its tenant, and the user its connection is bound to
    (a per-user key, or ``hermes-memory mcp --user``), if any."""

    operations: MemoryOperations
    bound_user: str | None = None

    def user(self, named: str | None) -> str:
        if self.bound_user is None:
            if not named:
                raise ToolError("invalid_request: user_id is required (this connection serves many users)")
            return named
        if named and named != self.bound_user:
            raise ToolError(f"forbidden: this connection is bound to user {self.bound_user!r}")
        return self.bound_user


CallerOf = Callable[[Context], Awaitable[Caller]]
Describe = Callable[[Exception], ErrorBody | None]

UserArg = Annotated[
    str | None,
    Field(description="the user, unique within the tenant; omit when the connection is bound to one"),
]
SessionArg = Annotated[str, Field(description="the conversation's session id (the agent's own)")]
#: the ids a path names beside the user, as a tool argument
PATH_ARGS: dict[str, Any] = {
    "memory_id": Annotated[str, Field(description="m_ followed by 32 hex digits, as recall and list answer")],
}


def _loose(annotation: Any) -> Any:
    """The annotation without its constraints and validators (``SessionId | None`` → ``str | None``): the
    operation checks the value, and its refusal is the HTTP API's words, not the MCP SDK's."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _loose(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return Union[tuple(_loose(arg) for arg in get_args(annotation))]  # noqa: UP007
    return annotation


def _argument(name: str, field: FieldInfo) -> inspect.Parameter:
    described: Any = Annotated[_loose(field.annotation), Field(description=field.description)]
    default = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=described)


class _Answer(Protocol):
    async def __call__(
        self, ctx: Context, user_id: str | None, call: Callable[[MemoryOperations, str], Awaitable[T]]
    ) -> T: ...


def _tool(endpoint: Endpoint[Any, R], omit: frozenset[str], answer: _Answer) -> Callable[..., Awaitable[R]]:
    """The tool of one operation: its arguments are the path's ids and the request's fields."""
    ids = [name for name in endpoint.ids if name != "user_id"]
    fields = {name: field for name, field in endpoint.request.model_fields.items() if name not in omit}

    async def tool(ctx: Context, user_id: str | None = None, **arguments: Any) -> R:
        path = {name: arguments.pop(name) for name in ids}
        request = arguments or None

        def send(operations: MemoryOperations, user: str) -> Awaitable[R]:
            return operations.send(endpoint.call(request, user_id=user, **path))

        return await answer(ctx, user_id, send)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        *(inspect.Parameter(name, keyword, annotation=PATH_ARGS[name]) for name in ids),
        *(_argument(name, field) for name, field in fields.items()),
        inspect.Parameter("ctx", keyword, annotation=Context),
        inspect.Parameter("user_id", keyword, default=None, annotation=UserArg),
    ]
    # the MCP SDK reads the arguments' schema and the answer's from the signature
    signature = inspect.Signature(parameters, return_annotation=endpoint.response)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": endpoint.response}
    tool.__name__ = endpoint.name
    return tool


def memory_server(caller_of: CallerOf, describe: Describe) -> MCPServer:
    server = MCPServer(SERVER_NAME, title="Hermes Memory", instructions=INSTRUCTIONS, version="0.1.0")

    async def answer(
        ctx: Context, user_id: str | None, call: Callable[[MemoryOperations, str], Awaitable[T]]
    ) -> T:
        caller = await caller_of(ctx)
        try:
            return await call(caller.operations, caller.user(user_id))
        except ToolError:
            raise
        except Exception as exc:
            body = describe(exc)
            if body is None:
                raise  # the SDK answers "Error executing tool ..." and logs the traceback
            raise ToolError(f"{body.error}: {body.detail}") from exc

    for offered in OFFERED:
        endpoint = offered.endpoint
        server.add_tool(
            _tool(endpoint, offered.omit, answer), endpoint.name, description=endpoint.description
        )

    @server.tool(
        description=(
            "Remember what the user said: a conversation turn in their words (extraction and the gates "
            "decide what is kept), or, with `kind`, one structured memory. Answers what was stored."
        )
    )
    async def remember(
        text: Annotated[str, Field(description="the user's turn, or the memory's content with `kind`")],
        session_id: SessionArg,
        ctx: Context,
        user_id: UserArg = None,
        kind: Annotated[Kind | None, Field(description="set to store one structured memory")] = None,
        slot: Annotated[str | None, Field(description="structured: the profile slot, e.g. diet")] = None,
        value: Annotated[str | None, Field(description="structured: the slot's value")] = None,
        polarity: Annotated[
            Polarity, Field(description="structured: positive or negative")
        ] = Polarity.POSITIVE,
        dialog_id: Annotated[str | None, Field(description="the turn's id; a fresh one if omitted")] = None,
        idempotency_key: Annotated[
            str | None, Field(description="a retried call with the same key is applied once")
        ] = None,
    ) -> WriteResult:
        dialog = dialog_id or f"mcp-{uuid.uuid4().hex[:16]}"

        def write(user: str) -> Call[WriteResult]:
            if kind is None:
                turn = {"session_id": session_id, "turns": [{"text": text, "dialog_id": dialog}]}
                return endpoints.WRITE_TURNS.call(turn, user_id=user, idempotency_key=idempotency_key)
            memory = {
                "content": text,
                "kind": kind,
                "session_id": session_id,
                "dialog_ids": [dialog],
                "slot": slot,
                "value": value,
                "polarity": polarity,
            }
            return endpoints.WRITE_MEMORY.call(memory, user_id=user, idempotency_key=idempotency_key)

        return await answer(ctx, user_id, lambda ops, user: ops.send(write(user)))

    @server.resource(
        SNAPSHOT_URI,
        name="session_snapshot",
        description="A session's context snapshot (starts the session on first read), as plain text.",
        mime_type="text/plain",
    )
    async def session_snapshot(user_id: str, session_id: str, ctx: Context) -> str:
        start = endpoints.START_SESSION
        try:
            context = await answer(
                ctx, user_id, lambda ops, user: ops.send(start.call({"session_id": session_id}, user_id=user))
            )
        except ToolError as error:
            raise ResourceError(str(error)) from error
        return context.text

    return server
