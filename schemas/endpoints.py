"""The operations of the HTTP API, declared once: each one's name, method, path, description, request and
response models (``Endpoint``), in one table (``ENDPOINTS``).

Everything that speaks of an operation reads it here rather than restating it: the HTTP routes take their
method, path and summary (``serve.routes``), the Python client builds its requests (``sdk.client``), the MCP
tools take their names, descriptions, arguments and answers (``mcp_door.tools``), and the MCP door in the
service finds the user command of the same name (``actors.app.commands.command_for``). A call of an
operation is a value, ``Call``: the endpoint, the ids its path names, the request (a model or a plain dict,
validated where it is run) and, for a write, the idempotency key::

    RECALL.call({"query": "what should I avoid cooking?"}, user_id="alice")

Where the request travels follows from the method: in the JSON body of a POST or PUT, in the query string
of a GET or DELETE.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from schemas import api
from schemas.ids import check_alert_id, check_memory_id, check_user_id

Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp")
Method = Literal["GET", "POST", "PUT", "DELETE"]

#: the ids a path may name, each with the check of its alphabet
PATH_IDS: dict[str, Callable[[object], str]] = {
    "user_id": check_user_id,
    "memory_id": check_memory_id,
    "alert_id": check_alert_id,
}
_USER = "/v1/users/{user_id}"
_MEMORY = _USER + "/memories/{memory_id}"


@dataclass(frozen=True, slots=True)
class Endpoint(Generic[Req, Resp]):
    """One operation of the HTTP API, answering ``Resp``."""

    #: the client method, the MCP tool and the user command (in snake case) of the same name
    name: str
    method: Method
    #: the path template; its ``{...}`` fields are ids of ``PATH_IDS``
    path: str
    #: one sentence a person or a model reads: the route's summary and the MCP tool's description
    description: str
    request: type[Req]
    response: type[Resp]
    #: repeating it after an unknown outcome (read timeout, dropped connection) is harmless
    retry_safe: bool = True
    #: a write: it carries an ``Idempotency-Key`` (the caller's, else one the client makes)
    keyed: bool = False
    #: the ids its path names, in order
    ids: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        names = tuple(name for _, name, _, _ in string.Formatter().parse(self.path) if name)
        unknown = set(names) - set(PATH_IDS)
        if unknown:
            raise ValueError(f"{self.name}: unknown path ids {sorted(unknown)}")
        object.__setattr__(self, "ids", names)

    @property
    def in_body(self) -> bool:
        """Whether the request travels as the JSON body (else as the query string)."""
        return self.method in ("POST", "PUT")

    def call(
        self,
        request: Req | Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        admin_key: str | None = None,
        **ids: str,
    ) -> Call[Resp]:
        return Call(self, ids, request, idempotency_key, admin_key)


@dataclass(frozen=True, slots=True)
class Call(Generic[Resp]):
    """One call of an operation, answering ``Resp``: nothing in it is validated yet."""

    endpoint: Endpoint[Any, Resp]
    #: the path's ids by name
    ids: Mapping[str, str]
    request: BaseModel | Mapping[str, Any] | None = None
    idempotency_key: str | None = None
    #: the operator's key, for the admin endpoints
    admin_key: str | None = None

    @property
    def user_id(self) -> str | None:
        return self.ids.get("user_id")


# ------------------------------------------------------------------------------ one user's memory

WRITE_TURNS = Endpoint(
    "write_turns",
    "POST",
    _USER + "/turns",
    "Write conversation turns; only user turns become memories",
    api.WriteTurnsRequest,
    api.WriteResult,
    keyed=True,
)
PREVIEW_TURNS = Endpoint(
    "preview_turns",
    "POST",
    _USER + "/turns:preview",
    "What writing these turns would store (the gates' decisions), without storing anything",
    api.WriteTurnsRequest,
    api.TurnsPreview,
)
WRITE_MEMORY = Endpoint(
    "write_memory",
    "POST",
    _USER + "/memories",
    "Write one structured memory (it still passes both gates)",
    api.WriteMemoryRequest,
    api.WriteResult,
    keyed=True,
)
RECALL = Endpoint(
    "recall",
    "POST",
    _USER + "/recall",
    "Recall the user's memories relevant to a query, best first, with their scores.",
    api.RecallRequest,
    api.RecallResponse,
)
START_SESSION = Endpoint(
    "start_session",
    "POST",
    _USER + "/sessions",
    "Start (or resume) a session: the context snapshot to put in the prompt, the same text on every call "
    "for this session.",
    api.StartSessionRequest,
    api.SessionContext,
)
LIST_MEMORIES = Endpoint(
    "list_memories",
    "GET",
    _USER + "/memories",
    "List the user's memories, newest first, optionally by layer and state.",
    api.MemoryPage,
    api.MemoryList,
)
GET_MEMORY = Endpoint(
    "get_memory", "GET", _MEMORY, "One memory with its audit trail", api.NoRequest, api.MemoryDetail
)
CONFIRM = Endpoint(
    "confirm",
    "POST",
    _MEMORY + "/confirm",
    "Confirm a memory the user affirmed (counts as a restatement in this session).",
    api.ConfirmRequest,
    api.MemoryOut,
    retry_safe=False,
)
FREEZE = Endpoint(
    "freeze",
    "POST",
    _MEMORY + "/freeze",
    "Freeze a confirmed memory into core",
    api.FreezeRequest,
    api.MemoryOut,
    retry_safe=False,
)
UNFREEZE = Endpoint(
    "unfreeze",
    "POST",
    _MEMORY + "/unfreeze",
    "Change a frozen memory (audited): the user's new content or value, a reason and the turn that asked "
    "for it. The memory ends frozen again with the change.",
    api.UnfreezeRequest,
    api.MemoryOut,
    retry_safe=False,
)
FORGET = Endpoint(
    "forget",
    "DELETE",
    _MEMORY,
    "Forget one memory everywhere (a tombstone stays in the audit trail).",
    api.ForgetRequest,
    api.ForgetResult,
)
ERASE_USER = Endpoint(
    "erase_user",
    "DELETE",
    _USER,
    "Erase the whole user everywhere, leaving a tombstone",
    api.EraseRequest,
    api.EraseResult,
)
ALERTS = Endpoint(
    "alerts", "GET", _USER + "/alerts", "A user's alerts (open by default)", api.AlertQuery, api.AlertList
)
PROFILE = Endpoint(
    "profile",
    "GET",
    _USER + "/profile",
    "The user's profile: a conclusion per slot with the memories behind it.",
    api.NoRequest,
    api.UserProfile,
)

# ---------------------------------------------------------------------------------- the service

CREATE_TENANT = Endpoint(
    "create_tenant",
    "POST",
    "/admin/tenants",
    "Create a tenant; returns its API key once",
    api.CreateTenantRequest,
    api.TenantCreated,
    retry_safe=False,
)
STATS = Endpoint(
    "stats",
    "GET",
    "/v1/stats",
    "User host figures: resident users, activations, passivations, latency",
    api.NoRequest,
    api.DirectoryStats,
)
HEALTH: Endpoint[api.NoRequest, dict[str, Any]] = Endpoint(
    "health", "GET", "/healthz", "Liveness of the HTTP ingress", api.NoRequest, dict
)

ENDPOINTS: tuple[Endpoint[Any, Any], ...] = (
    WRITE_TURNS,
    PREVIEW_TURNS,
    WRITE_MEMORY,
    RECALL,
    START_SESSION,
    LIST_MEMORIES,
    GET_MEMORY,
    CONFIRM,
    FREEZE,
    UNFREEZE,
    FORGET,
    ERASE_USER,
    ALERTS,
    PROFILE,
    CREATE_TENANT,
    STATS,
    HEALTH,
)
