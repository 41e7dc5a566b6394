"""The bilingual vocabulary behind rule extraction: canonical slot values and the topic of a liked thing.

A slot value is compared across turns and languages, so "花生", "peanuts" and "Peanut" must all become
``peanut``; "杭州", "Hangzhou" and "杭州市" become ``hangzhou``. The tables live in
``lexicon.yaml`` (category → canonical value → aliases); this module indexes them and normalises
phrases against them.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import yaml

from actors.language.text import HAN, has_han, is_han

_TABLES: dict[str, dict[str, list[str]]] = yaml.safe_load(
    (Path(__file__).with_name("lexicon.yaml")).read_text(encoding="utf-8")
)

#: what category a liked thing belongs to decides its preference slot
_PREFERENCE_SLOT = {
    "food": "preference.food",
    "drink": "preference.drink",
    "music": "preference.music",
    "sport": "preference.sport",
    "hobby": "preference.hobby",
    "content": "preference.content",
    "travel": "preference.travel",
    "city": "preference.travel",
    "schedule": "preference.schedule",
    "style": "preference.style",
    "shopping": "preference.shopping",
}
_SLOT_PRIORITY = (
    "content",
    "music",
    "sport",
    "hobby",
    "drink",
    "food",
    "travel",
    "city",
    "schedule",
    "style",
    "shopping",
)

_NOT_EDIBLE = {"penicillin", "pollen", "dust mite", "cat hair", "latex", "alcohol", "lactose", "gluten"}


def _names(canonical: str, aliases: list[str]) -> list[str]:
    return [a.strip().casefold() for a in [canonical, *aliases] if a.strip()]


#: emotion words are read only where a mood is being described: "blue" is a colour elsewhere
_EMOTIONS = {
    alias: canonical
    for canonical, aliases in _TABLES.pop("emotion").items()
    for alias in _names(canonical, aliases)
}


def _index_tables() -> tuple[dict[str, str], dict[str, set[str]]]:
    alias_to_canonical: dict[str, str] = {}
    categories: dict[str, set[str]] = {}
    for category, rows in _TABLES.items():
        for canonical, aliases in rows.items():
            categories.setdefault(canonical, set()).add(category)
            for alias in _names(canonical, aliases):
                # first table wins: "fish" stays an allergen, "nut" a tree nut, "cook" a hobby verb
                alias_to_canonical.setdefault(alias, canonical)
    for canonical in list(categories):
        if "allergen" in categories[canonical] and canonical not in _NOT_EDIBLE:
            categories[canonical].add("food")
    categories["alcohol"].add("drink")
    return alias_to_canonical, categories


#: diets are spelled for display only (the diet rules name their values): canonical → spellings
_DIET_SPELLINGS = _TABLES.pop("diet")
_ALIASES, _CATEGORIES = _index_tables()
_CJK_ALIASES = sorted((a for a in _ALIASES if has_han(a)), key=len, reverse=True)
#: canonical value → its spellings in either language, longest first (so 花生酱 is found before 花生)
_SPELLINGS: dict[str, list[str]] = {}
for _alias in sorted(_ALIASES, key=len, reverse=True):
    _SPELLINGS.setdefault(_ALIASES[_alias], []).append(_alias)
for _diet, _spelled_as in _DIET_SPELLINGS.items():
    _SPELLINGS.setdefault(_diet, []).extend(sorted(_spelled_as, key=len, reverse=True))

_IRREGULAR = {
    "children": "child",
    "kids": "kid",
    "people": "person",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "geese": "goose",
    "teeth": "tooth",
    "feet": "foot",
    "knives": "knife",
    "wives": "wife",
    "leaves": "leaf",
    "loaves": "loaf",
    "wolves": "wolf",
    "lives": "life",
    "shelves": "shelf",
    "halves": "half",
    "calves": "calf",
    "selves": "self",
    "thieves": "thief",
    "potatoes": "potato",
    "tomatoes": "tomato",
    "mangoes": "mango",
    "heroes": "hero",
    "echoes": "echo",
    "volcanoes": "volcano",
}
_KEEP_S = {
    "tennis",
    "chess",
    "news",
    "series",
    "species",
    "glasses",
    "jeans",
    "shorts",
    "pants",
    "clothes",
    "hummus",
    "asparagus",
    "couscous",
    "citrus",
    "octopus",
    "cactus",
    "lens",
    "bus",
    "gas",
    "yes",
    "this",
    "its",
    "his",
    "us",
    "as",
    "is",
    "was",
    "has",
    "does",
    "diabetes",
    "measles",
    "sweets",
    "lyrics",
    "athletics",
    "physics",
    "mathematics",
    "economics",
    "politics",
    "gymnastics",
    "aerobics",
    "analytics",
    "ethics",
    "graphics",
}
_IE_SINGULARS = {
    "cookie",
    "movie",
    "zombie",
    "smoothie",
    "brownie",
    "pie",
    "tie",
    "lie",
    "selfie",
    "hoodie",
    "veggie",
    "calorie",
    "rookie",
    "auntie",
    "goodie",
    "indie",
    "foodie",
    "genie",
    "prairie",
    "sortie",
    "boogie",
}


def singularize(word: str) -> str:
    w = word.casefold()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or w in _KEEP_S or not w.endswith("s") or w.endswith(("ss", "us", "is", "ics", "'s")):
        return w
    if w.endswith("ies"):
        return w[:-1] if w[:-1] in _IE_SINGULARS else w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "zes", "sses")):
        return w[:-2]
    return w[:-1]


_LEADING_WORDS = re.compile(
    r"^(?:(?:a|an|the|some|any|my|our|your|his|her|their|this|that|these|those|all|many|much|more|most|"
    r"lots of|a lot of|a bit of|kind of|sort of|all kinds of|different|good|nice|really|very|super|eating|"
    r"drinking|playing|watching|listening to|going|doing|having|to go|to play|to eat|to drink|to watch|"
    r"to listen to|to do|to|go)\s+)+",
    re.IGNORECASE,
)
_TRAILING_WORDS = re.compile(
    r"(?:\s+(?:too|as well|a lot|so much|very much|anymore|any more|at all|lately|now|these days|sometimes|"
    r"though|ever|again|either|really|here|there))+$",
    re.IGNORECASE,
)
_ZH_LEADING = re.compile(
    r"^(?:我们的|我的|我|一条|一个|一些|两只|两个|三只|几只|只|条|吃|喝|看|听|玩|打|踢|去|做|用|刷|各种|"
    r"所有的|所有|很多|特别|非常|有点|比较|每个周末|每周末|周末|平时|有空的时候|有空|没事的时候|没事就)+"
)
_ZH_TRAILING = re.compile(r"(?:的|了|啊|呀|哦|呢|吧|嘛|啦|之类的|什么的|等等|等|这些|那些|这种|那种)+$")
_EDGE_PUNCT = " \t\n\"'“”‘’`.,;:!?()[]{}<>，。；：！？、（）《》「」…~～-_*"


def clean_phrase(raw: str) -> str:
    """Casefolded, width-normalised, edge-trimmed; determiners, gerund verbs and filler adverbs dropped."""
    text = unicodedata.normalize("NFKC", raw).casefold().strip(_EDGE_PUNCT)
    text = " ".join(text.split())
    for _ in range(2):
        text = _TRAILING_WORDS.sub("", _LEADING_WORDS.sub("", text)).strip(_EDGE_PUNCT)
        text = _ZH_TRAILING.sub("", _ZH_LEADING.sub("", text)).strip(_EDGE_PUNCT)
    return text


@lru_cache(maxsize=4096)
def normalize_value(raw: str, *, a_name: bool = False) -> str:
    """The canonical slot value of a phrase: "Peanuts" / "花生" → "peanut", "杭州市" → "hangzhou". The name
    of a place or a company (``a_name``) is no plural: "Athens", "Siemens" stay whole unless the lexicon
    knows them."""
    text = clean_phrase(raw)
    if not text:
        return ""
    if text in _ALIASES:
        return _ALIASES[text]
    words = text.split(" ")
    singular = " ".join([*words[:-1], singularize(words[-1])])
    if singular in _ALIASES:
        return _ALIASES[singular]
    stripped = re.sub(r"(?:市|省|区|县)$", "", text)
    if stripped in _ALIASES:
        return _ALIASES[stripped]
    return text if a_name else singular


def canonical_place(raw: str) -> str:
    """A residence or hometown value: a known city when the phrase names one ("杭州西湖区" → hangzhou)."""
    value = normalize_value(raw, a_name=True)
    if is_place(value) or not has_han(value):
        return value
    # the first city named wins ("浙江杭州" → hangzhou, "上海南京路" → shanghai); a province only if no city
    cities = [(value.find(a), a) for a in _CJK_ALIASES if a in value and is_city(_ALIASES[a])]
    if cities:
        return _ALIASES[min(cities)[1]]
    for alias in _CJK_ALIASES:
        if value.startswith(alias) and is_place(_ALIASES[alias]):
            return _ALIASES[alias]
    return value


def han_spellings(category: str) -> list[str]:
    """The Chinese spellings of a category's values, longest first (柯基 and 金毛 of ``pet``)."""
    return [a for a in _CJK_ALIASES if category in _CATEGORIES.get(_ALIASES[a], ())]


def categories_of(value: str) -> frozenset[str]:
    return frozenset(_CATEGORIES.get(value, ()))


def is_allergen(value: str) -> bool:
    return "allergen" in categories_of(value)


def is_city(value: str) -> bool:
    return "city" in categories_of(value)


def is_place(value: str) -> bool:
    return bool(categories_of(value) & {"city", "province"})


def _phrase_categories(value: str) -> set[str]:
    found = set(categories_of(value))
    if found:
        return found
    for word in re.split(r"[\s-]+", value):
        found |= categories_of(normalize_value(word))
    if has_han(value):
        for alias in _CJK_ALIASES:
            if len(alias) > 1 and alias in value:
                found |= categories_of(_ALIASES[alias])
    return found


def preference_slot(value: str) -> str:
    """Which ``preference.*`` slot a liked or rejected thing belongs to; ``preference.general`` if unknown."""
    found = _phrase_categories(value)
    for category in _SLOT_PRIORITY:
        if category in found:
            return _PREFERENCE_SLOT[category]
    return "preference.general"


def emotion_of(word: str) -> str | None:
    """The canonical mood a word describes ("exhausting" → tired, 烦死了 → annoyed), or None."""
    phrase = unicodedata.normalize("NFKC", word).casefold().strip(_EDGE_PUNCT)
    return _EMOTIONS.get(phrase) or _EMOTIONS.get(clean_phrase(word))


def family_role(word: str) -> str | None:
    value = normalize_value(word)
    return value if "family" in categories_of(value) else None


def occupation_of(phrase: str) -> str | None:
    """A known occupation, found by the phrase's head: its last English word ("senior software engineer"), or
    the longest Chinese occupation it ends with ("在杭州工作的程序员" → programmer); else None."""
    value = normalize_value(phrase)
    if "occupation" in categories_of(value):
        return value
    if has_han(value):
        for alias in _CJK_ALIASES:
            if value.endswith(alias) and "occupation" in categories_of(_ALIASES[alias]):
                return _ALIASES[alias]
        return None
    head = value.split(" ")[-1] if value else ""
    if "occupation" in categories_of(normalize_value(head)):
        return value
    return None


#: the words that only say what kind of taste a value is: "sci-fi movies" and "sci-fi" are one taste
_TASTE_HEADS = re.compile(
    r"(?:\s+(?:movie|film|show|series|book|novel|music|song|food|dish|cuisine|game|genre|class|lesson)s?|"
    rf"(?<=[{HAN}])(?:电影|影片|片|剧|小说|书|音乐|歌|食物|菜|料理|美食|游戏))$"
)


def taste_core(value: str) -> str:
    """A taste without the word that only names its kind, canonical: "sci-fi movie" and 科幻片 → sci-fi,
    "cooking italian food" → cooking italian; a value that is nothing but such a word stays as it is."""
    core = _TASTE_HEADS.sub("", value)
    return normalize_value(core) if core and core != value else value


_POLITE = re.compile(
    r"^(?:(?:please|pls|kindly|can you|could you|would you|以后|请你|请|麻烦你|麻烦|你)[\s,，]*)+", re.I
)
_INSTRUCTION_END = " \t.,;:!?。，；：！？~～" + "吧啊呀哦啦"


def instruction(clause: str) -> str:
    """A style instruction as the user gave it, minus courtesy: "Please keep answers to three sentences" →
    "keep answers to three sentences"; "请用表格回答我" → "用表格回答我"."""
    text = _POLITE.sub("", clause.strip()).strip(_INSTRUCTION_END)
    return text.casefold() if text.isascii() else text


#: the longest English phrase ``terms_in`` looks up, in words
MAX_TERM_WORDS = 4


def terms_in(text: str) -> list[tuple[str, frozenset[str]]]:
    """The lexicon's values a text names, in the order it names them, each with its categories: "I'm
    obsessed with jazz and 火锅" → [("jazz", {music}), ("hotpot", {food})]. English phrases of up to four
    words, longest first, and every Chinese spelling (longest first, not inside a longer one found)."""
    found: list[tuple[int, str]] = []
    lowered = unicodedata.normalize("NFKC", text).casefold()
    taken = [False] * len(lowered)
    for alias in _CJK_ALIASES:
        start = lowered.find(alias)
        while start >= 0:
            if not any(taken[start : start + len(alias)]):
                taken[start : start + len(alias)] = [True] * len(alias)
                found.append((start, _ALIASES[alias]))
            start = lowered.find(alias, start + 1)
    words = [(m.start(), m.group()) for m in re.finditer(r"[a-z][a-z'-]*", lowered)]
    n = 0
    while n < len(words):
        for size in range(min(MAX_TERM_WORDS, len(words) - n), 0, -1):
            phrase = " ".join(w for _, w in words[n : n + size])
            singular = " ".join([*phrase.split()[:-1], singularize(phrase.split()[-1])])
            canonical = _ALIASES.get(phrase) or _ALIASES.get(singular)
            if canonical:
                found.append((words[n][0], canonical))
                n += size
                break
        else:
            n += 1
    return [(value, categories_of(value)) for _, value in sorted(found)]


def written_form(value: str, content: str) -> str | None:
    """How the user wrote a canonical value: its own spelling in their words ("McDonald" for the value
    "mcdonald"), else the spelling of it they used (``surface_form``); None if their words hold neither."""
    return _spelled(value, content) or surface_form(value, content)


def surface_form(value: str, content: str) -> str | None:
    """How the user wrote a canonical value when their words do not hold the value itself: "chengdu" in
    "我住在成都" → 成都, "seafood" in "我对海鲜过敏" → 海鲜, "noodle" in "I love ramen" → ramen (as written).
    None when the words hold the canonical value ("I live in Chengdu", "peanut" in "peanuts") or no
    spelling of it."""
    if _spelled(value, content) is not None:
        return None
    return next((found for s in _SPELLINGS.get(value, ()) if (found := _spelled(s, content))), None)


def _spelled(word: str, content: str) -> str | None:
    """The words of ``content`` that spell ``word``: a Chinese word anywhere, another at a word's start (a
    Han character before it is a boundary: 我住在Zürich spells Zürich)."""
    if has_han(word):
        return word if word in content else None
    pattern, start = _spelling(word), 0
    while (found := pattern.search(content, start)) is not None:
        start = found.start()
        if start == 0 or _ends_word(content[start - 1]):
            return found.group(0)
        start += 1
    return None


def _ends_word(char: str) -> bool:
    """Whether a word may start after ``char``: it is not a word character (``\\w``), or it is Han."""
    return not (char.isalnum() or char == "_") or is_han(char)


@lru_cache(maxsize=4096)
def _spelling(word: str) -> re.Pattern[str]:
    """Compiled once per word: the lexicon's ~1,100 spellings outnumber the 512 patterns re caches. The word
    alone: a look-behind for the boundary (a class of every script's word characters but Han) took 8 ms to
    compile with ``IGNORECASE`` on this machine kind, and a service meets new words until it has met all."""
    return re.compile(re.escape(word), re.IGNORECASE)
