"""The two plain baselines of the LoCoMo evaluation: every raw turn of a conversation is a document, with no
memory layer at all — no extraction, no gates, no caps.

* ``bm25``: the same tokenizer and BM25 as the memory service's keyword route (``actors.language.keywords``);
* ``dense``: the same embedder as the memory service (E5), cosine similarity of question and turn;
* ``fused``: reciprocal-rank fusion of the two (each turn scores the sum of ``1 / (60 + rank)`` over both
  rankings), the usual hybrid of sparse and dense retrieval.

They read the same ``Utterance.text`` (speaker name first) as the memory system, so the comparison is
about what the memory layer does with the turns, not about what it was shown.
"""

from __future__ import annotations

import numpy as np

from actors.adapters.embedding import Embedder
from actors.language.keywords import BM25, tokenize
from evaluation.data import Conversation


def _top(scores: np.ndarray, ids: list[str], k: int) -> list[str]:
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order]


class BM25Baseline:
    name = "bm25"

    def rank(self, conversation: Conversation, k: int) -> list[list[str]]:
        turns = conversation.utterances
        ids = [u.dia_id for u in turns]
        index = BM25([tokenize(u.text) for u in turns])
        return [_top(index.scores(tokenize(q.text)), ids, k) for q in conversation.questions]


class DenseBaseline:
    name = "dense"

    def __init__(self, embedder: Embedder):
        self.embedder = embedder

    def rank(self, conversation: Conversation, k: int) -> list[list[str]]:
        turns = conversation.utterances
        if not turns or not conversation.questions:
            return [[] for _ in conversation.questions]
        ids = [u.dia_id for u in turns]
        passages = np.asarray(self.embedder.embed_passages([u.text for u in turns]), dtype=np.float32)
        queries = np.asarray(
            self.embedder.embed_queries([q.text for q in conversation.questions]), dtype=np.float32
        )
        return [_top(passages @ query, ids, k) for query in queries]


#: the customary constant of reciprocal-rank fusion (Cormack et al., 2009)
RRF_K = 60


def reciprocal_rank_fusion(*rankings: list[str]) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, dia_id in enumerate(ranking):
            scores[dia_id] = scores.get(dia_id, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda dia_id: (-scores[dia_id], dia_id))


class FusedBaseline:
    name = "fused"

    def __init__(self, embedder: Embedder):
        self.sparse, self.dense = BM25Baseline(), DenseBaseline(embedder)

    def rank(self, conversation: Conversation, k: int) -> list[list[str]]:
        return [
            reciprocal_rank_fusion(sparse, dense)[:k]
            for sparse, dense in zip(
                self.sparse.rank(conversation, k), self.dense.rank(conversation, k), strict=True
            )
        ]
