"""The closed vocabulary of the user's instructions to the assistant (docs/trust.md#3-hostile-input): the one
place that says which ``style.*`` values exist. An instruction the extractor reads becomes a style slot only
when its value maps into this vocabulary; it is stored and shown as the service's own template
(``reply length: at most 3 sentences``), never in the words it was given in, so no text a user sends to
the assistant reaches a later prompt as an instruction.

* ``style.reply_length``: short, detailed, or at most N sentences / words / lines / paragraphs / points;
* ``style.language``: the reply languages of ``LANGUAGES``;
* ``style.format``: the formats of ``FORMATS`` (tables, bullet points, lists, code, examples, no emoji …);
* ``style.tone``: the tones of ``TONES``;
* ``style.taboo``: a topic to avoid, a short noun phrase (letters only, at most ``TOPIC_MAX_WORDS`` words).

Anything else is not a style value: the candidate is dropped (``canonical_style`` answers None).
"""

from __future__ import annotations

import re

from actors.language.text import has_han

LANGUAGES = frozenset({"english", "chinese", "japanese", "french", "spanish", "german", "korean"})
TONES = frozenset({"casual", "formal", "friendly", "gentle", "humorous", "direct", "simple"})
LENGTHS = frozenset({"short", "detailed"})
UNITS = ("sentences", "words", "lines", "paragraphs", "points")
TOPIC_MAX_WORDS = 4
TOPIC_MAX_HAN = 8
_MAX_COUNT = 20

#: format value → what names it in an instruction (English words, Chinese words); the first match wins, so
#: the negative formats ("no emoji") come before the positive ones
FORMATS: dict[str, tuple[str, ...]] = {
    "no emoji": (
        r"(?:don't|do not|never|no|without|stop)\b.*\bemoji",
        r"(?:别|不要|不用|不许|禁止).*(?:表情|emoji)",
    ),
    "no markdown": (r"(?:don't|do not|never|no|without)\b.*\bmarkdown", r"(?:别|不要|不用).*markdown"),
    "no tables": (r"(?:don't|do not|never|no|without)\b.*\btables?", r"(?:别|不要|不用).*表格"),
    "no bullet points": (
        r"(?:don't|do not|never|no|without)\b.*\bbullet",
        r"(?:别|不要|不用).*(?:分点|要点|列点)",
    ),
    "table": (r"\btables?\b", r"表格"),
    "numbered list": (r"\bnumbered\s+lists?\b", r"编号列表|序号"),
    "bullet points": (r"\bbullet(?:ed)?(?:\s+points?|s)?\b|\bbulleted\b", r"要点|分点|分条|列点|项目符号"),
    "list": (r"\blists?\b", r"列表|清单"),
    "code examples": (r"\bcode\s+examples?\b", r"代码(?:示例|例子)"),
    "code blocks": (r"\bcode\s+blocks?\b", r"代码块?"),
    "examples": (r"\bexamples?\b", r"例子|举例|示例"),
    "json": (r"\bjson\b", r"json"),
    "markdown": (r"\bmarkdown\b", r"markdown"),
    "plain text": (r"\bplain\s+text\b", r"纯文本"),
}
_FORMAT_PATTERNS = {
    value: tuple(re.compile(p, re.IGNORECASE) for p in patterns) for value, patterns in FORMATS.items()
}
_ZH_LANGUAGES = {
    "中文": "chinese",
    "汉语": "chinese",
    "普通话": "chinese",
    "英文": "english",
    "英语": "english",
    "日语": "japanese",
    "日文": "japanese",
    "法语": "french",
    "西班牙语": "spanish",
    "德语": "german",
    "韩语": "korean",
}
_EN_NUMBERS = {
    w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}
_ZH_NUMBERS = {c: n for n, c in enumerate("零一二三四五六七八九十")} | {"两": 2}
_EN_UNIT = re.compile(
    r"\b(?P<count>\d+|" + "|".join(_EN_NUMBERS) + r"|a few|few)\s+(?:short\s+)?(?P<unit>sentence|word|line|"
    r"paragraph|bullet point|point)s?\b",
    re.IGNORECASE,
)
_ZH_UNIT = re.compile(r"(?P<count>\d+|[一二三四五六七八九十两几]+)\s*(?:个)?(?P<unit>句|字|行|段|点|条)")
_ZH_UNITS = {
    "句": "sentences",
    "字": "words",
    "行": "lines",
    "段": "paragraphs",
    "点": "points",
    "条": "points",
}
_TOPIC_WORD = re.compile(r"^[^\W\d_]+(?:['-][^\W\d_]+)*$")


def _count(raw: str) -> int | None:
    raw = raw.casefold()
    if raw.isdigit():
        return int(raw)
    if raw in _EN_NUMBERS:
        return _EN_NUMBERS[raw]
    if raw in ("few", "a few", "几"):
        return 3
    if all(c in _ZH_NUMBERS for c in raw):  # 三, 十, 十二, 二十
        if raw == "十":
            return 10
        if raw.startswith("十"):
            return 10 + _ZH_NUMBERS[raw[1]]
        if raw.endswith("十"):
            return _ZH_NUMBERS[raw[0]] * 10
        return _ZH_NUMBERS[raw[0]] if len(raw) == 1 else None
    return None


def _reply_length(value: str) -> str | None:
    if value in LENGTHS:
        return value
    m = _EN_UNIT.search(value)
    unit = None
    if m:
        unit = "points" if "point" in m["unit"].casefold() else m["unit"].casefold() + "s"
    else:
        m = _ZH_UNIT.search(value)
        unit = _ZH_UNITS[m["unit"]] if m else None
    count = _count(m["count"]) if m else None
    if unit is None or count is None or not 1 <= count <= _MAX_COUNT:
        return None
    return f"at most {count} {unit if count > 1 else unit[:-1]}"


def _format(value: str) -> str | None:
    return next(
        (name for name, patterns in _FORMAT_PATTERNS.items() if any(p.search(value) for p in patterns)), None
    )


def _topic(value: str) -> str | None:
    """A topic to avoid is a short noun phrase: words of letters only (no digits, addresses or markup)."""
    text = " ".join(value.split())
    if not text:
        return None
    if has_han(text):
        return (
            text if len(text) <= TOPIC_MAX_HAN and all(ch.isalpha() for ch in text.replace(" ", "")) else None
        )
    words = text.split()
    return (
        text.casefold()
        if len(words) <= TOPIC_MAX_WORDS and all(_TOPIC_WORD.match(w) for w in words)
        else None
    )


def canonical_style(slot: str, value: str | None) -> str | None:
    """The vocabulary value an instruction names for ``slot``, or None when it names none."""
    if not value:
        return None
    value = value.strip()
    if slot == "style.reply_length":
        return _reply_length(value.casefold())
    if slot == "style.language":
        found = _ZH_LANGUAGES.get(value, value.casefold())
        return found if found in LANGUAGES else None
    if slot == "style.tone":
        return value.casefold() if value.casefold() in TONES else None
    if slot == "style.format":
        return _format(value)
    if slot == "style.taboo":
        return _topic(value)
    return None
