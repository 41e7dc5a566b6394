"""The archive view: kept in a settled and a recent part that are rebuilt only when their own items change,
scoring as one archive would, with each vector held once (int8 rows scoring like the float vectors)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core.memory import MemoryItem
from actors.core.recall.vectors import VectorRows
from actors.core.recall.view import ArchiveView
from actors.language.keywords import BM25, joint_scores, tokenize
from schemas.enums import Kind, Layer, State

DIM = 16


def unit(n: int) -> np.ndarray:
    vector = np.random.default_rng(n).standard_normal(DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def archived(n: int, words: str) -> MemoryItem:
    return MemoryItem(
        tenant_id="acme",
        user_id="alice",
        content=f"{words} number {n}",
        kind=Kind.EVENT,
        memory_id=f"m{n}",
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        embedding=unit(n).tobytes(),
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

    assert all(item.embedding is None for item in view.items.values())  # held once, in the view's rows
    query = unit(99)
    terms = tokenize("sailing island")
    whole = [*loaded, newcomer]
    exact = np.stack([unit(int(i.memory_id[1:])) for i in whole]) @ query
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


def test_an_item_that_leaves_and_comes_back_is_held_once():
    loaded = [archived(n, "sailing") for n in range(5)]
    view = ArchiveView(lambda limit: loaded[:limit], DIM, budget=1000)
    view.parts()
    view.apply([], forgotten=["m2"])
    view.apply([archived(2, "sailing")])  # back before any recall rebuilt the settled part
    ids = [i.memory_id for part in view.parts() for i in part.items]
    assert sorted(ids) == [f"m{n}" for n in range(5)]


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(st.tuples(st.sampled_from(["put", "drop"]), st.integers(0, 30)), max_size=120),
    codes=st.sampled_from([np.int16, np.int8]),
)
def test_vector_rows_score_as_the_vectors_they_hold_whatever_was_put_and_dropped(steps, codes):
    rows = VectorRows(DIM, codes, capacity=2)
    held: dict[str, np.ndarray] = {}
    for action, n in steps:
        memory_id = f"m{n}"
        if action == "put":
            vector = unit(n + 1000 * len(held))
            rows.put(memory_id, f"h{n}", vector)
            held[memory_id] = vector
        else:
            rows.drop(memory_id)
            held.pop(memory_id, None)
    asked = [*held, "never-held"]
    query = unit(7)
    expected = np.array([float(held[m] @ query) if m in held else 0.0 for m in asked])
    assert np.abs(rows.rows(asked) @ query - expected).max() < (0.01 if codes is np.int8 else 1e-4)
    assert len(rows) == len(held)


def test_holding_a_stored_item_drops_its_bytes_and_remembers_what_content_the_vector_is_for():
    rows = VectorRows(DIM)
    item = archived(1, "sailing")
    rows.hold([item])
    assert item.embedding is None and rows.holds(item)
    assert np.allclose(rows.vector(item.memory_id), unit(1), atol=1e-4)
    item.content, item.content_hash = "changed", "another hash"
    assert not rows.holds(item)  # a vector of the old words is not this item's vector
