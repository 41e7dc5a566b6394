"""The batching embedder's schedule: concurrent calls share model calls, each caller gets its own texts'
vectors, a query waits for at most one chunk of passages, passages are never starved by queries, and the
passages a waiting read depends on are hurried before the other passages.

Arrivals are placed deterministically: the model holds each call until the calls scripted to arrive during it
are queued (read off the embedder's queues, never a sleep), so a schedule replays exactly."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.adapters.embedding import HashEmbedder
from actors.runtime.batching import MAX_BATCH_TEXTS, PASSAGE_CHUNK_TEXTS, BatchingEmbedder

DIM = 32
REFERENCE = HashEmbedder(DIM)


@dataclass
class Arrival:
    mode: str  # "query" or "passage"
    texts: list[str]


@dataclass
class Call:
    mode: str
    texts: list[str]
    #: the arrivals (their indices in the script) queued while this call ran
    arrived: list[int] = field(default_factory=list)


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the embedder's queue never reached the expected state"
        time.sleep(0.001)


def queued(batching: BatchingEmbedder) -> int:
    return sum(len(waiting) for waiting in batching._waiting.values())


class ReferenceModel:
    """The reference vectors, every model call seen first by ``_call``."""

    dim = DIM

    def _call(self, mode: str, texts: list[str]) -> None:
        raise NotImplementedError

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self._call("passage", texts)
        return REFERENCE.embed_passages(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self._call("query", texts)
        return REFERENCE.embed_queries(texts)


class ScriptedModel(ReferenceModel):
    """Logs every model call; during call n, submits the arrivals scripted for it (each from its own thread,
    in the order of the script) and returns once they are all queued."""

    def __init__(self, script: dict[int, list[int]], arrivals: list[Arrival]):
        self.script, self.arrivals = script, arrivals
        self.calls: list[Call] = []
        self.results: dict[int, np.ndarray] = {}
        self.threads: list[threading.Thread] = []
        self.batching: BatchingEmbedder | None = None

    def submit(self, index: int) -> None:
        assert self.batching is not None
        arrival = self.arrivals[index]
        embed = self.batching.embed_queries if arrival.mode == "query" else self.batching.embed_passages

        def run() -> None:
            self.results[index] = embed(arrival.texts)

        thread = threading.Thread(target=run)
        self.threads.append(thread)
        thread.start()

    def _call(self, mode: str, texts: list[str]) -> None:
        assert self.batching is not None
        call = Call(mode, list(texts), self.script.pop(len(self.calls), []))
        self.calls.append(call)
        batching = self.batching
        for index in call.arrived:  # one at a time: the queue holds them in the script's order
            before = queued(batching)
            self.submit(index)
            wait_until(lambda before=before: queued(batching) > before)


def run_script(first: Arrival, script: dict[int, list[Arrival]]) -> tuple[ScriptedModel, list[Arrival]]:
    """``first`` starts the worker; ``script[n]`` arrive while model call n runs, or when the worker is idle
    if fewer calls came before them."""
    arrivals = [first]
    indices: dict[int, list[int]] = {}
    for n, during in sorted(script.items()):
        indices[n] = list(range(len(arrivals), len(arrivals) + len(during)))
        arrivals.extend(during)
    model = ScriptedModel(indices, arrivals)
    model.batching = BatchingEmbedder(model)
    model.submit(0)
    while True:
        wait_until(lambda: len(model.results) == len(model.threads))
        if not model.script:
            break
        # the worker is idle before the call these were scripted for: the first arrives now and starts a
        # call, the others arrive during it
        first_index, *others = model.script.pop(min(model.script))
        if others:
            model.script[len(model.calls)] = others
        model.submit(first_index)
    for thread in model.threads:
        thread.join(30)
    return model, arrivals


def texts(prefix: str, count: int) -> list[str]:
    return [f"{prefix} text {n}" for n in range(count)]


def test_waiting_queries_share_a_model_call_and_each_gets_its_own_vectors():
    script = {0: [Arrival("query", [f"question {n}"]) for n in range(19)] + [Arrival("passage", ["a turn"])]}
    model, arrivals = run_script(Arrival("passage", ["first turn"]), script)
    # the first call alone, then the 19 queries that queued behind it in one call, then the passage
    assert [(call.mode, len(call.texts)) for call in model.calls] == [
        ("passage", 1),
        ("query", 19),
        ("passage", 1),
    ]
    for index, arrival in enumerate(arrivals):
        embed = REFERENCE.embed_queries if arrival.mode == "query" else REFERENCE.embed_passages
        assert np.allclose(model.results[index], embed(arrival.texts))
    # a caller may keep its vectors (a user's query cache): they are its own, not a view of the call's batch
    assert all(model.results[i].flags.owndata for i, a in enumerate(arrivals) if a.mode == "query")


def test_a_submitted_call_is_a_future_and_an_empty_one_is_answered_at_once():
    batching = BatchingEmbedder(HashEmbedder(DIM))
    empty = batching.submit("query", [])
    assert empty.done() and empty.result().shape == (0, DIM)
    assert np.allclose(
        batching.submit("query", ["a question"]).result(30), REFERENCE.embed_queries(["a question"])
    )


def test_a_query_waits_for_one_chunk_of_passages_at_most():
    script = {0: [Arrival("passage", texts("turn", 10)), Arrival("query", ["when did I move?"])]}
    script[2] = [Arrival("query", ["where do I live?"])]
    model, arrivals = run_script(Arrival("passage", ["first turn"]), script)
    chunks = [("passage", PASSAGE_CHUNK_TEXTS)] * (10 // PASSAGE_CHUNK_TEXTS)
    assert (
        [(call.mode, len(call.texts)) for call in model.calls]
        == [
            ("passage", 1),
            ("query", 1),  # queued after ten passages, embedded before them
            chunks[0],
            ("query", 1),  # queued during the first chunk: embedded right after it
            *chunks[1:],
        ]
    )
    # a call embedded over several model calls gets its ten vectors in order
    assert np.allclose(model.results[1], REFERENCE.embed_passages(arrivals[1].texts))
    assert np.allclose(model.results[2], REFERENCE.embed_queries(arrivals[2].texts))


def test_a_stream_of_queries_does_not_starve_passages():
    # a new query arrives during every call: a query is always waiting
    script = {n: [Arrival("query", [f"question {n}"])] for n in range(12)}
    script[0].append(Arrival("passage", texts("turn", 3 * PASSAGE_CHUNK_TEXTS)))
    model, _ = run_script(Arrival("query", ["first question"]), script)
    modes = [call.mode for call in model.calls]
    # the first question's call, then the passages in three chunks, each after one call of queries
    assert modes[:7] == ["query", "passage", "query", "passage", "query", "passage", "query"]


class HeldModel(ReferenceModel):
    """Logs every model call and holds the first one until released, so the calls behind it queue up."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.release = threading.Event()

    def _call(self, mode: str, texts: list[str]) -> None:
        self.calls.append((mode, list(texts)))
        if len(self.calls) == 1:
            assert self.release.wait(30)


def test_hurried_passages_go_before_other_passages_and_after_waiting_queries():
    model = HeldModel()
    batching = BatchingEmbedder(model)
    first = batching.submit("passage", ["the first turn"])
    wait_until(lambda: len(model.calls) == 1)  # the worker is inside the first call
    bobs = batching.submit("passage", ["bob's turn"], owner="bob")
    alices_turn = texts("alice's turn", 2 * PASSAGE_CHUNK_TEXTS + 1)
    alices: list[np.ndarray] = []
    alice = batching.owned_by("alice")
    writer = threading.Thread(target=lambda: alices.append(alice.embed_passages(alices_turn)))
    writer.start()  # as a host's user service embeds a write's passages
    wait_until(lambda: queued(batching) == 2)
    question = batching.submit("query", ["carol's question"], owner="carol")
    batching.hurry("alice")  # alice's recall waits behind her write
    batching.hurry("dave")  # nothing of dave's waits: nothing moves
    model.release.set()
    writer.join(30)
    for future in (first, bobs, question):
        future.result(30)
    step = PASSAGE_CHUNK_TEXTS
    chunks = [alices_turn[n : n + step] for n in range(0, len(alices_turn), step)]
    assert model.calls == [
        ("passage", ["the first turn"]),
        ("query", ["carol's question"]),  # queries keep their priority
        *[("passage", chunk) for chunk in chunks],  # before bob's, which was queued first
        ("passage", ["bob's turn"]),
    ]
    assert np.allclose(alices[0], REFERENCE.embed_passages(alices_turn))


@st.composite
def arrivals(draw: st.DrawFn, prefix: str) -> Arrival:
    return Arrival(draw(st.sampled_from(["query", "passage"])), texts(prefix, draw(st.integers(1, 9))))


def scripts(draw: st.DrawFn) -> dict[int, list[Arrival]]:
    calls = draw(st.lists(st.integers(0, 8), max_size=6, unique=True))
    # every text unique across the script, so each can be followed to the call that embeds it
    return {n: [draw(arrivals(f"{n}.{k}")) for k in range(draw(st.integers(1, 4)))] for n in calls}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=arrivals("first"), script=st.composite(scripts)())
def test_every_schedule_answers_each_caller_within_bounded_waits(first, script):
    model, sent = run_script(first, script)
    for index, arrival in enumerate(sent):
        embed = REFERENCE.embed_queries if arrival.mode == "query" else REFERENCE.embed_passages
        assert np.allclose(model.results[index], embed(arrival.texts))
    calls = model.calls
    for call in calls:
        limit = PASSAGE_CHUNK_TEXTS if call.mode == "passage" else MAX_BATCH_TEXTS
        assert 1 <= len(call.texts) <= limit
    for mode in ("query", "passage"):  # every text embedded once, in the order its calls arrived
        assert [t for c in calls if c.mode == mode for t in c.texts] == [
            t for a in sent if a.mode == mode for t in a.texts
        ]
    for n, call in enumerate(calls):
        for index in call.arrived:
            arrival = sent[index]
            last = max(m for m, c in enumerate(calls) if set(c.texts) & set(arrival.texts))
            waited = "".join(c.mode[0] for c in calls[n + 1 : last])  # the calls it waited through
            if arrival.mode == "query":
                assert waited.count("p") <= 1
            else:  # while passages wait, a call of queries is followed by a call of passages
                assert "qq" not in calls[n].mode[0] + waited
