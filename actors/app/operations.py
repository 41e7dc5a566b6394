"""The user operations, declared once: what one user's service does, as every layer above reaches it.

``UserOperations`` is the contract of the user service (``UserMemoryService``) for the operations served
from outside. Each layer offers every one of them as a typed method of the same name: the host
(``actors.runtime.host.UserHost``, with the tenant, the user and the caller's trace context around the
operation's own parameters), the gateway (``serve.gateway.Gateway``), the Serve handle
(``serve.app.HermesMemory``) and the HTTP client (``serve.client``), the last three taking the caller's
``idempotency_key`` where the service takes the write's ``request_id``. ``tests/unit/test_operations.py``
checks every layer's signatures against this Protocol. ``MaintenanceOperations`` is the batch jobs'
contract (``jobs.common.UserRunner``).

Each user operation declares its effect where it is declared (``@reads``, ``@changes``, ``@stores``); the
user quota (``serve.quotas``) asks for it, so a new operation is classified once. A layer names an
operation by referring to it here (``UserOperations.recall``), never by a string.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Protocol, TypeVar

from schemas import api
from schemas.enums import AlertStatus, Layer, State

#: a member of ``UserOperations``, e.g. ``UserOperations.recall``
Operation = Callable[..., object]
_Declared = TypeVar("_Declared", bound=Operation)


class Effect(Enum):
    """What an operation does to the user's memory."""

    #: changes nothing a caller reads back (recall heat and a session's stored snapshot aside)
    READS = "reads"
    #: changes or removes memories the user already holds, so it never brings a new user into the tenant
    CHANGES = "changes"
    #: stores new memories, so it may bring a new user into the tenant (what the user quota checks)
    STORES = "stores"


_EFFECTS: dict[Operation, Effect] = {}


def _declaring(effect: Effect) -> Callable[[_Declared], _Declared]:
    def declare(operation: _Declared) -> _Declared:
        _EFFECTS[operation] = effect
        return operation

    return declare


reads = _declaring(Effect.READS)
changes = _declaring(Effect.CHANGES)
stores = _declaring(Effect.STORES)


def effect_of(operation: Operation) -> Effect:
    """The effect the ``UserOperations`` member ``operation`` declares."""
    return _EFFECTS[operation]


class UserOperations(Protocol):
    """One user's operations, run one at a time in the user's order (the host's mailbox)."""

    @stores
    def write_turns(self, request: api.WriteTurnsRequest, request_id: str | None = None) -> api.WriteResult:
        """Extract memories from the user's turns and pass them through the gates; a ``request_id`` seen
        before answers the stored result instead (a retried write is applied once)."""
        ...

    @stores
    def write_memory(self, request: api.WriteMemoryRequest, request_id: str | None = None) -> api.WriteResult:
        """Pass one explicit memory through the gates; ``request_id`` as for ``write_turns``."""
        ...

    @reads
    def recall(self, request: api.RecallRequest) -> api.RecallResponse: ...

    @reads
    def start_session(self, request: api.StartSessionRequest) -> api.SessionContext:
        """The session's context snapshot: rendered on its first call, the same text for every later one."""
        ...

    @reads
    def list_memories(
        self, layer: Layer | None = None, state: State | None = None, limit: int = 100, offset: int = 0
    ) -> api.MemoryList: ...

    @reads
    def get_memory(self, memory_id: str) -> api.MemoryDetail: ...

    @changes
    def confirm(self, memory_id: str, request: api.ConfirmRequest) -> api.MemoryOut: ...

    @changes
    def freeze(self, memory_id: str, request: api.FreezeRequest) -> api.MemoryOut: ...

    @changes
    def unfreeze(self, memory_id: str, request: api.UnfreezeRequest) -> api.MemoryOut: ...

    @changes
    def forget(self, memory_id: str, request: api.ForgetRequest) -> api.ForgetResult: ...

    @changes
    def erase_user(self, request: api.EraseRequest) -> api.EraseResult: ...

    @reads
    def alerts(self, status: AlertStatus | None = AlertStatus.OPEN) -> api.AlertList: ...

    @reads
    def profile(self) -> api.UserProfile: ...


class MaintenanceOperations(Protocol):
    """What a batch job runs on one user's service while it holds the user's lease."""

    def consolidate(self) -> dict[str, int]:
        """One consolidation pass; what it did, by step."""
        ...

    def restore_archived(self, memory_ids: Sequence[str], reason: str) -> dict[str, list[str]]:
        """Bring these archived items back (best first) while long-term has room; restored and skipped ids."""
        ...
