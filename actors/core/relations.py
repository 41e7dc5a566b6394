"""Relations as entity edges, and the one-or-two-hop expansion recall follows (kind ``relation``,
docs/design.md#the-memory-model).

Entities are read from memory contents without a model:

* relation memories name them through their slot value: ``basic.family`` "sister:anna" is
  ``user –sister→ Anna``; ``relation.social`` "bob" is ``user –colleague→ Bob`` (the relation word is read
  from the content: colleague, friend, boss, …);
* proper names: English capitalised words that also occur capitalised in mid-sentence somewhere (so a
  sentence-initial "Yesterday" is not a name), and Chinese person / place / organisation names from
  jieba's part-of-speech tags;
* an attribute sentence links an entity to a value: "the Atlas project deadline is next Friday" is
  ``Atlas –deadline→ next Friday``.

Two entities named in the same memory are linked through it. Recall starts from the entities a query names
and follows the links: hop 1 reaches the memories that name them, hop 2 the memories naming an entity that
a hop-1 memory linked them to ("when is Bob's project due?" → Bob works on Atlas → Atlas's deadline).
Entities named by a large share of the memories (the user's own name, a spouse mentioned everywhere) carry
no information for a hop and are not followed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from actors.core.memory import MemoryItem
from actors.language.text import HAN, has_han
from actors.language.zh.tokens import posseg

USER = "user"
#: an entity named by more than this share of memories is not followed by a hop (it connects everything)
HUB_SHARE = 0.05
HUB_MIN_MEMORIES = 8
MAX_HOP_MEMORIES = 60

_RELATION_WORDS = (
    "colleague",
    "coworker",
    "co-worker",
    "boss",
    "manager",
    "friend",
    "best friend",
    "neighbor",
    "neighbour",
    "roommate",
    "partner",
    "mentor",
    "teacher",
    "classmate",
    "teammate",
    "client",
    "doctor",
    "landlord",
    "同事",
    "老板",
    "领导",
    "朋友",
    "邻居",
    "室友",
    "导师",
    "老师",
    "同学",
    "队友",
    "客户",
    "医生",
    "房东",
)
#: a Chinese relation word's English label, so an edge reads the same in either language
_LABELS = {
    "同事": "colleague",
    "老板": "boss",
    "领导": "boss",
    "朋友": "friend",
    "邻居": "neighbor",
    "室友": "roommate",
    "导师": "mentor",
    "老师": "teacher",
    "同学": "classmate",
    "队友": "teammate",
    "客户": "client",
    "医生": "doctor",
    "房东": "landlord",
}
#: a person and where they work: "Bob works at Google"; in Chinese after a known name ("老张在腾讯工作")
_WORKS_AT = re.compile(
    r"(?P<person>(?<![\w'])[A-Z][a-z]+)\s+(?:works|worked|is working)\s+(?:at|for)\s+"
    r"(?P<org>[A-Z][\w&-]*(?:[ .][A-Z][\w&-]*)*)"
)
_WORKS_AT_ZH = rf"(?:现在|目前|一直|也)?在(?P<org>[{HAN}A-Za-z]{{2,10}}?)(?:工作|上班|实习)"
_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"]\s*|\n)\s*$")
_ATTRIBUTES = "deadline|birthday|due date|date|address|launch|start|anniversary"
_ATTRIBUTES_ZH = "截止日期|截止时间|生日|地址|上线时间|开始时间"
_ATTRIBUTE = re.compile(
    r"(?P<entity>[A-Z][\w-]*(?: [A-Z][\w-]*)*)(?:'s)?\s+(?:project\s+|trip\s+|meeting\s+|party\s+)?"
    rf"(?P<attr>{_ATTRIBUTES})\s+(?:is|was|will be|on)\s+"
    r"(?P<value>[\w ,'-]{2,40}?)(?=[.!?,;]|$)|"
    rf"(?P<entity_zh>[{HAN}\w]{{2,12}}?)的?(?P<attr_zh>{_ATTRIBUTES_ZH})"
    r"(?:是|在)(?P<value_zh>[^，,。！？]{1,20})"
)
#: every match of ``_ATTRIBUTE`` holds one of its attribute words: a text without one is not searched (the
#: full pattern tries its Chinese branch at every position, and most of a user's graph build went there)
_ATTRIBUTE_WORD = re.compile(f"{_ATTRIBUTES}|{_ATTRIBUTES_ZH}")
_NAME_TAGS = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})
_NOT_NAMES = frozenset(
    "I I'm I've I'd I'll Mr Mrs Ms Dr OK Ok Hey Hi Hello Thanks Thank Yes No Wow Oh Yeah Sure Monday Tuesday "
    "Wednesday Thursday Friday Saturday Sunday January February March April May June July August September "
    "October November December".split()
)


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    label: str
    target: str
    #: the memories that state the link
    memory_ids: tuple[str, ...]


@lru_cache(maxsize=65536)
def entity_key(name: str) -> str:
    return " ".join(name.casefold().split())


@lru_cache(maxsize=65536)
def capitalised_names(text: str) -> tuple[tuple[str, bool], ...]:
    """Capitalised word runs with whether each stands mid-sentence (a stronger sign of a name). The first
    word of a sentence-initial run stands alone ("Our Atlas" is "Our" and "Atlas")."""
    found = []
    for m in _CAPITALISED.finditer(text):
        words = re.split(r"[ -]", m.group())
        if _SENTENCE_START.search(text[: m.start()]):
            if words[0] not in _NOT_NAMES:
                found.append((words[0], False))
            words = words[1:]
        words = [w for w in words if w not in _NOT_NAMES]
        if words:
            found.append((" ".join(words), True))
    return tuple(found)


@lru_cache(maxsize=65536)
def chinese_names(text: str) -> tuple[str, ...]:
    if not has_han(text):
        return ()
    return tuple(
        dict.fromkeys(w.word for w in posseg().cut(text) if w.flag in _NAME_TAGS and len(w.word) > 1)
    )


def _relation_word(content: str) -> str | None:
    lowered = content.casefold()
    word = next((w for w in _RELATION_WORDS if w in lowered), None)
    return _LABELS.get(word, word) if word else None


def _declared_relation(item: MemoryItem) -> tuple[str, str] | None:
    """(label, entity name) for a relation memory: "sister:anna" → ("sister", "anna")."""
    if not item.value or item.slot not in ("basic.family", "relation.social"):
        return None
    if ":" in item.value:
        label, name = item.value.split(":", 1)
        return label, name
    if item.slot == "basic.family":
        return item.value, item.value
    return _relation_word(item.content) or "knows", item.value


@lru_cache(maxsize=65536)
def attribute_sentences(content: str) -> tuple[re.Match[str], ...]:
    """The attribute sentences of a text ("the Atlas project deadline is next Friday"). Cached, as the name
    readers above are: a user's graph is read again from every active item whenever their memory changes."""
    return tuple(_ATTRIBUTE.finditer(content)) if _ATTRIBUTE_WORD.search(content) else ()


def _employers(content: str, chinese_people: list[str]) -> list[tuple[str, str]]:
    """(person, organisation) pairs a memory states."""
    # every English match says "work"; a text without it is not searched
    found = [(m["person"], m["org"]) for m in _WORKS_AT.finditer(content)] if "work" in content else []
    for person in chinese_people:
        m = re.search(re.escape(person) + _WORKS_AT_ZH, content)
        if m:
            found.append((person, m["org"]))
    return found


class EntityGraph:
    """Entities named by a user's memories, the memories naming each, and the edges between them."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # key → display name
        self.memories: dict[str, tuple[str, ...]] = {}  # entity key → memory ids naming it
        self.mentions: dict[str, tuple[str, ...]] = {}  # memory id → entity keys, one entry per memory read
        self._edges: dict[tuple[str, str, str], list[str]] = defaultdict(list)
        self._created: dict[str, datetime] = {}
        # sets while the items are read, kept as tuples after (``from_items``): a third of the bytes, and a
        # resident user keeps its graph until its memory changes
        self._naming: dict[str, set[str]] = defaultdict(set)
        self._named: dict[str, set[str]] = defaultdict(set)

    @classmethod
    def from_items(cls, items: Iterable[MemoryItem]) -> EntityGraph:
        graph = cls()
        items = [i for i in items if i.is_active]
        mid_sentence = {entity_key(n) for i in items for n, mid in capitalised_names(i.content) if mid}
        for item in items:
            graph._read(item, mid_sentence)
        graph.memories = {key: tuple(ids) for key, ids in graph._naming.items()}
        graph.mentions = {mid: tuple(keys) for mid, keys in graph._named.items()}
        graph._naming, graph._named = {}, {}
        return graph

    def _add(self, name: str, memory_id: str) -> str:
        key = entity_key(name)
        self.names.setdefault(key, name.strip().title() if name.isascii() else name.strip())
        self._naming[key].add(memory_id)
        self._named[memory_id].add(key)
        return key

    def _link(self, source: str, label: str, target: str, memory_id: str) -> None:
        backing = self._edges[(source, label, target)]
        if memory_id not in backing:
            backing.append(memory_id)

    def _read(self, item: MemoryItem, mid_sentence: set[str]) -> None:
        mid = item.memory_id
        self._created[mid] = item.created_at
        declared = _declared_relation(item)
        if declared is not None:
            label, name = declared
            self._link(USER, label, self._add(name, mid), mid)
        keys = [
            self._add(n, mid) for n, _ in capitalised_names(item.content) if entity_key(n) in mid_sentence
        ]
        keys += [self._add(n, mid) for n in chinese_names(item.content)]
        for m in attribute_sentences(item.content):
            entity = m["entity_zh"] or (capitalised_names(m["entity"]) or ((m["entity"], True),))[-1][0]
            key = self._add(entity, mid)
            self._link(key, m["attr"] or m["attr_zh"], (m["value"] or m["value_zh"]).strip(), mid)
        for person, org in _employers(item.content, [k for k in self._named[mid] if not k.isascii()]):
            self._link(self._add(person, mid), "works at", self._add(org, mid), mid)
        distinct = list(dict.fromkeys(keys))
        for n, first in enumerate(distinct):
            for second in distinct[n + 1 :]:
                self._link(first, "mentioned with", second, mid)

    @property
    def edges(self) -> list[Edge]:
        def shown(key: str) -> str:
            return USER if key == USER else self.names.get(key, key)

        return [
            Edge(shown(s), label, shown(t), tuple(ids))
            for (s, label, t), ids in sorted(self._edges.items(), key=lambda e: (e[0][0] != USER, e[0]))
        ]

    def is_hub(self, key: str) -> bool:
        count = len(self.memories.get(key, ()))
        return count >= HUB_MIN_MEMORIES and count > HUB_SHARE * max(len(self.mentions), 1)

    def entities_in(self, text: str) -> set[str]:
        """Known, informative entities a text (a query) names."""
        lowered = f" {entity_key.__wrapped__(text)} "  # a query: no place for it in the names' cache
        return {
            key for key in self.memories if f" {key} " in lowered or (not key.isascii() and key in lowered)
        }

    def hops(self, seeds: Iterable[str], max_hops: int = 2) -> dict[str, int]:
        """memory id → hop distance (1 or 2) from the seed entities, hubs never followed."""
        frontier = {s for s in seeds if s in self.memories and not self.is_hub(s)}
        seen_entities = set(frontier)
        reached: dict[str, int] = {}
        for hop in range(1, max_hops + 1):
            found = sorted(
                {m for e in frontier for m in self.memories[e]} - set(reached),
                key=lambda m: (self._created[m], m),
                reverse=True,
            )[:MAX_HOP_MEMORIES]
            for memory_id in found:
                reached[memory_id] = hop
            frontier = {e for m in found for e in self.mentions[m] if not self.is_hub(e)} - seen_entities
            seen_entities |= frontier
            if not frontier:
                break
        return reached
