"""Every exception Hermes Memory raises, in one tree, each with the HTTP status ``serve.errors`` answers it
with (the one mapping: it reads ``status_code``; ``retry_after_seconds``, where a class has it, becomes
``Retry-After``). Every class passes all its constructor args to ``super().__init__``, so Ray can rebuild it
in the caller's process.

    HermesError                      500
    ├── NotFound                     404  the item, alert, user or session does not exist in this scope
    ├── GateRejected                 409  the gate refused an operation
    │   ├── FrozenItemError          409  an ordinary write, decay or eviction of a frozen item
    │   ├── InvalidTransition        409  a state change the state machine does not allow
    │   └── CapacityError            409  a tier is full and cannot make room (core never evicts)
    ├── ConcurrentUpdate             409  optimistic-lock conflict in SQL (retry)
    ├── InvalidInput                 422  well-formed but unacceptable content
    │   └── InvalidIdentifier        422  an id outside its safe alphabet (``schemas.ids``; a ValueError too,
    │                                     so pydantic reports it as a validation error)
    ├── Unauthorized                 401  a missing or unknown API key
    ├── Forbidden                    403  a valid key not allowed to do this (a wrong admin key)
    ├── RateLimited                  429  the tenant's request rate (with Retry-After)
    ├── QuotaExceeded                429  the tenant's user quota, on a write for a new user
    ├── StoreUnavailable             503  SQL or Milvus is down (with Retry-After)
    ├── ContentKeyError              503  the content key for encryption at rest is missing or malformed
    ├── OwnershipLost                503  a stale host's (or job's) commit, refused by the user's fencing
    │                                     epoch; retried inside the runtime, never meant to reach a caller
    ├── WrongHost                    503  the user is served by another host of the pool (resent inside)
    ├── VectorIndexError             500  the vector index refused an operation
    │   └── VectorSchemaMismatch     500  the collection exists with another schema (dimension, fields)
    ├── UserBusy                     500  a batch job: another job holds the user's lease (never HTTP)
    └── StackError                   500  the local stack supervisor (``hermes-memory up``; never HTTP)
        ├── StackAlreadyRunning      500  a stack already runs in this home
        └── StackStartFailed         500  a process of the stack did not come up

The client (``HermesClient``) raises its own exceptions, built from the status it receives
(``HermesClientError`` and below): it runs where none of the service is installed.
"""

from __future__ import annotations


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


class ConcurrentUpdate(HermesError):
    status_code = 409


class InvalidInput(HermesError):
    status_code = 422


class Unauthorized(HermesError):
    status_code = 401


class Forbidden(HermesError):
    status_code = 403


class RateLimited(HermesError):
    status_code = 429

    def __init__(self, message: str, retry_after_seconds: float = 1.0):
        super().__init__(message, retry_after_seconds)
        self.retry_after_seconds = retry_after_seconds


class QuotaExceeded(HermesError):
    status_code = 429


class StoreUnavailable(HermesError):
    status_code = 503

    def __init__(self, message: str, retry_after_seconds: float = 1.0):
        super().__init__(message, retry_after_seconds)
        self.retry_after_seconds = retry_after_seconds


class ContentKeyError(HermesError):
    status_code = 503


class OwnershipLost(HermesError):
    """A commit was decided by a host (or job) whose claim on the user is no longer current: another
    claimant took the user over. The runtime reloads the user and retries, or routes the call to the
    current owner."""

    status_code = 503


class WrongHost(HermesError):
    """The user is served by another host of the pool (the pool was resized); resend after refreshing."""

    status_code = 503

    def __init__(self, message: str, pool_size: int = 0):
        super().__init__(message, pool_size)
        self.pool_size = pool_size


class VectorIndexError(HermesError):
    pass


class VectorSchemaMismatch(VectorIndexError):
    pass


class UserBusy(HermesError):
    """Another job holds the user's lease."""


class StackError(HermesError):
    pass


class StackAlreadyRunning(StackError):
    pass


class StackStartFailed(StackError):
    pass
