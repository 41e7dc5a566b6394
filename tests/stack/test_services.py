"""The shared service actors on a real Ray: the embedder actor batches concurrent requests without mixing
their answers up, the proxies implement the seams, a crashed service comes back under the same handle,
and a dead one becomes ``StoreUnavailable``."""

import asyncio
import uuid

import numpy as np
import pytest
import ray
from actors.services import EmbedderActor, RemoteEmbedder, RemoteIndex, embedder_actor, index_actor

from actors.embedding import HashEmbedder
from actors.errors import StoreUnavailable
from actors.store.vectors import VectorRow
from schemas.enums import Layer, State
from schemas.settings import HermesSettings

pytestmark = [pytest.mark.stack, pytest.mark.slow]


@pytest.fixture
def hash_embedder_actor(ray_session):
    actor = EmbedderActor.remote("hash", batch_window_ms=20.0)
    yield actor
    ray.kill(actor)


def test_concurrent_requests_are_batched_and_answered_in_order(hash_embedder_actor):
    texts = [[f"user {i} likes tea number {j}" for j in range(i % 3 + 1)] for i in range(24)]

    async def burst():
        passages = [hash_embedder_actor.embed.remote("passage", chunk) for chunk in texts]
        queries = [hash_embedder_actor.embed.remote("query", chunk) for chunk in texts[:4]]
        return await asyncio.gather(*passages), await asyncio.gather(*queries)

    passages, queries = asyncio.run(burst())
    reference = HashEmbedder()
    for chunk, vectors in zip(texts, passages, strict=True):
        np.testing.assert_allclose(vectors, reference.embed_passages(chunk), rtol=1e-6)
    for chunk, vectors in zip(texts[:4], queries, strict=True):
        np.testing.assert_allclose(vectors, reference.embed_queries(chunk), rtol=1e-6)
    stats = ray.get(hash_embedder_actor.stats.remote())
    assert stats["texts"] == sum(map(len, texts)) + sum(map(len, texts[:4]))
    assert stats["model_calls"] < len(texts) // 2  # requests shared model calls
    assert ray.get(hash_embedder_actor.embed.remote("passage", [])).shape == (0, reference.dim)


def test_proxies_implement_the_seams_over_named_actors(ray_session, milvus_server):
    settings = HermesSettings(
        namespace=f"svc-{uuid.uuid4().hex[:8]}",
        embedder="hash",
        milvus_uri=milvus_server.uri,
        milvus_collection=f"svc_{uuid.uuid4().hex[:8]}",
    )
    embedder = RemoteEmbedder.connect(settings)
    index = RemoteIndex.connect(settings, embedder.dim)
    assert RemoteEmbedder.connect(settings).dim == embedder.dim == HashEmbedder().dim  # found by name

    vectors = embedder.embed_passages(["I'm allergic to peanuts", "I live in Suzhou"])
    index.ensure_tenant("acme")
    index.upsert(
        "acme",
        [
            VectorRow(f"m_{i:032x}", "u1", Layer.WORKING, State.PENDING, vector)
            for i, vector in enumerate(vectors, start=1)
        ],
    )
    hits = index.search("acme", "u1", embedder.embed_queries(["peanut allergy"])[0], k=2)
    assert hits[0].memory_id == f"m_{1:032x}"
    assert index.ids("acme", "u1") == {f"m_{1:032x}", f"m_{2:032x}"}
    index.delete_user("acme", "u1")
    assert index.ids("acme", "u1") == set()

    # a crash is repaired by Ray under the same handle; only a deliberate kill leaves the service dead
    ray.kill(embedder_actor(settings), no_restart=False)
    assert embedder.embed_queries(["still there"]).shape == (1, embedder.dim)
    ray.kill(embedder_actor(settings))
    ray.kill(index_actor(settings, embedder.dim))
    with pytest.raises(StoreUnavailable, match="embedder unavailable"):
        embedder.embed_queries(["anything"])
    with pytest.raises(StoreUnavailable, match="vector index unavailable"):
        index.ids("acme")
