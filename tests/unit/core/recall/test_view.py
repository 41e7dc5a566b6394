"""The archive view: kept in a settled and a recent part that are rebuilt only when their own items change,
scoring as one archive would; int8 rows score like the float vectors."""

import numpy as np

from actors.core.memory import MemoryItem
from actors.core.recall.view import ArchiveView, Int8Rows, own_vector, stacked
from actors.language.keywords import BM25, joint_scores, tokenize
from schemas.enums import Kind, Layer, State

DIM = 16


def archived(n: int, words: str) -> MemoryItem:
    vector = np.random.default_rng(n).standard_normal(DIM).astype(np.float32)
    return MemoryItem(
        tenant_id="acme",
        user_id="alice",
        content=f"{words} number {n}",
        kind=Kind.EVENT,
        memory_id=f"m{n}",
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        embedding=(vector / np.linalg.norm(vector)).tobytes(),
    )


def scores(view: ArchiveView, query: np.ndarray, terms: list[str]) -> dict[str, tuple[float, float]]:
    parts = view.parts()
    items = [i for p in parts for i in p.items]
    similarities = np.concatenate([p.vectors @ query for p in parts])
    keyword = joint_scores([p.keywords for p in parts], terms)
    return {i.memory_id: (float(s), float(k)) for i, s, k in zip(items, similarities, keyword, strict=True)}


def test_an_evicted_item_rebuilds_only_the_recent_part_and_scores_as_one_archive():
    loaded = [archived(n, "sailing on the lake" if n % 3 else "baking bread") for n in range(40)]
    view = ArchiveView(lambda limit: loaded[:limit], DIM, budget=1000)
    settled, _ = view.parts()
    newcomer = archived(99, "sailing to the island")
    view.apply([newcomer])
    again, recent = view.parts()
    assert again is settled and [i.memory_id for i in recent.items] == ["m99"]

    query = np.frombuffer(newcomer.embedding, np.float32)
    terms = tokenize("sailing island")
    whole = [*loaded, newcomer]
    exact = np.stack([own_vector(i, DIM) for i in whole]) @ query
    expected = BM25([tokenize(f"{i.content} {i.content}") for i in whole]).scores(terms)
    got = scores(view, query, terms)
    for item, similarity, keyword in zip(whole, exact, expected, strict=True):
        assert abs(got[item.memory_id][0] - similarity) < 0.02
        assert np.isclose(got[item.memory_id][1], keyword)

    view.apply([], forgotten=["m3"])  # leaving the settled part rebuilds it, not the recent one
    rebuilt, same_recent = view.parts()
    assert rebuilt is not settled and same_recent is recent and "m3" not in rebuilt.rows


def test_the_recent_part_joins_the_settled_one_when_full():
    view = ArchiveView(lambda limit: [archived(0, "first")], DIM, budget=1000)
    view.apply([archived(n, "later") for n in range(1, ArchiveView.MERGE_AT + 1)])
    settled, recent = view.parts()
    assert len(settled.items) == ArchiveView.MERGE_AT + 1 and recent.items == []


def test_int8_rows_score_within_a_hundredth_of_the_float_product():
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((300, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[7]
    assert np.abs(Int8Rows(matrix) @ query - matrix @ query).max() < 0.01
    assert len(Int8Rows(stacked([], 384))) == 0


def test_an_item_that_leaves_and_comes_back_is_held_once():
    loaded = [archived(n, "sailing") for n in range(5)]
    view = ArchiveView(lambda limit: loaded[:limit], DIM, budget=1000)
    view.parts()
    view.apply([], forgotten=["m2"])
    view.apply([archived(2, "sailing")])  # back before any recall rebuilt the settled part
    ids = [i.memory_id for part in view.parts() for i in part.items]
    assert sorted(ids) == [f"m{n}" for n in range(5)]
