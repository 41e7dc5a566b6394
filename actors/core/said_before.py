"""What a memory was said in answer to: the turns just before its own in its session (docs/locomo.md).

A reply ("It taught me self-acceptance") holds few of its question's words; the question is the turn or two
before it, often the other speaker's (an assistant's turn makes no memory, but it is what the user
answered). Each memory keeps those turns beside it as its *context* (``MemoryItem.context``): recall's
keyword route matches it at a lower weight than the memory's own words (``actors.core.recall.view``), and
nothing shows it as the user's words or renders it into a prompt (the API's ``MemoryOut`` has no such
field; export carries it as ``context``).

Context is cleaned as a memory is: a turn that tries to instruct a future model gives none, secrets and
identifiers are redacted, and a user's orders to the assistant are cut out
(``actors.core.extraction.context_words``). Callers usually send one turn per request, so the preceding
turns may have come in an earlier request: ``SessionTurns`` keeps each recent session's last few cleaned
turns in the user's service. It lives in memory only: after the user's host restarts (or the user is
passivated) the first turns of a session that goes on get the context of their own request only.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence

from actors.core.forgetting import cut_out

#: how many turns before a memory's own are its context (tuned on LoCoMo's conv-26, 30 and 41: docs/locomo.md)
CONTEXT_TURNS = 2
#: a turn's words kept as context at most (a long turn's opening is what it asked)
CONTEXT_TURN_CHARS = 500
#: sessions whose last turns a user's service keeps (the most recently written); older ones are dropped
SESSIONS_KEPT = 4


def context_of(preceding: Sequence[str], turns: int = CONTEXT_TURNS) -> str | None:
    """The context of a turn given its session's cleaned turns before it, oldest first: the last ``turns``
    of them, one a line; None when they hold nothing."""
    kept = [turn for turn in preceding[-turns:] if turn] if turns > 0 else []
    return "\n".join(kept) or None


class SessionTurns:
    """The last ``turns`` cleaned turns of a user's ``sessions`` most recent sessions: bounded by both, so a
    resident user holds at most ``sessions × turns × CONTEXT_TURN_CHARS`` characters of them."""

    def __init__(self, turns: int = CONTEXT_TURNS, sessions: int = SESSIONS_KEPT):
        self.turns = turns
        self.sessions = sessions
        self._by_session: OrderedDict[str, deque[str]] = OrderedDict()

    def before(self, session_id: str) -> list[str]:
        """The session's kept turns, oldest first."""
        return list(self._by_session.get(session_id, ()))

    def add(self, session_id: str, words: str) -> None:
        """A turn of the session, as context keeps it ("" for a turn that gives none: it still counts)."""
        kept = self._by_session.pop(session_id, None) or deque(maxlen=self.turns)
        kept.append(words[:CONTEXT_TURN_CHARS])
        self._by_session[session_id] = kept
        while len(self._by_session) > self.sessions:
            self._by_session.popitem(last=False)

    def copy(self) -> SessionTurns:
        """An independent copy (a preview reads the turns without keeping them)."""
        twin = SessionTurns(self.turns, self.sessions)
        for session_id, kept in self._by_session.items():
            twin._by_session[session_id] = deque(kept, maxlen=self.turns)
        return twin

    def forget(self, forgotten: Sequence[str]) -> None:
        """Cut forgotten memories' words out of the kept turns (a turn that would keep a word of them
        goes)."""
        for kept in self._by_session.values():
            for n, turn in enumerate(kept):
                kept[n] = (cut_out(turn, list(forgotten), "") or "") if turn else turn

    def clear(self) -> None:
        self._by_session.clear()

    @property
    def nbytes(self) -> int:
        """Rough bytes held: the turns' characters and a deque's overhead per session."""
        return sum(600 + sum(len(turn) for turn in kept) for kept in self._by_session.values())
