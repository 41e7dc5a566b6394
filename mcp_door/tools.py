"""The Model Context Protocol door: one tool set, whichever transport carries it.

``memory_server(caller_of, describe)`` builds an ``mcp`` ``MCPServer`` whose tools are the user operations an
agent needs — recall, remember, list memories, forget, profile, start session, confirm, the audited
unfreeze — and whose resource ``hermes://users/{user_id}/sessions/{session_id}`` is a session's context
snapshot. The tools know nothing of keys or transports: ``caller_of(ctx)`` says, for each call, which
operations answer it (the gateway with the caller's tenant bound, in the Serve app; the HTTP client, over
stdio) and whether the connection is bound to one user. ``describe(exc)`` turns what the operations raise
into the ``ErrorBody`` the HTTP API would answer; a tool then fails with ``error: detail``, the same words.

Every call reaches one user: the ``user_id`` argument, or the connection's bound user, which a call may
name but not change.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field

from schemas.api import (
    ConfirmRequest,
    ErrorBody,
    ForgetRequest,
    ForgetResult,
    MemoryList,
    MemoryOut,
    RecallRequest,
    RecallResponse,
    SessionContext,
    StartSessionRequest,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Kind, Layer, Polarity, State

T = TypeVar("T")
SERVER_NAME = "hermes-memory"
SNAPSHOT_URI = "hermes://users/{user_id}/sessions/{session_id}"
INSTRUCTIONS = (
    "Long-term memory of the user across sessions. At the start of a conversation call start_session "
    "and put its text in your context; call recall before answering anything that depends on the user; "
    "call remember with what the user said (their own words), once per user turn. Frozen facts change "
    "only through unfreeze with a reason."
)


class MemoryOperations(Protocol):
    """The user operations the tools call, each scoped to the caller's tenant already."""

    async def write_turns(
        self, user_id: str, request: WriteTurnsRequest | dict, idempotency_key: str | None = None
    ) -> WriteResult: ...
    async def write_memory(
        self, user_id: str, request: WriteMemoryRequest | dict, idempotency_key: str | None = None
    ) -> WriteResult: ...
    async def recall(self, user_id: str, request: RecallRequest | dict) -> RecallResponse: ...
    async def start_session(self, user_id: str, request: StartSessionRequest | dict) -> SessionContext: ...
    async def list_memories(
        self,
        user_id: str,
        layer: Layer | None = None,
        state: State | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> MemoryList: ...
    async def forget(
        self, user_id: str, memory_id: str, request: ForgetRequest | dict | None = None
    ) -> ForgetResult: ...
    async def profile(self, user_id: str) -> UserProfile: ...
    async def confirm(
        self, user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> MemoryOut: ...
    async def unfreeze(self, user_id: str, memory_id: str, request: UnfreezeRequest | dict) -> MemoryOut: ...


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
MemoryArg = Annotated[str, Field(description="m_ followed by 32 hex digits, as recall and list answer")]


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

    @server.tool(description="Recall the user's memories relevant to a query, best first, with their scores.")
    async def recall(
        query: Annotated[str, Field(description="what to remember, in plain words")],
        ctx: Context,
        user_id: UserArg = None,
        k: Annotated[int, Field(description="how many memories at most (1-50)")] = 8,
        session_id: Annotated[str | None, Field(description="the current session, if any")] = None,
    ) -> RecallResponse:
        body = {"query": query, "k": k, "session_id": session_id}
        return await answer(ctx, user_id, lambda ops, user: ops.recall(user, body))

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
        if kind is None:
            turn: dict[str, Any] = {"session_id": session_id, "turns": [{"text": text, "dialog_id": dialog}]}
            return await answer(ctx, user_id, lambda ops, user: ops.write_turns(user, turn, idempotency_key))
        memory: dict[str, Any] = {
            "content": text,
            "kind": kind,
            "session_id": session_id,
            "dialog_ids": [dialog],
            "slot": slot,
            "value": value,
            "polarity": polarity,
        }
        return await answer(ctx, user_id, lambda ops, user: ops.write_memory(user, memory, idempotency_key))

    @server.tool(description="List the user's memories, newest first, optionally by layer and state.")
    async def list_memories(
        ctx: Context,
        user_id: UserArg = None,
        layer: Layer | None = None,
        state: State | None = None,
        limit: Annotated[int, Field(description="1-500")] = 100,
        offset: int = 0,
    ) -> MemoryList:
        return await answer(
            ctx, user_id, lambda ops, user: ops.list_memories(user, layer, state, limit, offset)
        )

    @server.tool(description="Forget one memory everywhere (a tombstone stays in the audit trail).")
    async def forget(
        memory_id: MemoryArg,
        ctx: Context,
        user_id: UserArg = None,
        reason: Annotated[str, Field(description="kept in the audit trail")] = "user request",
    ) -> ForgetResult:
        return await answer(ctx, user_id, lambda ops, user: ops.forget(user, memory_id, {"reason": reason}))

    @server.tool(description="The user's profile: a conclusion per slot with the memories behind it.")
    async def profile(ctx: Context, user_id: UserArg = None) -> UserProfile:
        return await answer(ctx, user_id, lambda ops, user: ops.profile(user))

    @server.tool(
        description=(
            "Start (or resume) a session: the context snapshot to put in the prompt, the same text on every "
            "call for this session."
        )
    )
    async def start_session(
        session_id: SessionArg,
        ctx: Context,
        user_id: UserArg = None,
        budget_chars: Annotated[int | None, Field(description="snapshot size (200-20000)")] = None,
    ) -> SessionContext:
        body = {"session_id": session_id, "budget_chars": budget_chars}
        return await answer(ctx, user_id, lambda ops, user: ops.start_session(user, body))

    @server.tool(description="Confirm a memory the user affirmed (counts as a restatement in this session).")
    async def confirm(
        memory_id: MemoryArg,
        ctx: Context,
        user_id: UserArg = None,
        session_id: Annotated[str | None, Field(description="the session the user affirmed it in")] = None,
        reason: str = "",
    ) -> MemoryOut:
        body = {"session_id": session_id, "reason": reason}
        return await answer(ctx, user_id, lambda ops, user: ops.confirm(user, memory_id, body))

    @server.tool(
        description=(
            "Change a frozen memory (audited): the user's new content or value, a reason and the turn that "
            "asked for it. The memory ends frozen again with the change."
        )
    )
    async def unfreeze(
        memory_id: MemoryArg,
        reason: Annotated[str, Field(description="why; required, kept in the audit trail")],
        dialog_id: Annotated[str, Field(description="the turn that asked for the change")],
        ctx: Context,
        user_id: UserArg = None,
        new_content: str | None = None,
        new_value: str | None = None,
    ) -> MemoryOut:
        body = {"reason": reason, "dialog_id": dialog_id, "new_content": new_content, "new_value": new_value}
        return await answer(ctx, user_id, lambda ops, user: ops.unfreeze(user, memory_id, body))

    @server.resource(
        SNAPSHOT_URI,
        name="session_snapshot",
        description="A session's context snapshot (starts the session on first read), as plain text.",
        mime_type="text/plain",
    )
    async def session_snapshot(user_id: str, session_id: str, ctx: Context) -> str:
        try:
            context = await answer(
                ctx, user_id, lambda ops, user: ops.start_session(user, {"session_id": session_id})
            )
        except ToolError as error:
            raise ResourceError(str(error)) from error
        return context.text

    return server
