"""The user commands: every operation on one user's memory, declared once, as a small typed value.

A command carries its request parameters (validated when it is built), its effect (``Effect``: what the
quotas check, and which commands carry the write's request id), ``prepare``, what it reads from its request
alone before it holds the user's mailbox (``Prepared``: a write's extraction, a recall's query, and their
vectors once embedded), and ``run(service, prepared)``, which performs it with one of the user's resource
managers (``actors.app.resources``, held by ``actors.app.service.UserMemoryService``) and answers the
command's response type::

    class Recall(UserCommand[api.RecallResponse]):
        request: api.RecallRequest

Every layer above passes commands along without restating them: a route or the Serve handle builds one,
``serve.gateway.Gateway.run`` admits it (quotas, the idempotency key), ``actors.runtime.pool.HostRouter.run``
sends it to the user's host, and ``actors.runtime.host.UserHost.run`` runs it in the user's mailbox. Each
of those is generic in the response type (``run(..., command: UserCommand[R]) -> R``), so the type checker
holds every layer to the command's answer. Commands are frozen pydantic models: Ray pickles them to the
host, and a caller may give their requests as dicts.

A command is named, in logs and the host's span, by its class in snake case (``WriteTurns`` →
``write_turns``). The gateway's span of a command that is a GenAI memory operation (``MemoryOperation``,
OpenTelemetry's ``gen_ai.memory.*`` conventions) is named by that operation (``upsert_memory``,
``search_memory``, ...) and carries ``gen_ai.operation.name``, ``gen_ai.memory.store.id``, the record's id
and how many records the answer holds (``record_id``, ``record_count``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from typing import Any, ClassVar, Generic, Self, TypeVar, cast

import numpy as np
from pydantic import BaseModel, ConfigDict

from actors.app.service import UserMemoryService
from actors.app.write import Extraction, PreparedWrite, TokenStates, extract
from actors.core.extraction import Extractor
from schemas import api
from schemas.api import AlertFilter
from schemas.api_tenant import ResolveAlertRequest
from schemas.endpoints import Call
from schemas.enums import AlertStatus
from schemas.errors import InvalidInput
from schemas.ids import AlertId, MemoryId
from schemas.transfer import ImportRequest, ImportResult

R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True, slots=True, eq=False)  # vectors: compared by identity
class Prepared:
    """What a command reads from its request alone, computed once before it holds the user's mailbox (by
    the host, while the call waits behind the user's earlier calls, or in the call's thread), and the
    vectors of its texts when the host embedded them meanwhile: a vector depends on its text alone."""

    #: a write's turns, read (``actors.app.write.extract``)
    extraction: Extraction = Extraction()
    #: a recall's query
    query: str | None = None
    #: the extraction's candidates' passage vectors, one row each, when embedded ahead
    passage_vectors: np.ndarray | None = None
    #: the query's vector, when embedded ahead
    query_vector: np.ndarray | None = None
    #: the candidates' token states, when embedded ahead for a reader that reads them
    passage_states: TokenStates | None = None

    def write_of(self, service: UserMemoryService) -> PreparedWrite:
        """The write prepared for ``service``: with what was embedded ahead, the rest embedded now."""
        return service.writes.prepared(self.extraction, self.passage_vectors, self.passage_states)

    def embedded(
        self,
        query_vector: np.ndarray | None,
        passage_vectors: np.ndarray,
        passage_states: TokenStates | None = None,
    ) -> Prepared:
        return replace(
            self, query_vector=query_vector, passage_vectors=passage_vectors, passage_states=passage_states
        )


#: what a command that reads nothing ahead prepares
NOTHING_PREPARED = Prepared()


_CAMEL_BOUNDARY = re.compile(r"(?<!^)(?=[A-Z])")


def alert_status(wanted: AlertFilter) -> AlertStatus | None:
    """The alert status an ``AlertFilter`` asks for (None: every status)."""
    return None if wanted == "all" else AlertStatus(wanted)


class Effect(Enum):
    """What a command does to the user's memory."""

    #: changes nothing a caller reads back (recall heat and a session's stored snapshot aside)
    READS = "reads"
    #: changes or removes memories the user already holds, so it never brings a new user into the tenant
    CHANGES = "changes"
    #: stores new memories, so it may bring a new user into the tenant (what the user quota checks)
    STORES = "stores"


class MemoryOperation(Enum):
    """OpenTelemetry's GenAI memory operations (``gen_ai.operation.name``): the span of a command that is
    one of them is named by it, so standard dashboards read the service's traces."""

    CREATE = "create_memory"
    UPSERT = "upsert_memory"
    UPDATE = "update_memory"
    DELETE = "delete_memory"
    SEARCH = "search_memory"
    DELETE_STORE = "delete_memory_store"


class Command(BaseModel):
    """What a host needs of any user command (``UserHost.run``): a remote method is not generic, so the host
    takes a ``Command`` and answers a model, which the caller reads back as the command's response type
    (``UserCommand.answer``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    effect: ClassVar[Effect]
    #: the GenAI memory operation it is, if any (a preview, the alerts or the profile are none)
    operation: ClassVar[MemoryOperation | None] = None
    #: whether what it prepares may name texts to embed
    embeds: ClassVar[bool] = False

    @classmethod
    def name(cls) -> str:
        return _CAMEL_BOUNDARY.sub("_", cls.__name__).lower()

    def record_id(self) -> str | None:
        """The one memory record the command is about (``gen_ai.memory.record.id``), if it is about one."""
        memory_id = getattr(self, "memory_id", None)
        return memory_id if isinstance(memory_id, str) else None

    def with_request_id(self, request_id: str) -> Self:
        """The command as sent for the request ``request_id``: only a write carries it (``Write``)."""
        return self

    def prepare(self, extractor: Extractor, received: datetime) -> Prepared:
        """What ``run`` needs that the request alone decides, read with the host's extractor; ``received``:
        when the host received the call (a turn without a time is said then)."""
        return NOTHING_PREPARED

    def run(self, service: UserMemoryService, prepared: Prepared) -> BaseModel:
        raise NotImplementedError


class UserCommand(Command, Generic[R]):
    """One operation on one user's memory, answering ``R``; run one at a time in the user's order."""

    def record_count(self, result: R) -> int | None:
        """How many memory records the answer holds or touched (``gen_ai.memory.record.count``)."""
        return None

    @classmethod
    def response_type(cls) -> type[R]:
        """The ``R`` of the ``UserCommand[R]`` the class derives from."""
        for base in cls.__mro__:
            metadata = getattr(base, "__pydantic_generic_metadata__", None)
            if metadata and metadata["origin"] is UserCommand and metadata["args"]:
                answers: tuple[type[R], ...] = metadata["args"]
                return answers[0]
        raise TypeError(f"{cls.__name__} names no response type")

    def answer(self, response: BaseModel) -> R:
        """A host's answer (``UserHost.run`` answers a model) as this command's response type, checked where
        it comes back."""
        expected = self.response_type()
        if not isinstance(response, expected):
            raise TypeError(f"{self.name()} answered {type(response).__name__}, not {expected.__name__}")
        return response

    def run(self, service: UserMemoryService, prepared: Prepared) -> R:
        raise NotImplementedError


class Write(UserCommand[api.WriteResult]):
    """A write: it stores memories. ``request_id`` makes a resent write apply once: the gateway sets it
    from the caller's idempotency key (else a fresh id)."""

    effect = Effect.STORES
    operation = MemoryOperation.UPSERT  # the gates create, restate, supersede or refuse

    request_id: str | None = None

    def with_request_id(self, request_id: str) -> Self:
        return self.model_copy(update={"request_id": request_id})

    def record_count(self, result: api.WriteResult) -> int:
        return len(result.outcomes)


# ------------------------------------------------------------------------------------------ writes


class WriteTurns(Write):
    """Extract memories from the user's turns and pass them through the gates."""

    embeds = True

    request: api.WriteTurnsRequest

    def prepare(self, extractor: Extractor, received: datetime) -> Prepared:
        return Prepared(extraction=extract(extractor, self.request, received))

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.WriteResult:
        return service.writes.write(
            prepared.write_of(service),
            self.request_id,
        )


class WriteMemory(Write):
    """Pass one explicit memory through the gates."""

    request: api.WriteMemoryRequest

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.WriteResult:
        return service.writes.write_memory(self.request, self.request_id)


class ImportRecords(UserCommand[ImportResult]):
    """Add the user's exported records that are not here yet (docs/export.md): idempotent by their ids and
    contents, so it needs no request id; it may bring a new user into the tenant, as a write does."""

    effect = Effect.STORES
    operation = MemoryOperation.CREATE

    request: ImportRequest

    def record_count(self, result: ImportResult) -> int:
        return result.memories_added

    def run(self, service: UserMemoryService, prepared: Prepared) -> ImportResult:
        return service.writes.import_records(self.request)


class PreviewTurns(UserCommand[api.TurnsPreview]):
    """What writing these turns would do, decided on a copy of the user's memory and never stored."""

    effect = Effect.READS
    embeds = True

    request: api.WriteTurnsRequest

    def prepare(self, extractor: Extractor, received: datetime) -> Prepared:
        return Prepared(extraction=extract(extractor, self.request, received))

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.TurnsPreview:
        return service.writes.preview(prepared.write_of(service))


# ------------------------------------------------------------------------------- recall and sessions


class Recall(UserCommand[api.RecallResponse]):
    effect = Effect.READS
    operation = MemoryOperation.SEARCH
    embeds = True

    request: api.RecallRequest

    def record_count(self, result: api.RecallResponse) -> int:
        return len(result.hits)

    def prepare(self, extractor: Extractor, received: datetime) -> Prepared:
        return Prepared(query=self.request.query)

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.RecallResponse:
        return service.recalls.recall(self.request, prepared.query_vector)


class StartSession(UserCommand[api.SessionContext]):
    """The session's context snapshot: rendered on its first call, the same text for every later one."""

    effect = Effect.READS
    operation = MemoryOperation.SEARCH  # the memories the session starts with

    request: api.StartSessionRequest

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.SessionContext:
        return service.sessions.start(self.request)


# ---------------------------------------------------------------------------- inspection and control


class ListMemories(UserCommand[api.MemoryList], api.MemoryPage):
    """One page of the user's memories (the page's fields are ``MemoryPage``'s)."""

    effect = Effect.READS
    operation = MemoryOperation.SEARCH

    def record_count(self, result: api.MemoryList) -> int:
        return len(result.items)

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.MemoryList:
        return service.memories.list(self.layer, self.state, self.limit, self.offset)


class GetMemory(UserCommand[api.MemoryDetail]):
    """One memory with its audit trail."""

    effect = Effect.READS
    operation = MemoryOperation.SEARCH

    memory_id: MemoryId

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.MemoryDetail:
        return service.memories.get(self.memory_id)


class Confirm(UserCommand[api.MemoryOut]):
    effect = Effect.CHANGES
    operation = MemoryOperation.UPDATE

    memory_id: MemoryId
    request: api.ConfirmRequest = api.ConfirmRequest()

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.MemoryOut:
        return service.memories.confirm(self.memory_id, self.request)


class Freeze(UserCommand[api.MemoryOut]):
    effect = Effect.CHANGES
    operation = MemoryOperation.UPDATE

    memory_id: MemoryId
    request: api.FreezeRequest

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.MemoryOut:
        return service.memories.freeze(self.memory_id, self.request)


class Unfreeze(UserCommand[api.MemoryOut]):
    effect = Effect.CHANGES
    operation = MemoryOperation.UPDATE

    memory_id: MemoryId
    request: api.UnfreezeRequest

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.MemoryOut:
        return service.memories.unfreeze(self.memory_id, self.request)


class Forget(UserCommand[api.ForgetResult]):
    effect = Effect.CHANGES
    operation = MemoryOperation.DELETE

    memory_id: MemoryId
    request: api.ForgetRequest = api.ForgetRequest()

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.ForgetResult:
        return service.memories.forget(self.memory_id, self.request)


class EraseUser(UserCommand[api.EraseResult]):
    effect = Effect.CHANGES
    operation = MemoryOperation.DELETE_STORE  # the user's whole memory

    request: api.EraseRequest = api.EraseRequest()

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.EraseResult:
        return service.memories.erase(self.request)


class Alerts(UserCommand[api.AlertList], api.AlertQuery):
    effect = Effect.READS

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.AlertList:
        return service.alerts.list(alert_status(self.status))


class ResolveAlert(UserCommand[api.AlertOut]):
    """Close one of the user's alerts, audited (the gates raise alerts; only a person closes them)."""

    effect = Effect.CHANGES

    alert_id: AlertId
    request: ResolveAlertRequest = ResolveAlertRequest()

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.AlertOut:
        return service.alerts.resolve(self.alert_id, self.request)


class Profile(UserCommand[api.UserProfile]):
    """The USER profile: slot conclusions with confidence, backing ids and history; relations; state."""

    effect = Effect.READS

    def run(self, service: UserMemoryService, prepared: Prepared) -> api.UserProfile:
        return service.sessions.profile()


# ----------------------------------------------------------------------------- by operation name


def _commands(kind: type[UserCommand[Any]]) -> Iterator[type[UserCommand[Any]]]:
    for sub in kind.__subclasses__():
        if sub.__pydantic_generic_metadata__["origin"] is None:  # not a parametrization (``UserCommand[R]``)
            yield sub
        yield from _commands(sub)


#: every command by its name, which is the name of its operation in ``schemas.endpoints``
COMMANDS: dict[str, type[UserCommand[Any]]] = {kind.name(): kind for kind in _commands(UserCommand)}


def command_for(call: Call[R]) -> UserCommand[R]:
    """The user command of an operation's call, validated as its route validates it: the command of the
    operation's name, given the ids the path names beside the user, and the request (as ``request``, or
    field by field for a command that takes its parameters one by one, as ``ListMemories`` does)."""
    kind = COMMANDS.get(call.endpoint.name)
    if kind is None:
        raise InvalidInput(f"{call.endpoint.name} is not an operation on one user's memory")
    fields: dict[str, Any] = {name: value for name, value in call.ids.items() if name != "user_id"}
    request = call.request
    if "request" in kind.model_fields:
        if request is not None:
            fields["request"] = request
    elif isinstance(request, BaseModel):
        fields.update(request.model_dump(exclude_unset=True))
    elif request is not None:
        fields.update(request)
    # the command of an operation answers the operation's response (tests/unit/app/test_commands.py)
    return cast(UserCommand[R], kind.model_validate(fields))
