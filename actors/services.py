"""Cluster-wide shared services: one embedder actor and one vector-index actor, and the plain proxies
(``RemoteEmbedder``, ``RemoteIndex``) through which user actors reach them.

Why actors: the embedding model (~100 MB, CPU-heavy) and the Milvus client are loaded once per cluster,
not once per user actor, so a user actor stays a lean process (no model, no pymilvus). The embedder actor
batches: concurrent requests arriving within a few milliseconds are embedded in one model call.

Both actors are named in ``settings.namespace`` and detached, so they outlive the process that built the
Serve application (``serve deploy`` builds it in a short-lived task). Errors: a dead or unreachable service
actor becomes ``StoreUnavailable`` (HTTP 503); a ``HermesError`` raised inside one is re-raised as itself.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from actors.errors import HermesError, InvalidInput, StoreUnavailable
from actors.store.vectors import VectorHit, VectorRow
from actors.tracing import attached, inject_context, span
from schemas.enums import Layer
from schemas.settings import HermesSettings

EMBEDDER_ACTOR_NAME = "embedder"
INDEX_ACTOR_NAME = "vector-index"
#: how long a proxy waits for a shared service before reporting it unavailable
CALL_TIMEOUT_SECONDS = 60.0
#: the ``VectorIndex`` operations ``IndexActor.run`` performs
INDEX_OPERATIONS = frozenset({"ensure_tenant", "upsert", "delete", "delete_user", "search", "ids"})

EmbedMode = Literal["passage", "query"]


@dataclass
class _Batch:
    requests: list[tuple[list[str], asyncio.Future[np.ndarray]]] = field(default_factory=list)
    flusher: asyncio.Task[None] | None = None


@ray.remote(num_cpus=0)
class EmbedderActor:
    """Holds the real embedder; an async actor whose requests queue per mode and flush in batches."""

    def __init__(self, embedder_name: str, batch_window_ms: float = 5.0):
        from actors.embedding import make_embedder

        self._embedder = make_embedder(embedder_name)
        self._window = batch_window_ms / 1000.0
        self._batches: dict[EmbedMode, _Batch] = {"passage": _Batch(), "query": _Batch()}
        # one model call at a time: requests arriving meanwhile join the next (bigger) batch
        self._model_lock = asyncio.Lock()
        self._calls = 0
        self._texts = 0

    def dimension(self) -> int:
        return int(self._embedder.dim)

    async def embed(
        self, mode: EmbedMode, texts: list[str], trace_context: dict[str, str] | None = None
    ) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._embedder.dim), dtype=np.float32)
        with attached(trace_context), span("embedder.embed", mode=mode, texts=len(texts)):
            batch = self._batches[mode]
            future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
            batch.requests.append((texts, future))
            if batch.flusher is None:
                batch.flusher = asyncio.create_task(self._flush(mode))
            return await future

    async def _flush(self, mode: EmbedMode) -> None:
        await asyncio.sleep(self._window)
        async with self._model_lock:
            batch = self._batches[mode]
            requests, batch.requests, batch.flusher = batch.requests, [], None
            texts = [text for chunk, _ in requests for text in chunk]
            embed = self._embedder.embed_passages if mode == "passage" else self._embedder.embed_queries
            try:
                vectors = await asyncio.to_thread(embed, texts)
            except Exception as exc:  # every waiter must hear of the failure, not hang
                for _, future in requests:
                    future.set_exception(exc)
                return
            self._calls += 1
            self._texts += len(texts)
        start = 0
        for chunk, future in requests:
            future.set_result(vectors[start : start + len(chunk)])
            start += len(chunk)

    def stats(self) -> dict[str, float]:
        return {
            "model_calls": self._calls,
            "texts": self._texts,
            "mean_batch": self._texts / self._calls if self._calls else 0.0,
        }


@ray.remote(num_cpus=0, max_concurrency=8)
class IndexActor:
    """Holds the one Milvus client of the cluster; a threaded actor so searches overlap."""

    def __init__(self, milvus_uri: str, collection: str, dim: int):
        from actors.store.milvus import MilvusIndex

        self._index = MilvusIndex(milvus_uri, collection, dim)

    def run(self, operation: str, *args: Any, trace_context: dict[str, str] | None = None) -> Any:
        """One ``VectorIndex`` operation, as a child span of the caller's."""
        if operation not in INDEX_OPERATIONS:
            raise InvalidInput(f"unknown index operation {operation[:64]!r}")
        with attached(trace_context), span(f"index.{operation}", tenant_id=args[0] if args else ""):
            return getattr(self._index, operation)(*args)


#: a crashed service actor is restarted by Ray and its calls retried: every one of them is idempotent
#: (embedding, search, upsert and delete by id), and the handles user actors hold stay valid
_SERVICE_OPTIONS = {"get_if_exists": True, "lifetime": "detached", "max_restarts": -1, "max_task_retries": 2}


def embedder_actor(settings: HermesSettings) -> ray.actor.ActorHandle:
    """The cluster's embedder actor: found by name, created on first use."""
    return EmbedderActor.options(
        name=EMBEDDER_ACTOR_NAME, namespace=settings.namespace, **_SERVICE_OPTIONS
    ).remote(settings.embedder)


def index_actor(settings: HermesSettings, dim: int) -> ray.actor.ActorHandle:
    """The cluster's index actor: found by name, created on first use with the embedder's dimension."""
    return IndexActor.options(name=INDEX_ACTOR_NAME, namespace=settings.namespace, **_SERVICE_OPTIONS).remote(
        settings.milvus_uri, settings.milvus_collection, dim
    )


def _get(ref: ray.ObjectRef, service: str) -> Any:
    try:
        return ray.get(ref, timeout=CALL_TIMEOUT_SECONDS)
    except RayTaskError as exc:
        if isinstance(exc.cause, HermesError):
            raise exc.cause from None
        raise
    except (RayActorError, GetTimeoutError) as exc:
        raise StoreUnavailable(f"{service} unavailable: {type(exc).__name__}") from exc


class RemoteEmbedder:
    """The ``Embedder`` Protocol over the shared embedder actor."""

    def __init__(self, actor: ray.actor.ActorHandle):
        self._actor = actor
        self.dim: int = _get(actor.dimension.remote(), "embedder")

    @classmethod
    def connect(cls, settings: HermesSettings) -> RemoteEmbedder:
        return cls(embedder_actor(settings))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return _get(self._actor.embed.remote("passage", texts, inject_context()), "embedder")

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return _get(self._actor.embed.remote("query", texts, inject_context()), "embedder")


class RemoteIndex:
    """The ``VectorIndex`` Protocol over the shared index actor."""

    def __init__(self, actor: ray.actor.ActorHandle):
        self._actor = actor

    @classmethod
    def connect(cls, settings: HermesSettings, dim: int) -> RemoteIndex:
        return cls(index_actor(settings, dim))

    def _run(self, operation: str, *args: Any) -> Any:
        return _get(self._actor.run.remote(operation, *args, trace_context=inject_context()), "vector index")

    def ensure_tenant(self, tenant_id: str) -> None:
        self._run("ensure_tenant", tenant_id)

    def upsert(self, tenant_id: str, rows: list[VectorRow]) -> None:
        self._run("upsert", tenant_id, rows)

    def delete(self, tenant_id: str, memory_ids: list[str]) -> None:
        self._run("delete", tenant_id, memory_ids)

    def delete_user(self, tenant_id: str, user_id: str) -> None:
        self._run("delete_user", tenant_id, user_id)

    def search(
        self, tenant_id: str, user_id: str, vector: np.ndarray, k: int, layers: frozenset[Layer] | None = None
    ) -> list[VectorHit]:
        return self._run("search", tenant_id, user_id, vector, k, layers)

    def ids(self, tenant_id: str, user_id: str | None = None) -> set[str]:
        return self._run("ids", tenant_id, user_id)
