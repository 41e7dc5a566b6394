"""``hermes-memory mcp``: the MCP tools over stdio, for desktop and IDE agents that start their memory server
as a subprocess. It is a client of a running stack: every tool call is one request of the HTTP client
(``sdk.client.AsyncHermesClient``) with the tenant's key, so it holds no store and starts in a moment.

    hermes-memory mcp --url http://127.0.0.1:8000 --key hm_demo_... [--user alice]

``--url``, ``--key`` and ``--user`` default to ``HERMES_MEMORY_URL``, ``HERMES_MEMORY_API_KEY`` and
``HERMES_MEMORY_USER`` (an agent's config can keep the key in its ``env`` block rather than on a command
line). With a user, the connection is bound to it: the tools need no ``user_id`` and refuse another one.
Errors are the HTTP API's, word for word (``not_found: ...``).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context

from mcp_door.tools import Caller, memory_server
from schemas.api import ErrorBody
from sdk.client import AsyncHermesClient, HermesConnectionError, HermesHTTPError


def client_error_body(exc: Exception) -> ErrorBody | None:
    """The server's own ``ErrorBody`` for an HTTP error; an unreachable stack in plain words."""
    if isinstance(exc, HermesHTTPError):
        return ErrorBody(error=exc.error, detail=exc.detail)
    if isinstance(exc, HermesConnectionError):
        return ErrorBody(error="unavailable", detail=f"Hermes Memory did not answer: {exc}")
    return None


async def serve_stdio(url: str, api_key: str, user_id: str | None = None) -> None:
    async with AsyncHermesClient(url, api_key) as client:
        caller = Caller(client, bound_user=user_id)

        async def caller_of(_: Context) -> Caller:
            return caller

        await memory_server(caller_of, client_error_body).run_stdio_async()
