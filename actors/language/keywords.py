"""Keyword side of recall: tokenizing Chinese and English, BM25 scoring, and the query → profile-slot map
that lets a question about cooking reach the allergy slot however cold it is.
"""

import re
from collections.abc import Sequence
from functools import cache, lru_cache

import numpy as np

_LATIN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being am i me my mine "
    "you your yours he she it its we our they them their this that these those do does did doing have has "
    "had "
    "what which who whom whose when where why how not no so too very can could should would will just about "
    "into over than then there here s t don't i'm it's".split()
)
_CJK_STOPWORDS = frozenset("的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 在 和 也 就 都 很 有 这 那 个".split())


@cache
def _jieba():
    import jieba

    jieba.setLogLevel(60)
    return jieba


def tokenize(text: str) -> list[str]:
    return list(_tokens(text))


_SUFFIXES = (
    ("ies", "y"),
    ("ied", "y"),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("ly", ""),
    ("s", ""),
    ("e", ""),
)
_DOUBLED = re.compile(r"([bdgmnprt])\1$")


def stem(word: str) -> str:
    """A light English stemmer, so "painted", "painting" and "paints" meet "paint" (and "Melanie's" meets
    "Melanie"): one suffix off a word of four letters or more, a doubled final consonant undoubled."""
    word = word.removesuffix("'s")
    if len(word) < 4 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return _DOUBLED.sub(r"\1", word[: -len(suffix)] + replacement)
    return word


@lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    """Cached: recall tokenizes every candidate memory on every query."""
    lowered = text.casefold().replace("’", "'")
    tokens = [stem(t) for t in _LATIN.findall(lowered) if t not in _STOPWORDS]
    for run in _CJK.findall(lowered):
        tokens.extend(w for w in _jieba().lcut(run) if w.strip() and w not in _CJK_STOPWORDS)
    return tuple(tokens)


class BM25:
    """Okapi BM25 over tokenized documents, with postings built once: scoring a query touches only the
    documents that hold its terms, so one index serves every query until the documents change."""

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.size = len(documents)
        self.lengths = np.array([len(d) for d in documents], dtype=np.float64)
        counts: dict[str, dict[int, int]] = {}
        for n, doc in enumerate(documents):
            for term in doc:
                per_doc = counts.setdefault(term, {})
                per_doc[n] = per_doc.get(n, 0) + 1
        self.postings = {
            term: (np.fromiter(per_doc, np.int64, len(per_doc)), np.fromiter(per_doc.values(), np.float64))
            for term, per_doc in counts.items()
        }

    def scores(self, query: Sequence[str]) -> np.ndarray:
        return joint_scores([self], query)


def joint_scores(parts: Sequence[BM25], query: Sequence[str]) -> np.ndarray:
    """BM25 scores of the parts' documents one after the other, with the statistics (document count, average
    length, document frequencies) of all of them together: the scores of one index over the concatenation,
    while each part is built and kept on its own (the archive changes far less often than active memory)."""
    size = sum(part.size for part in parts)
    result = np.zeros(size)
    total_length = float(sum(part.lengths.sum() for part in parts))
    if not total_length:
        return result
    k1, b = parts[0].k1, parts[0].b
    average = total_length / size
    offsets = np.cumsum([0] + [part.size for part in parts[:-1]])
    for term in set(query):
        found = [
            (offset, part, part.postings[term])
            for offset, part in zip(offsets, parts, strict=True)
            if term in part.postings
        ]
        frequency = sum(len(docs) for _, _, (docs, _) in found)
        if not frequency:
            continue
        idf = float(np.log(1 + (size - frequency + 0.5) / (frequency + 0.5)))
        for offset, part, (docs, counts) in found:
            norm = k1 * (1 - b + b * part.lengths[docs] / average)
            result[offset + docs] += idf * counts * (k1 + 1) / (counts + norm)
    return result


_FOOD = ("basic.allergy", "basic.diet_restriction", "preference.food")
_SLOT_CUES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        (
            "eat",
            "eating",
            "food",
            "cook",
            "cooking",
            "dinner",
            "lunch",
            "breakfast",
            "meal",
            "restaurant",
            "recipe",
            "snack",
            "dish",
            "menu",
            "allergy",
            "allergic",
            "吃",
            "做饭",
            "菜",
            "餐",
            "饭",
            "夜宵",
            "食物",
            "过敏",
            "点外卖",
        ),
        _FOOD,
    ),
    (("drink", "coffee", "tea", "beverage", "喝", "咖啡", "茶"), ("preference.drink", "basic.allergy")),
    (
        ("live", "living", "city", "address", "home", "move", "moved", "where", "住", "搬", "城市", "地址"),
        ("basic.residence",),
    ),
    (("name", "called", "名字", "叫"), ("basic.name",)),
    (
        ("job", "work", "occupation", "career", "office", "工作", "职业", "公司"),
        ("basic.occupation", "basic.employer"),
    ),
    (("pet", "dog", "cat", "宠物", "狗", "猫"), ("basic.pet",)),
    (
        (
            "family",
            "wife",
            "husband",
            "kid",
            "kids",
            "child",
            "children",
            "daughter",
            "son",
            "mother",
            "father",
            "家人",
            "老婆",
            "老公",
            "孩子",
            "女儿",
            "儿子",
            "妈妈",
            "爸爸",
        ),
        ("basic.family",),
    ),
    (("recommend", "recommendation", "suggest", "推荐", "建议"), ("preference.content", "style.taboo")),
    (("reply", "answer", "respond", "回答", "回复"), ("style.reply_length", "style.tone", "style.language")),
    (("health", "medicine", "doctor", "sick", "健康", "药", "医生"), ("basic.health", "basic.allergy")),
)


def query_slots(query: str) -> frozenset[str]:
    """Profile slots a query is about, from cue words (English tokens and Chinese substrings)."""
    lowered = query.casefold()
    words = set(_LATIN.findall(lowered))
    found: set[str] = set()
    for cues, slots in _SLOT_CUES:
        if any((cue in words) if cue.isascii() else (cue in lowered) for cue in cues):
            found.update(slots)
    return frozenset(found)


_PAST_QUERY = re.compile(
    r"\b(?:when|what|where|who|how|why|which)\b[^?]*?\b(?:did|was|were|had|has|have)\b|"
    r"^(?:did|was|were|had|has|have)\b|"
    r"\b(?:ago|ever|used to|last (?:time|week|weekend|month|year|summer|winter|spring|fall)|first time|"
    r"before|earlier|previously|back then|in (?:19|20)\d\d)\b|"
    r"什么时候|啥时候|哪天|上次|上回|以前|之前|曾经|去年|前年|当时|那时|过吗|了吗",
    re.IGNORECASE,
)


def asks_about_the_past(query: str) -> bool:
    """Whether a question asks what happened ("When did Ana move?", "我上次说过什么？") rather than how things
    stand now: for such a question an older memory is not a staler one."""
    return bool(_PAST_QUERY.search(query))
