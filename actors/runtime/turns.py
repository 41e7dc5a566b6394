"""A user's calls in the order their submitter made them, restored inside the host: ``Turn``, ``Turnstile``.

A router (``actors.runtime.pool.HostRouter``) numbers the calls it sends for a user, in a *lane* that lives
while any of them is unanswered, and sends each at once. Ray does not keep the submission order of calls to
an async actor, so the user's host restores it: a call passes the turnstile, into the user's mailbox, only
once every earlier call of its lane has passed. ``low`` is the lane's oldest call the router had no answer
to when it sent this one: every call before it has finished, so a host that never saw them (it restarted, or
the user just moved to it) does not wait for them. A router that gives up on a call (its host down for too
long) never sends it again: the calls behind it wait ``patience`` seconds at most, then go on.

Sending at once, rather than holding a call in the router until the previous one answers, lets the host
embed what a waiting call will embed while it waits, and start it the moment the previous call leaves the
mailbox, with no round trip through the router in between (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Turn:
    """A call's place in its lane: ``lane`` names the lane (unique across routers and lanes), ``seq`` is the
    call's number in it, ``low`` the oldest of the lane's calls unanswered when this one was sent."""

    lane: str
    seq: int
    low: int


@dataclass(slots=True)
class _ArrivingLane:
    """A lane as the host sees it: the calls of a router's lane that arrived here and wait their turn."""

    #: every call of the lane numbered below ``next`` has passed (or finished before the host saw it)
    next: int
    waiters: dict[int, asyncio.Future[None]] = field(default_factory=dict)
    used: float = field(default_factory=time.monotonic)


class Turnstile:
    """The lanes of one host's calls; used from the host's event loop only."""

    def __init__(self, patience: float):
        self.patience = patience
        self._lanes: dict[str, _ArrivingLane] = {}

    def ready(self, turn: Turn) -> bool:
        """Whether ``turn`` would pass now."""
        lane = self._lanes.get(turn.lane)
        return max(turn.low, 0 if lane is None else lane.next) >= turn.seq

    async def wait(self, turn: Turn) -> None:
        """Until every call of the lane before ``turn``, from its ``low``, passed; ``patience`` at most."""
        lane = self._lanes.get(turn.lane)
        if lane is None:
            lane = self._lanes[turn.lane] = _ArrivingLane(turn.low)
        lane.used = time.monotonic()
        self._advance(lane, turn.low)
        if lane.next >= turn.seq:
            return
        waiter = lane.waiters[turn.seq] = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(waiter, self.patience)
        except TimeoutError:
            log.warning("call %d of lane %s went on without the calls before it", turn.seq, turn.lane)
        finally:
            lane.waiters.pop(turn.seq, None)

    def passed(self, turn: Turn) -> None:
        """``turn`` has taken its place in the mailbox (or left without one): the next call may follow."""
        lane = self._lanes.get(turn.lane)
        if lane is not None:
            lane.used = time.monotonic()
            self._advance(lane, turn.seq + 1)

    def forget_idle(self, idle_seconds: float) -> int:
        """Drop the lanes no call waits in and none has used for ``idle_seconds``; returns how many."""
        cutoff = time.monotonic() - idle_seconds
        idle = [name for name, lane in self._lanes.items() if not lane.waiters and lane.used < cutoff]
        for name in idle:
            del self._lanes[name]
        return len(idle)

    def __len__(self) -> int:
        return len(self._lanes)

    @staticmethod
    def _advance(lane: _ArrivingLane, to: int) -> None:
        if to <= lane.next:
            return
        lane.next = to
        for seq, waiter in lane.waiters.items():
            if seq <= to and not waiter.done():
                waiter.set_result(None)
