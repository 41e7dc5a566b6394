"""The active items' keyword postings, kept across views (``ActiveKeywords``): whatever the history of
changes — items added, removed, reworded, brought back — a view's postings score every query exactly as one
BM25 built over that view's items, and unchanged items are not indexed again."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core.memory import MemoryItem
from actors.core.recall.view import ActiveKeywords, ActiveView, recall_text
from actors.language.keywords import BM25, joint_scores, tokenize
from schemas.enums import Kind

WORDS = [
    "tea",
    "green",
    "Atlas",
    "deadline",
    "Friday",
    "sister",
    "Lyon",
    "moved",
    "bread",
    "sailing",
    "猫",
    "喜欢",
]
QUERIES = ["green tea", "Atlas deadline Friday", "sister moved to Lyon", "喜欢猫", "sailing bread tea tea"]


def item(memory_id: str, words: list[str], said: list[str] | None) -> MemoryItem:
    return MemoryItem(
        tenant_id="acme",
        user_id="alice",
        content=" ".join(words),
        source_text=None if said is None else " ".join(said),
        kind=Kind.EVENT,
        memory_id=memory_id,
    )


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)
ids = st.sampled_from([f"m{n}" for n in range(120)])
#: an item's words: its content and the turn it was cut from (None: it is the whole turn)
said = st.tuples(texts, st.none() | texts)
#: the items of the first view, then the changes before each later one: an id given words is added or
#: reworded (or brought back), an id given None leaves
histories = st.tuples(
    st.dictionaries(ids, said, max_size=120),
    st.lists(st.lists(st.tuples(ids, st.none() | said), min_size=1, max_size=12), max_size=12),
)


def assert_scores_as_one_bm25(items: list[MemoryItem], postings) -> None:
    fresh = BM25([tokenize(recall_text(i)) for i in items])
    assert postings.size == fresh.size
    assert np.array_equal(postings.lengths, fresh.lengths)
    for query in QUERIES:
        terms = tokenize(query)
        assert np.allclose(joint_scores([postings], terms), fresh.scores(terms), rtol=1e-9, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(history=histories, order=st.randoms(use_true_random=False))
def test_a_views_postings_score_as_one_bm25_over_its_items(history, order):
    present, changes = history
    keywords = ActiveKeywords()
    for change in [[], *changes]:
        for memory_id, words in change:
            if words is None:
                present.pop(memory_id, None)
            else:
                present[memory_id] = words
        items = [item(memory_id, content, source) for memory_id, (content, source) in present.items()]
        order.shuffle(items)
        assert_scores_as_one_bm25(items, keywords.over(items))


def test_a_change_indexes_the_changed_items_only():
    keywords = ActiveKeywords()
    items = [item(f"m{n}", [WORDS[n % len(WORDS)], "tea"], None) for n in range(300)]
    first = keywords.over(items)
    settled = keywords._settled
    # one new item, one removed, one reworded: the settled index stays, the recent one holds two items
    changed = [*items[1:150], item("m150", ["Lyon"], None), *items[151:], item("new", ["Atlas"], None)]
    second = keywords.over(changed)
    assert keywords._settled is settled and len(keywords._recent.rows) == 2
    assert_scores_as_one_bm25(items, first)  # an earlier view keeps its own scores
    assert_scores_as_one_bm25(changed, second)
    # a view over the same items builds nothing
    recent = keywords._recent
    keywords.over(changed)
    assert keywords._settled is settled and keywords._recent is recent


def test_the_active_view_scores_its_items():
    items = [item(f"m{n}", [WORDS[n % len(WORDS)], "deadline"], ["Friday"]) for n in range(70)]
    view = ActiveView(items, 8)
    assert_scores_as_one_bm25(items, view.keywords)
