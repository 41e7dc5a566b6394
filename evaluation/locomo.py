"""``hermes-memory eval locomo``: LoCoMo retrieval through the real memory path, next to two plain baselines.

    hermes-memory eval locomo --data FILE --out RANKED.jsonl [--k 50] [--system memory|bm25|dense|fused|all]
                              [--holdout SAMPLE_ID,...]

For the ``memory`` system each conversation becomes one user of a fresh tenant, ingested session by session
through the service's ``writes.write_turns`` — rule extraction, both gates and the default capacities (working
200, long-term 1000, core 50; nothing raised for the benchmark) — over a real ``MemoryStore`` (SQLite in a
temporary directory) and the E5 embedder; recall reads only the service's in-memory routes, as in a host.
The service's clock follows the conversation: each session is written at its own date, questions are
asked the day after the last session. Each question is then one ``recall`` (k hits, archive included); its
ranked dialog ids are the hits' source dialog ids, best hit first: each hit's first source at its rank, the
other sources of a restated or merged memory after every hit's first (``ranked_dia_ids``).

Output: one JSON line per question, ``{"sample_id", "question_index", "ranked_dia_ids"}``. When the file
carries evidence, recall figures per category are printed (``evaluation.metrics``); the ranking itself
never reads evidence or answers (``evaluation.data``). ``--holdout`` names conversations kept out of
tuning: the figures are then printed for the tuned part, the held-out part and the whole file.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from actors.adapters.embedding import Embedder, make_embedder
from actors.app.learned_reading import make_reader
from actors.app.service import UserMemoryService
from actors.app.write import ClauseReader
from actors.store.sql.store import MemoryStore
from evaluation.baselines import BM25Baseline, DenseBaseline, FusedBaseline
from evaluation.data import Conversation, load_conversations
from evaluation.metrics import Figures, load_evidence, score, table
from schemas import api
from schemas.settings import GatePolicy, HermesSettings

SYSTEMS = ("memory", "bm25", "dense", "fused")
TENANT = "locomo"
QUESTION_DELAY = timedelta(days=1)


class CachingEmbedder:
    """Wraps an embedder with per-text caches, so a conversation's questions are embedded in one batch (the
    service then asks for them one at a time) and the dense baseline reuses vectors the service computed."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.dim = inner.dim
        self._passages: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    def _cached(self, texts: list[str], cache: dict[str, np.ndarray], embed: Callable) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing:
            cache.update(zip(missing, np.asarray(embed(missing), dtype=np.float32), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([cache[t] for t in texts])

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._cached(list(texts), self._passages, self.inner.embed_passages)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._cached(list(texts), self._queries, self.inner.embed_queries)


class ConversationClock:
    """The service's clock during an evaluation: the time of whatever is being written or asked."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def user_id_for(sample_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.:@-]", "_", sample_id)[:128] or "conversation"


class MemorySystem:
    """Ranks through the memory service: ingest with ``write_turns``, ask with ``recall``."""

    name = "memory"

    def __init__(self, store: MemoryStore, embedder: Embedder, policy: GatePolicy):
        self.store, self.embedder, self.policy = store, embedder, policy
        # the clause reader a host runs beside the rules (``UserHost.reader``)
        settings = HermesSettings()
        self.reader: ClauseReader | None = (
            make_reader(settings.reader, embedder) if settings.semantic_reader else None
        )

    def service(self, conversation: Conversation, clock: ConversationClock) -> UserMemoryService:
        return UserMemoryService(
            TENANT,
            user_id_for(conversation.sample_id),
            store=self.store,
            embedder=self.embedder,
            policy=self.policy,
            reader=lambda: self.reader,
            clock=clock,
        )

    def ingest(self, conversation: Conversation) -> UserMemoryService:
        clock = ConversationClock(conversation.ended_at)
        svc = self.service(conversation, clock)
        for session in conversation.sessions:
            turns = [
                api.TurnIn(role="user", text=u.text[: api.MAX_TURN_CHARS], dialog_id=u.dia_id, at=u.at)
                for u in session.utterances
            ]
            for start in range(0, len(turns), api.MAX_TURNS_PER_BATCH):
                last = turns[min(start + api.MAX_TURNS_PER_BATCH, len(turns)) - 1].at
                assert last is not None  # every turn carries its utterance's time
                clock.now = last
                svc.writes.write_turns(
                    api.WriteTurnsRequest(
                        session_id=f"{user_id_for(conversation.sample_id)}-s{session.number}",
                        turns=turns[start : start + api.MAX_TURNS_PER_BATCH],
                    )
                )
        clock.now = conversation.ended_at + QUESTION_DELAY
        return svc

    def rank(self, conversation: Conversation, k: int) -> list[list[str]]:
        svc = self.ingest(conversation)
        self.embedder.embed_queries([q.text for q in conversation.questions])  # one batch, then cached
        return [
            ranked_dia_ids(svc.recalls.recall(api.RecallRequest(query=q.text[: api.MAX_QUERY_CHARS], k=k)))
            for q in conversation.questions
        ]


def ranked_dia_ids(response: api.RecallResponse) -> list[str]:
    """Each hit's first source (the turn it was said in) at the hit's rank, then the other sources of every
    hit in the hits' order: a memory restated many times ranks once, its restatements do not crowd the
    ranks of the memories after it."""
    sources = [hit.memory.source_dialog_ids for hit in response.hits]
    firsts = [ids[0] for ids in sources if ids]
    return list(dict.fromkeys([*firsts, *(d for ids in sources for d in ids[1:])]))


@contextmanager
def memory_backend(workdir: Path) -> Iterator[MemoryStore]:
    """A fresh SQLite store holding the evaluation's tenant."""
    store = MemoryStore(f"sqlite:///{workdir / 'locomo.db'}")
    store.create_schema()
    store.tenants.create(TENANT, "LoCoMo evaluation")
    try:
        yield store
    finally:
        store.dispose()


def _out_path(out: Path, system: str, systems: list[str]) -> Path:
    if len(systems) == 1 or system == "memory":
        return out
    return out.with_name(f"{out.stem}.{system}{out.suffix or '.jsonl'}")


def write_rankings(
    path: Path, conversations: list[Conversation], rankings: list[list[list[str]]]
) -> list[dict]:
    lines = [
        {"sample_id": c.sample_id, "question_index": q.index, "ranked_dia_ids": ranked}
        for c, ranked_by_question in zip(conversations, rankings, strict=True)
        for q, ranked in zip(c.questions, ranked_by_question, strict=True)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return lines


def _print(message: str) -> None:
    print(message, flush=True)


def _rankers(systems: list[str], embedder: Embedder, stack: ExitStack) -> dict:
    rankers: dict = {
        "bm25": BM25Baseline(),
        "dense": DenseBaseline(embedder),
        "fused": FusedBaseline(embedder),
    }
    if "memory" in systems:  # only the memory system needs SQL
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hermes-locomo-")))
        store = stack.enter_context(memory_backend(workdir))
        rankers["memory"] = MemorySystem(store, embedder, GatePolicy())
    return rankers


def run(
    data: Path,
    out: Path,
    k: int = 50,
    systems: list[str] | None = None,
    log: Callable[[str], None] = _print,
    holdout: frozenset[str] = frozenset(),
    model: Embedder | None = None,
) -> dict:
    """Rank every question with each system, write the rankings, and return the figures of the whole file
    (empty without evidence in it); with ``holdout``, also print those of the tuned and held-out parts.
    ``model`` embeds; by default the one ``HERMES_EMBEDDER`` names, as the service."""
    systems = systems or ["memory"]
    conversations = load_conversations(data)
    embedder = CachingEmbedder(model or make_embedder(HermesSettings().embedder))
    graded = load_evidence(data)
    figures: dict[str, dict[str, Figures]] = {}  # part of the file → system → figures
    with ExitStack() as stack:
        rankers = _rankers(systems, embedder, stack)
        for system in systems:
            started = time.monotonic()
            rankings = []
            for conversation in conversations:
                rankings.append(rankers[system].rank(conversation, k))
                log(
                    f"[{system}] {conversation.sample_id}: {len(conversation.utterances)} turns, "
                    f"{len(conversation.questions)} questions ({time.monotonic() - started:.0f} s)"
                )
            lines = write_rankings(_out_path(out, system, systems), conversations, rankings)
            if graded:
                for part, keep in _parts(holdout).items():
                    chosen = [line for line in lines if keep(line["sample_id"])]
                    figures.setdefault(part, {})[system] = score(chosen, graded)
    for part, results in figures.items():
        log(
            f"\n{part}: evidence recall@10 (R@10), session recall_any@5 (S@5) and evidence recall@30 (R@30); "
            "category 5 skipped"
        )
        log(table(results))
    return figures.get(WHOLE_FILE, {})


WHOLE_FILE = "whole file"


def _parts(holdout: frozenset[str]) -> dict[str, Callable[[str], bool]]:
    """The parts of the file figures are printed for: the whole file, and with a holdout its two sides."""
    if not holdout:
        return {WHOLE_FILE: lambda _: True}
    return {
        "tuned on": lambda sample_id: sample_id not in holdout,
        f"held out ({', '.join(sorted(holdout))})": lambda sample_id: sample_id in holdout,
        WHOLE_FILE: lambda _: True,
    }
