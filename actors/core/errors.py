"""Exceptions raised by the memory core. Every one passes all its constructor args to ``super().__init__``
so that Ray can ship it across processes.

    HermesError
    ├── NotFound                 the item, user or session does not exist in this scope (HTTP 404)
    ├── GateRejected             the gate refused an operation (HTTP 409)
    │   ├── FrozenItemError      ordinary write/decay/evict on a frozen item
    │   ├── InvalidTransition    a state change the state machine does not allow
    │   └── CapacityError        a tier is full and cannot make room (core never evicts)
    ├── InvalidInput             well-formed but unacceptable content (HTTP 422)
    ├── ConcurrentUpdate         optimistic-lock conflict in SQL (HTTP 409, retry)
    ├── StoreUnavailable         SQL or Milvus is down (HTTP 503 with Retry-After)
    └── OwnershipLost            a stale host's commit refused by the user's fencing epoch (retried inside)
"""


class HermesError(Exception):
    status_code = 500

    def __init__(self, message: str, *args: object):
        super().__init__(message, *args)
        self.message = message

    def __str__(self) -> str:
        return self.message


class NotFound(HermesError):
    status_code = 404


class GateRejected(HermesError):
    status_code = 409


class FrozenItemError(GateRejected):
    pass


class InvalidTransition(GateRejected):
    pass


class CapacityError(GateRejected):
    pass


class InvalidInput(HermesError):
    status_code = 422


class ConcurrentUpdate(HermesError):
    status_code = 409


class StoreUnavailable(HermesError):
    status_code = 503

    def __init__(self, message: str, retry_after_seconds: float = 1.0):
        super().__init__(message, retry_after_seconds)
        self.retry_after_seconds = retry_after_seconds


class OwnershipLost(HermesError):
    """A commit was decided by a host (or job) whose claim on the user is no longer current: another
    claimant took the user over. Never reaches a caller: the runtime reloads the user and retries, or
    routes the call to the current owner (HTTP 503 if it ever escaped)."""

    status_code = 503
