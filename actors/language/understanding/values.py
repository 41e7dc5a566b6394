"""The value of a slot in a clause no rule read: once the semantic reader has decided what a clause is about
("Bouldering is my main hobby these days" is a taste), this finds what it names ("bouldering"), in the
clause's own words and canonical like a rule's value. Lexicon first (``lexicon.terms_in``: places, jobs,
foods, tastes, allergens, languages in either language), then the shape of the clause: capitalised runs
for English names and places, jieba's name tags for Chinese, the first activity or noun phrase for a
taste. None when nothing is found: the reader then abstains (a slot without a value restates nothing).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from actors.language.lexicon import (
    canonical_place,
    categories_of,
    emotion_of,
    normalize_value,
    preference_slot,
    terms_in,
)
from actors.language.rules import format_key, is_real_object
from actors.language.text import HAN, has_han
from actors.language.zh.facts import is_person_name
from actors.language.zh.tokens import posseg

_CAPITALISED = re.compile(r"(?<![\w'])(?-i:[A-ZÀ-ÖØ-Þ])[\w'-]*\w(?:\s+(?-i:[A-ZÀ-ÖØ-Þ])[\w'-]*\w){0,3}")
#: capitalised words that open sentences or name no one
_NOT_NAMED = frozenset(
    """i i'm i've i'd i'll im the my our you your we he she they it its this that these those just nice
    friends folks people most hi hey hello please mr mrs ms dr ok so but and or what where when why how
    as at in on ugh honestly today tonight monday tuesday wednesday thursday friday saturday sunday
    english chinese japanese french spanish german korean""".split()
)
_ZH_GIVEN = re.compile(
    rf"(?:(?:叫|喊|称呼)我?|是|名字?是?|本人|名叫)\s*(?P<name>[A-Za-z][\w'-]+|[老小阿][{HAN}]|[{HAN}]{{2,3}})"
)


def _capitalised_runs(text: str) -> list[str]:
    """Capitalised word runs, without the words that only open a sentence ("Folks around here … Dave")."""
    runs = []
    for m in _CAPITALISED.finditer(text):
        words = [w for w in m.group().split() if w.casefold() not in _NOT_NAMED]
        if words:
            runs.append(" ".join(words))
    return runs


def _terms(text: str, *categories: str) -> list[str]:
    return [value for value, cats in terms_in(text) if cats & set(categories)]


def _name(text: str) -> str | None:
    if has_han(text):
        for m in _ZH_GIVEN.finditer(text):
            name = m["name"]
            if name.isascii() or is_person_name(name) or is_person_name(name[:2]):
                return (name if name.isascii() or is_person_name(name) else name[:2]).casefold()
        people = [w.word for w in posseg().cut(text) if w.flag == "nr" and len(w.word) > 1]
        return people[0] if people else None
    runs = [r for r in _capitalised_runs(text) if not categories_of(normalize_value(r))]
    return runs[-1].casefold() if runs else None


def _place(text: str) -> str | None:
    places = _terms(text, "city") or _terms(text, "province")
    if places:
        return places[0]
    if has_han(text):
        named = [w.word for w in posseg().cut(text) if w.flag == "ns"]
        return canonical_place(named[0]) if named else None
    runs = _capitalised_runs(text)
    return canonical_place(runs[-1]) if runs else None


#: what someone does for a living said as the work itself ("I write code for a living"): the reader's only
#: (the lexicon would turn every "teaching" into "teacher")
_WORK = {
    "programmer": ("write code", "writing code", "code for a living"),
    "nurse": ("nursing",),
    "teacher": ("teaching",),
    "lawyer": ("practice law",),
    "pilot": ("fly planes",),
    "driver": ("drive a taxi", "开出租"),
    "dentist": ("fixing teeth",),
    "translator": ("translator", "翻译"),
    "accountant": ("做财务", "财务", "do people's taxes"),
    "baker": ("bakery", "baker"),
    "cashier": ("cash register", "cashier"),
    "writer": ("写稿子", "撰稿人"),
    "architect": ("建筑设计",),
    "doctor": ("看病",),
    "police officer": ("派出所",),
    "data analyst": ("data analysis",),
}


def _occupation(text: str) -> str | None:
    jobs = _terms(text, "occupation")
    if jobs:
        return jobs[-1]
    lowered = text.casefold()
    return next((job for job, said in _WORK.items() for words in said if _says(words, lowered)), None)


def _says(words: str, lowered: str) -> bool:
    """Chinese words anywhere; English ones from a word's start."""
    return words in lowered if has_han(words) else bool(re.search(rf"(?<!\w){re.escape(words)}", lowered))


def _employer(text: str) -> str | None:
    known = _terms(text, "company")
    if known:
        return known[0]
    if has_han(text):
        named = [w.word for w in posseg().cut(text) if w.flag in ("nt", "nz")]
        return named[0] if named else None
    runs = [r for r in _capitalised_runs(text) if not categories_of(normalize_value(r))]
    return normalize_value(runs[-1]) if runs else None


_DIETS = (
    (re.compile(r"plant-based|vegan|全素|蛋奶都不", re.I), "vegan"),
    (re.compile(r"gluten|麸质", re.I), "gluten-free"),
    (re.compile(r"kosher", re.I), "kosher"),
    (re.compile(r"halal|清真|回族|回民", re.I), "halal"),
    (re.compile(r"lactose|乳糖|milk products|dairy|牛奶", re.I), "lactose intolerant"),
    (re.compile(r"only eat fish|pescatarian|只吃鱼", re.I), "pescatarian"),
    (re.compile(r"pork|猪肉", re.I), "no pork"),
    (re.compile(r"beef|牛肉", re.I), "no beef"),
    (re.compile(r"meat|vegetarian|素|荤", re.I), "vegetarian"),
)


def _diet(text: str) -> str | None:
    return next((diet for pattern, diet in _DIETS if pattern.search(text)), None)


_PARENT_OF = re.compile(
    r"(?:mother|mom|mum|father|dad|parent)\s+(?:of|to)\b|孩子的(?:爸爸|妈妈)|宝妈|宝爸", re.I
)


def _family(text: str) -> str | None:
    if _PARENT_OF.search(text):
        return "child"
    roles = _terms(text, "family")
    return roles[0] if roles else None


def _pet(text: str) -> str | None:
    from actors.language.en.facts import BREEDS  # the breeds that name their animal

    lowered = text.casefold()
    breed = next((animal for breed, animal in BREEDS.items() if breed in lowered), None)
    pets = _terms(text, "pet")
    return breed or (pets[0] if pets else None)


#: words that only frame a taste ("my main hobby these days", 我最大的爱好): never its value
_TASTE_FRAME = frozenset(
    """nothing something everything thing things morning evening anything day days weekend weekends session
    sessions work hobby hobbies passion favourite favorite main best ever way highlight week guilty pleasure
    fan huge obsessed hooked really into time hours happy sane""".split()
)
_GERUND = re.compile(r"\b([a-z]{3,}ing)\b", re.I)
_AFTER_VERB = re.compile(
    r"\b(?:into|of|with|on|for|love|loves|adore|enjoy|miss|eat|drink|watch|read|play|put on|about|than|by|"
    r"taken up|find me on)\s+(?:an?\s+|the\s+|my\s+|some\s+|good\s+|bowl of\s+|cup of\s+)?"
    r"(?P<obj>[a-z][a-z' -]{1,30}?)(?=\s+(?:is|are|and|every|after|on|at|in|when|keeps|has|makes|puts|drives|"
    r"bores|gets)\b|[.,!?;]|$)",
    re.I,
)
_ZH_TASTE_FRAME = frozenset(
    "我 最近 迷上 现在 最大 爱好 的 是 喜欢 特别 超 爱 每周 都 要 一次 周末 一般 去 个 控 没有 什么 比 "
    "更 爽 了 最 乐趣 一 有空 就 让 很 放松 从 大学 有 十足 吃货 尤其 对 着迷 每天 喝 享受 铁杆 粉丝 平时 "
    "看 玩 方式 感兴趣 死 冬天 期待 事 下班 后 时候 开心 命 百看不厌 真的 不 下去 受不了 一点 兴趣 没有 "
    "那个 味道 欣赏 不来 烦 逛 已经 腻 这种 感冒 完全 无感 吃不了 也 不爱吃 一口 碰 音乐 小说 馆".split()
)


#: lexicon values that only name a kind of taste ("my main hobby"): never the taste itself
_TASTE_KINDS = frozenset({"hobby", "sport", "music", "travel", "shopping", "movie", "book", "video"})


def _taste(text: str) -> str | None:
    known = [v for v in _terms(text, *_TASTE_CATEGORIES) if v not in _TASTE_KINDS]
    if known:
        return known[0]
    if has_han(text):
        words = [w.word for w in posseg().cut(text) if w.word not in _ZH_TASTE_FRAME and has_han(w.word)]
        words = [w for w in words if len(w) > 1]
        return normalize_value(words[0]) if words else None
    for m in _AFTER_VERB.finditer(text):
        phrase = normalize_value(m["obj"])
        kept = [w for w in phrase.split() if w not in _TASTE_FRAME]
        if kept and len(kept) <= 3:
            return " ".join(kept)
    gerunds = [g.casefold() for g in _GERUND.findall(text) if g.casefold() not in _TASTE_FRAME]
    return gerunds[0] if gerunds else None


_TASTE_CATEGORIES = ("food", "drink", "music", "sport", "hobby", "content", "travel", "style", "shopping")

_DETAILED = r"detail|thorough|in-depth|long version|step by step|spell\b.*\bout|详细|全面|讲清楚|展开"
_SHORT = r"short|brief|gist|sentence|essay|brevity|concise|短|重点|简|一两句|太长|看不完"
_LENGTHS = ((re.compile(_DETAILED, re.I), "detailed"), (re.compile(_SHORT, re.I), "short"))
_TONES = (
    (re.compile(r"professional|formal|正式|工作场合", re.I), "formal"),
    (re.compile(r"humou?r|funny|joke|幽默|风趣", re.I), "humorous"),
    (re.compile(r"straight|direct|blunt|sugar|直说|直接|绕弯", re.I), "direct"),
    (re.compile(r"gentle|kind|soft|温柔|体贴", re.I), "gentle"),
    (re.compile(r"child|kid|simple|plain|小学生|通俗|简单", re.I), "simple"),
    (re.compile(r"friend|casual|relaxed|chill|随意|轻松|随便", re.I), "casual"),
)


def _first(table: tuple[tuple[re.Pattern[str], str], ...]) -> Callable[[str], str | None]:
    return lambda text: next((value for pattern, value in table if pattern.search(text)), None)


def _reply_language(text: str) -> str | None:
    named = Counter(_terms(text, "language"))
    if not named:
        return None
    top = max(named.values())
    return next(v for v in _terms(text, "language") if named[v] == top)


def _mood(text: str) -> str | None:
    lowered = text.casefold()
    for size in (4, 3, 2, 1):
        words = re.findall(r"[a-z']+", lowered)
        for n in range(len(words) - size + 1):
            mood = emotion_of(" ".join(words[n : n + size]))
            if mood:
                return mood
    for length in range(4, 0, -1):
        for n in range(len(lowered) - length + 1):
            piece = lowered[n : n + length]
            if has_han(piece):
                mood = emotion_of(piece)
                if mood:
                    return mood
    return None


_SITUATIONS = (
    (re.compile(r"airport|机场", re.I), "at the airport"),
    (re.compile(r"hospital|住院", re.I), "in the hospital"),
    (re.compile(r"work trip|business trip|出差", re.I), "on a business trip"),
    (re.compile(r"vacation|holiday|休假|度假", re.I), "on vacation"),
)


def _situation(text: str) -> str | None:
    if _terms(text, "situation") or re.search(r"\bsick\b|\bflu\b|\bcold\b", text, re.I):
        return "sick"
    return _first(_SITUATIONS)(text)


def _format(text: str) -> str | None:
    return format_key(text)


#: label → how its value is found; a label not here has no reader
EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "basic.name": _name,
    "basic.residence": _place,
    "basic.hometown": _place,
    "basic.occupation": _occupation,
    "basic.employer": _employer,
    "basic.allergy": lambda text: next(iter(_terms(text, "allergen")), None),
    "basic.diet_restriction": _diet,
    "basic.pet": _pet,
    "basic.family": _family,
    "preference": _taste,
    "preference.negative": _taste,
    "style.reply_length": _first(_LENGTHS),
    "style.format": _format,
    "style.tone": _first(_TONES),
    "style.language": _reply_language,
    "state.mood": _mood,
    "state.situation": _situation,
}


#: statements about the one spoken to ("you're so kind") are no instruction about answers
_ABOUT_YOU = re.compile(r"\byou(?:'re| are|'ve| have| were)\b|你(?:真|好|太|很)", re.I)


def value_of(label: str, text: str) -> str | None:
    """The canonical value a clause gives for ``label``; None if it names none the reader can find, or
    only a pronoun or a contraction ("they've")."""
    extract = EXTRACTORS.get(label)
    if extract is None or (label.startswith("style.") and _ABOUT_YOU.search(text)):
        return None
    value = extract(text)
    if not value or "'" in value.split()[0] or not is_real_object(value):
        return None
    return value


def slot_of(label: str, value: str) -> str:
    """The slot a label's value lands in: a taste's slot is its topic, as for the rules."""
    return preference_slot(value) if label.startswith("preference") else label
