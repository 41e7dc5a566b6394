"""The keyword route's parts: the BM25 postings recall keeps between calls, scored against the textbook
formula over the tokenizer's terms, and BM25 over parts scoring as one index."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.language.keywords import BM25, joint_scores, tokenize


def reference_bm25(documents, query, k1=1.5, b=0.75):
    n, average = len(documents), sum(map(len, documents)) / len(documents)
    scores = np.zeros(n)
    for term in set(query):
        holding = sum(term in d for d in documents)
        if not holding:
            continue
        idf = np.log(1 + (n - holding + 0.5) / (holding + 0.5))
        for i, doc in enumerate(documents):
            count = doc.count(term)
            scores[i] += idf * count * (k1 + 1) / (count + k1 * (1 - b + b * len(doc) / average))
    return scores


words = st.sampled_from("tea jazz peanut allergy hiking Lisbon 成都 海鲜 nurse cat dog the a".split())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(words, max_size=8).map(" ".join), min_size=1, max_size=12), st.lists(words, max_size=4)
)
def test_bm25_postings_score_exactly_as_the_textbook_formula(texts, query_words):
    documents = [tokenize(t) for t in texts]
    query = tokenize(" ".join(query_words))
    if not any(documents):
        assert not BM25(documents).scores(query).any()
        return
    assert np.allclose(BM25(documents).scores(query), reference_bm25(documents, query))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(words, max_size=8).map(" ".join), min_size=1, max_size=12),
    st.integers(min_value=0, max_value=12),
    st.lists(words, max_size=4),
)
def test_bm25_parts_score_as_one_index_over_all_their_documents(texts, cut, query_words):
    documents = [tokenize(t) for t in texts]
    cut = min(cut, len(documents))
    query = tokenize(" ".join(query_words))
    parts = [BM25(documents[:cut]), BM25(documents[cut:])]
    assert np.allclose(joint_scores(parts, query), BM25(documents).scores(query))
