"""``BatchingEmbedder``: one model shared by every user of a host; the queries of concurrent calls are
embedded in one model call. A single worker thread runs the model; whatever arrives while it is busy waits
for a later call, so a lone call waits for nothing and a burst of queries is embedded at batch speed
(docs/architecture.md).

Queries go first. A recall's query is what an agent waits on before it answers; a write's passages are the
turn it already answered. The worker takes every waiting query in one call, then at most
``PASSAGE_CHUNK_TEXTS`` passages, then the queries that came meanwhile, and so on: a query waits for at most
one chunk of passages, and passages are never starved by a stream of queries (one chunk per turn). A call
with more passages than a chunk is embedded over several turns and answered when its last chunk is done.

Passages a read waits on go first among passages. A recall queued behind its user's write waits for that
write's passages however soon its own query is embedded; so the host ``hurry``-s them (their owner is the
user) to the head of the passages. They still take the passages' turns, after a call of queries: putting
them before the queries too was measured, and it took from the other users' recalls what it gave this
one (docs/benchmarks.md, eleventh round).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Hashable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from actors.adapters.embedding import Embedder
from actors.app.write import TokenStates
from actors.language.reader.reader import StatesEmbedder

Mode = Literal["passage", "query"]
#: most queries in one model call: bigger batches gain little speed per text and delay the first waiter
MAX_BATCH_TEXTS = 64
#: most passages in one model call. A model call costs the sum of its texts (the engine pads little,
#: docs/embedder-choice.md): 96 LoCoMo turns took the same CPU in chunks of 1, 4 or 64, while a query
#: behind writers waited 110 ms at p50 with chunks of 1 and 311 ms with chunks of 4 on this machine kind
#: (tests/bench/bench_embed_queue.py: a LoCoMo turn is ~75 ms of one of its slower cores)
PASSAGE_CHUNK_TEXTS = 1


@dataclass(slots=True)
class _Request:
    texts: list[str]
    #: whose texts they are (a host's user), so that a call of theirs that waits can hurry them
    owner: Hashable | None = None
    done: Future[np.ndarray] = field(default_factory=Future)
    #: texts handed to the model so far, and their vectors (a passage call may span several model calls)
    taken: int = 0
    parts: list[np.ndarray] = field(default_factory=list)
    #: each text's token states and spans from the same pass, when asked for (passages only)
    states: list[tuple[np.ndarray, np.ndarray]] | None = None


@dataclass(slots=True)
class _Piece:
    request: _Request
    start: int
    stop: int


class BatchingEmbedder:
    """The ``Embedder`` protocol over a shared model, thread-safe; counts calls and texts for the stats."""

    def __init__(self, model: Embedder):
        self.model = model
        self.dim = model.dim
        self.model_calls = 0
        self.texts = 0
        self._waiting: dict[Mode, deque[_Request]] = {"query": deque(), "passage": deque()}
        self._hurried: deque[_Request] = deque()  # passages a waiting read depends on
        self._arrived = threading.Condition()
        self._worker = threading.Thread(target=self._run, name="embedder", daemon=True)
        self._worker.start()

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.submit("passage", texts).result()

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.submit("query", texts).result()

    def embed_passages_with_states(
        self, texts: list[str]
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        return _unzipped(self.submit_with_states(texts).result())

    def submit_with_states(
        self, texts: Sequence[str], owner: Hashable | None = None
    ) -> Future[tuple[np.ndarray, TokenStates]]:
        """Queue passages whose token states are wanted too (the model must give them:
        ``StatesEmbedder``); the future answers their vectors and states, from one forward pass."""
        request = _Request(list(texts), owner, states=[])
        answer: Future[tuple[np.ndarray, TokenStates]] = Future()

        def answered(done: Future[np.ndarray]) -> None:
            error = done.exception()
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result((done.result(), tuple(request.states or ())))

        request.done.add_done_callback(answered)
        self._queue("passage", request)
        return answer

    def owned_by(self, owner: Hashable) -> OwnedEmbedder:
        """The ``Embedder`` protocol for ``owner``'s calls: what they submit can be hurried."""
        return OwnedEmbedder(self, owner)

    def hurry(self, owner: Hashable) -> None:
        """``owner``'s waiting passages go before every other passage that waits."""
        with self._arrived:
            passages = self._waiting["passage"]
            theirs = [r for r in passages if r.owner == owner]
            if theirs:
                self._hurried.extend(theirs)
                self._waiting["passage"] = deque(r for r in passages if r.owner != owner)

    def submit(self, mode: Mode, texts: Sequence[str], owner: Hashable | None = None) -> Future[np.ndarray]:
        """Queue ``texts``; the future answers their vectors (an event loop awaits it with no thread)."""
        request = _Request(list(texts), owner)
        self._queue(mode, request)
        return request.done

    def _queue(self, mode: Mode, request: _Request) -> None:
        if not request.texts:
            request.done.set_result(np.zeros((0, self.dim), dtype=np.float32))
            return
        with self._arrived:
            self._waiting[mode].append(request)
            self._arrived.notify()

    def _run(self) -> None:
        passages_next = False  # after a call of queries, passages have their turn
        while True:
            with self._arrived:
                while not (self._hurried or any(self._waiting.values())):
                    self._arrived.wait()
                queries, passages = self._waiting["query"], self._hurried or self._waiting["passage"]
                mode: Mode = "passage" if passages and (passages_next or not queries) else "query"
                pieces = _take(passages, PASSAGE_CHUNK_TEXTS) if mode == "passage" else _take(queries)
            if pieces:
                self._embed(pieces, mode)
            passages_next = mode == "query"

    def _embed(self, pieces: list[_Piece], mode: Mode) -> None:
        texts = [text for p in pieces for text in p.request.texts[p.start : p.stop]]
        with_states = any(p.request.states is not None for p in pieces)
        states: list[tuple[np.ndarray, np.ndarray]] = []
        try:
            if with_states:
                if not isinstance(self.model, StatesEmbedder):
                    raise TypeError(f"{type(self.model).__name__} gives no token states")
                found, token_states, spans = self.model.embed_passages_with_states(texts)
                vectors = np.asarray(found, dtype=np.float32)
                states = list(zip(token_states, spans, strict=True))
            else:
                embed = self.model.embed_queries if mode == "query" else self.model.embed_passages
                vectors = np.asarray(embed(texts), dtype=np.float32)
        except Exception as exc:  # every waiter must hear of the failure, not hang
            for p in pieces:
                if not p.request.done.done():
                    p.request.done.set_exception(exc)
            return
        self.model_calls += 1
        self.texts += len(texts)
        start = 0
        for p in pieces:
            request = p.request
            part = vectors[start : start + p.stop - p.start]
            # a caller may keep its vectors (a user's query cache): not as a view pinning the others' rows
            request.parts.append(part.copy() if len(pieces) > 1 else part)
            if request.states is not None:
                request.states += states[start : start + p.stop - p.start]
            start += p.stop - p.start
            if p.stop == len(request.texts) and not request.done.done():
                parts = request.parts
                request.done.set_result(parts[0] if len(parts) == 1 else np.concatenate(parts))


def _take(waiting: deque[_Request], limit: int = MAX_BATCH_TEXTS) -> list[_Piece]:
    """Texts of the waiting calls, oldest first, up to ``limit``: whole calls, and the front of the first
    call that does not fit; a call leaves the queue when all its texts are taken."""
    pieces: list[_Piece] = []
    room = limit
    while waiting and room > 0:
        request = waiting[0]
        if request.done.done():  # an earlier chunk of it failed: its caller has heard
            waiting.popleft()
            continue
        stop = min(len(request.texts), request.taken + room)
        pieces.append(_Piece(request, request.taken, stop))
        room -= stop - request.taken
        request.taken = stop
        if stop == len(request.texts):
            waiting.popleft()
    return pieces


class OwnedEmbedder:
    """A shared ``BatchingEmbedder`` as one owner's ``Embedder``."""

    __slots__ = ("dim", "owner", "shared")

    def __init__(self, shared: BatchingEmbedder, owner: Hashable):
        self.shared, self.owner, self.dim = shared, owner, shared.dim

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.shared.submit("passage", texts, self.owner).result()

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.shared.submit("query", texts, self.owner).result()

    def embed_passages_with_states(
        self, texts: list[str]
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        return _unzipped(self.shared.submit_with_states(texts, self.owner).result())


def _unzipped(
    embedded: tuple[np.ndarray, TokenStates],
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Vectors and per-text (states, spans) as ``StatesEmbedder`` answers them: vectors, states, spans."""
    vectors, states = embedded
    return vectors, [s for s, _ in states], [spans for _, spans in states]
