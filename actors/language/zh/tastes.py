"""Chinese rules for reply style, temporary states, tastes, plans, goals and lessons. Runs after
``actors.language.zh.facts``.

States come before tastes: "做饭好烦" / "今天好累" are moods (``state.mood``), never a dislike of cooking.
"""

from __future__ import annotations

import re

from actors.language.lexicon import emotion_of, normalize_value, preference_slot
from actors.language.rules import (
    Finding,
    RuleBook,
    always,
    counted,
    fact,
    formatted,
    is_real_object,
    liking,
    listed,
    object_phrase,
)
from actors.language.zh.facts import HABIT, OBJ, ZADV, S
from actors.language.zh.syntax import PHRASING
from schemas.enums import Polarity

NEGATIVE = Polarity.NEGATIVE
book = RuleBook()


def _object(raw: str) -> str:
    return re.sub(
        r"(?:了|啦|呢|啊|呀|哦|的事|的事情|的话题|这件事|这个话题)+$", "", object_phrase(raw, PHRASING)
    )


def _phrase_value(raw: str) -> str | None:
    obj = _object(raw)
    if not is_real_object(obj):
        return None
    return normalize_value(obj[:30]) or None


# --- interaction style ----------------------------------------------------------------------------


COUNT = r"[一二三四五六七八九十两几\d]+"
book.rule(
    r"(?:控制在|不超过|不要超过|别超过|限制在|最多)" + COUNT + r"(?:句话?|个字|字|行|段|点)",
    r"^(?:请|麻烦|你|以后|回答|回复)*(?:用)?" + COUNT + r"句话(?:回答|说完|讲完|概括|总结|说清楚)",
)(counted)


book.rule(
    r"用(?:表格|列表|清单|要点|代码块?|markdown|项目符号)(?:的)?(?:形式|格式|方式)?(?:来)?"
    r"(?:回答|回复|列出|展示|给我|写|说明|整理|呈现)",
    r"(?:分点|分条|列点)(?:回答|回复|列出|说明)",
    r"(?:列成|列出|分成|整理成|写成|做成)(?:几个|几条)?(?:要点|条目|清单|列表|表格)",
    r"(?:别|不要|不用|少|不需要)(?:再)?(?:用|加|发|带|放)?(?:太多)?(?:表情|emoji|表情符号|表情包)",
    r"(?:表情|emoji|表情符号|表情包)(?:就)?(?:不用了|别用了|不要了|少用|少发|去掉)",
)(formatted)


book.rule(
    r"(?:简短|简洁|精简|简单|短)(?:一)?(?:点|些)",
    r"(?:别|不要|不用)(?:太|那么)?(?:啰嗦|啰唆|长篇大论|说那么多|写那么长)",
    r"(?:太长了|太啰嗦了)",
)(always("style.reply_length", "short"))


book.rule(r"(?:详细|具体)(?:一)?(?:点|些)|展开(?:讲|说)|多解释")(always("style.reply_length", "detailed"))


book.rule(
    r"用(?:简单|通俗|浅显)(?:易懂)?的?(?:话|语言|词|说法)|(?:通俗|浅显)(?:易懂)?(?:一)?点|大白话|说人话"
)(always("style.tone", "simple"))


book.rule(r"多举(?:点|些|几个)?例子|举(?:个|几个|些)例子")(formatted)


_TONES = {
    "轻松": "casual",
    "随意": "casual",
    "活泼": "casual",
    "正式": "formal",
    "严肃": "formal",
    "客气": "formal",
    "友好": "friendly",
    "温柔": "gentle",
    "幽默": "humorous",
    "直接": "direct",
}


@book.rule(
    r"(?P<tone>轻松|随意|正式|友好|温柔|幽默|直接|严肃|客气|活泼)(?:一)?点",
    r"语气(?:要)?(?P<tone2>轻松|随意|正式|友好|温柔|幽默|直接|严肃|客气|活泼)",
    r"别(?:那么|太)(?P<stiff>正式|严肃)",
)
def _tone(m: re.Match[str], clause: str) -> list[Finding]:
    if m.groupdict().get("stiff"):
        return [fact("style.tone", "casual")]
    return [fact("style.tone", _TONES[m.groupdict().get("tone") or m["tone2"]])]


@book.rule(r"用(?P<lang>中文|英文|英语|日语|汉语|普通话)(?:回答|回复|跟我说|和我说|交流|说|写|聊)")
def _reply_language(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("style.language", normalize_value(m["lang"]))]


@book.rule(
    r"(?:别|不要|不许|请不要|以后别|以后不要)(?:再)?(?:跟我|和我)?(?:聊|谈|提|问|讨论)(?:起|到)?" + OBJ,
    S + r"不想(?:再)?(?:聊|谈|讨论|提)(?:起|到)?" + OBJ,
)
def _taboo(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _object(m["obj"])
    if len(obj) < 2:
        return None
    return listed(obj, PHRASING, lambda v: fact("style.taboo", v, polarity=NEGATIVE))


# --- temporary states -----------------------------------------------------------------------------

EMO = (
    r"(?P<emo>累|烦|开心|高兴|快乐|难过|伤心|郁闷|焦虑|紧张|生气|无聊|崩溃|沮丧|失落|兴奋|激动|疲惫|困|忙|"
    r"烦躁|孤独|寂寞|心累)"
)
NOW = r"(?:今天|今晚|这几天|这两天|这周|最近|刚才|此刻|今早|这会儿|现在|今天真是|早上|下班)"
INTENSE = r"(?:好|太|真|很|特别|有点|有些|超|非常|挺|快|超级|巨|有一点)"


@book.rule(
    INTENSE + EMO + r"(?:死了|坏了|了|啊|呀|哦|啦|呢|极了)*$",
    NOW + r"[^，,。]{0,10}?" + INTENSE + r"?" + EMO,
    r"(?P<stress>压力(?:好|很|特别|太|有点|超|非常|挺)?大)",
    r"心情(?P<mood>不好|很差|糟糕|不太好|很好|不错|挺好|超好)",
)
def _mood(m: re.Match[str], clause: str) -> list[Finding] | None:
    if re.search(r"喜欢|讨厌|爱", clause[: m.start()]):
        return None  # "我喜欢忙碌的生活" is a taste, not a mood
    groups = m.groupdict()
    if groups.get("stress"):
        return [fact("state.mood", "stressed")]
    if groups.get("mood"):
        return [fact("state.mood", "sad" if re.search(r"不|差|糟", groups["mood"]) else "happy")]
    mood = emotion_of(groups["emo"])
    return [fact("state.mood", mood)] if mood else None


@book.rule(
    S + r"(?:在|正在)?(?:忙着|忙|准备|复习|赶|研究|搞)" + OBJ,
    r"^我?(?:最近|这周|这段时间|这阵子|目前|正)+(?:在|正在)?(?:学|写|做)" + OBJ,
)
def _focus(m: re.Match[str], clause: str) -> list[Finding] | None:
    if not re.search(r"最近|这周|这段时间|这阵子|目前|正在|在忙|忙着", m.group(0)):
        return None  # "我准备…" without a now-marker is a plan, read below
    focus = _phrase_value(m["obj"])
    return [fact("state.focus", focus)] if focus else None


SICK = (
    r"(?P<sick>感冒|发烧|生病|病了|咳嗽|嗓子哑了|拉肚子|不舒服|没精神|鼻塞|流鼻涕|过敏犯了|"
    r"(?:头|嗓子|喉咙|胃|肚子|牙|腰|背|脖子|肩膀|膝盖|腿|眼睛|胸口|心口)(?:好|很|有点|有些|特别|超|太|真|一直)?"
    r"(?:疼|痛|晕|不舒服|难受|发炎|发痒))"
)


@book.rule(
    S + r"(?:在)?(?P<sit>出差|开会|住院|休假|度假|路上|机场|加班)(?:中|呢|了)?$",
    S + r"(?P<sick>感冒|发烧|生病|病|头疼|头痛)了",
    # "我今天有点感冒", "头疼", "这两天一直咳嗽": feeling ill now, said with or without a time word
    S
    + NOW
    + r"?"
    + ZADV
    + r"(?:身体)?"
    + INTENSE
    + r"?"
    + ZADV
    + SICK
    + r"(?:了|呢|啊|得厉害|得不行|死了)*$",
)
def _situation(m: re.Match[str], clause: str) -> list[Finding]:
    if m.groupdict().get("sick"):
        return [fact("state.situation", "sick")]
    return [fact("state.situation", m["sit"])]


# --- tastes ---------------------------------------------------------------------------------------


@book.rule(
    S + r"(?:不喜欢|不太喜欢|不怎么喜欢|不爱|讨厌|受不了|反感|烦|不想要|不吃|不喝|不看|不听)" + OBJ,
    S + r"对(?P<obj>[^，,。]+?)(?:不|没|没有)(?:太)?(?:感兴趣|兴趣)",
    # the food said first: 香菜我是一口都不吃的, 肥肉我从来不碰
    r"^(?!" + HABIT + "|" + NOW + r"|以后|今后)(?P<obj>[^，,。我你他她]{1,8}?)我(?:是)?"
    r"(?:一口|一点|从来|根本|完全|压根|死活|绝对)(?:儿)?(?:都|也)?"
    r"不(?:吃|碰|喝)(?:的)?(?:了|啊|呢|哦)?$",
    r"^(?:请|以后|你)?(?:别|不要|不用)(?:再)?(?:给我|帮我|向我|跟我)?(?:推荐|推|发|安排)(?:了)?" + OBJ,
)
def _dislike(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(_object(m["obj"]), PHRASING, lambda v: liking(v, NEGATIVE))


@book.rule(
    r"^我?最(?:喜欢|爱)的(?P<cat>[^，,。是]{1,6})是" + OBJ,
    r"^(?P<obj>[^，,。是]{1,8}?)是我(?:周末|平时|业余|空闲时)?最(?:喜欢|爱)的(?P<cat>[^，,。]{1,6}?)"
    r"(?:了|啦|之一)?$",
    r"^(?P<obj>[^，,。是]{1,8}?)是我的(?:最爱|心头好)(?P<cat>)(?:了|啦|之一)?$",
)
def _favourite(m: re.Match[str], clause: str) -> list[Finding] | None:
    topic = preference_slot(normalize_value(m["cat"]))
    slot = topic if topic != "preference.general" else None
    return listed(_object(m["obj"]), PHRASING, lambda v: liking(v, slot=slot))


@book.rule(
    r"^(?:我)?" + HABIT + r"{1,2}(?:我)?" + ZADV + r"(?:都|会|总是|经常|常常)?(?:要)?"
    r"(?:喝|打|玩|去|练|跑|游|看|听|吃)(?P<obj>[^，,。.!！?？;；了]+)$"
)
def _habit(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "我每天早上都喝咖啡", "我每周都打网球": a pastime kept up is one the user likes (a known one: going to
    the office every day is no taste)."""
    return listed(_object(m["obj"]), PHRASING, lambda v: liking(v), accept=_known_taste)


def _known_taste(value: str) -> bool:
    return preference_slot(value) != "preference.general"


@book.rule(
    S + r"(?:喜欢|爱|热爱|偏好|偏爱|钟爱|迷上了|爱上了|喜爱|享受|习惯)" + OBJ,
    S + r"对(?P<obj>[^，,。]+?)(?:很|特别|非常|挺|比较)?(?:感兴趣|有兴趣)",
    # a fan of it: 我是个铁杆的足球迷, 我是资深咖啡爱好者, 我是摇滚发烧友
    S + r"是(?:个|一个|一名|名)?(?:铁杆|忠实|资深|超级|狂热|十足|骨灰级)?(?:的)?"
    r"(?P<obj>[^，,。的]{2,8}?)(?:迷|粉|爱好者|发烧友)(?:$|[，,。！!])",
)
def _like(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(_object(m["obj"]), PHRASING, lambda v: liking(v))


# --- plans, goals, lessons ------------------------------------------------------------------------

WHEN = (
    r"(?:明天|后天|大后天|下周[一二三四五六日天末]?|下个?星期[一二三四五六日天]?|下个?月|下次|今晚|"
    r"周[一二三四五六日末]|星期[一二三四五六日天]|这周末|这个周末|月底|年底|过几天|过两天|待会儿?|一会儿|"
    r"\d+号|\d+月\d+[日号]|下礼拜|明早|明晚|明年|下半年)"
)


@book.rule(
    r"^(?:我)?[^，,。]{0,6}?"
    + WHEN
    + r"[^，,。]{0,4}?(?:要|得|会|打算|准备|计划|去|有|约了|考|面试|开会|出差|交|飞|回)"
    + r"(?P<obj>[^，,。]*)",
    S + r"(?:打算|准备|计划)" + OBJ,
)
def _plan(m: re.Match[str], clause: str) -> list[Finding] | None:
    plan = _phrase_value(m["obj"]) or _phrase_value(m.group(0))
    return [fact("task.plan", plan, confidence=0.8)] if plan else None


@book.rule(
    S + r"(?:想|想要|希望|梦想|目标是|立志)(?:能)?(?P<obj>(?:学|学会|成为|考上|考|练|掌握|减肥|瘦|存|买|"
    r"换)[^，,。]*)",
    r"^我?的?(?:目标|梦想|计划)是" + OBJ,
)
def _goal(m: re.Match[str], clause: str) -> list[Finding] | None:
    goal = _phrase_value(m["obj"])
    return [fact("task.goal", goal, confidence=0.8)] if goal else None


METHOD = r"(?P<obj>[^，,。]{0,12}?(?:方法|办法|方案|策略|思路|做法|招|这样做|这么做|这个|那个))"


@book.rule(METHOD + r"(?:真|很|挺|特别|非常|确实|还)?(?:管用|有效|好用|靠谱|奏效|不错|可行|有用)")
def _lesson_worked(m: re.Match[str], clause: str) -> list[Finding] | None:
    what = _phrase_value(m["obj"]) or "approach"
    return [fact("task.lesson", what, confidence=0.8)]


@book.rule(
    METHOD + r"(?:真|很|挺|根本|完全|确实)?(?:不管用|没用|不行|失败了?|行不通|没效果|不靠谱|翻车了?|效果不好|"
    r"不好使)",
    r"^(?:教训|经验)(?:是|就是)" + OBJ,
    r"^下次(?P<avoid>别|不要|不能)?(?:要|得|应该|记得)?" + OBJ,
)
def _lesson_failed(m: re.Match[str], clause: str) -> list[Finding] | None:
    what = _phrase_value(m["obj"]) or "approach"
    positive = m.group(0).startswith(("教训", "经验", "下次")) and not m.groupdict().get("avoid")
    polarity = Polarity.POSITIVE if positive else NEGATIVE
    return [fact("task.lesson", what, polarity=polarity, confidence=0.8)]
