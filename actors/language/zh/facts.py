"""Chinese rules for what the user *is*: allergies (and their contradictions), diet, health, name, age,
residence, hometown, work, family, pets, people they know, languages. ``actors.language.zh.tastes`` runs
after.

Chinese omits the subject freely, so patterns are anchored at the start of the clause with an optional
我 and a run of adverbs (其实, 现在, 一直, 可能 …): "现在住苏州" reads like "我现在住苏州", while
"他住苏州" matches nothing.
"""

from __future__ import annotations

import re

from actors.language.lexicon import (
    canonical_place,
    categories_of,
    family_role,
    han_spellings,
    is_allergen,
    is_place,
    normalize_value,
    occupation_of,
)
from actors.language.rules import (
    MENTION_IMPORTANCE,
    Finding,
    RuleBook,
    fact,
    is_real_object,
    liking,
    listed,
    object_phrase,
)
from actors.language.text import HAN, has_han
from actors.language.zh.syntax import PHRASING
from actors.language.zh.tokens import posseg
from schemas.enums import Polarity

NEGATIVE = Polarity.NEGATIVE
book = RuleBook()

ZADV = (
    r"(?:也|还|都|其实|一直|真的|特别|非常|很|挺|有点|可能|好像|应该|大概|也许|已经|现在|目前|从小|本来|就|"
    r"比较|超|最|真|蛮|还是|平时|一般|向来|确实|始终|又|才|刚|刚刚|早就|后来|今年|去年|前年|上个月|最近)*"
)
#: when a habit happens ("我周末喜欢…", "周末我最喜欢…"): said of a habit, not a single occasion
HABIT = (
    r"(?:每个周末|每周末|周末|平时|平常|每天|每周|晚上|早上|有空(?:的时候)?|没事(?:的时候)?|"
    r"(?:空闲|闲暇|休息|放假|业余)(?:的)?时(?:候|间)?|闲下来(?:的时候)?|下班(?:以|之)?后|业余)"
)
S = r"^" + HABIT + r"?(?:我|本人)?" + HABIT + r"?" + ZADV
OBJ = r"(?P<obj>[^，,。.!！?？;；]+)"
NAME = rf"(?P<name>[{HAN}·]{{1,6}}?|[A-Za-z][\w'-]{{0,20}})"
NAME_END = r"(?:[，,。.!！~～]|就(?:行|好|可以)|吧|啊|哦|呀|啦|$)"
NUMBER = r"(?P<num>\d{1,3}|[一二两三四五六七八九十百]{1,4})"
_NOT_NAMES = re.compile(r"^(?:我|你|他|她|它|外卖|车|人|醒|什么|啥|做|了)")
_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def chinese_number(text: str) -> int | None:
    """Arabic or simple Chinese numerals up to 999 ("三十五" → 35)."""
    if text.isdigit():
        return int(text)
    total, current = 0, 0
    for ch in text:
        if ch in _DIGITS:
            current = _DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


def _clean_object(raw: str) -> str:
    return re.sub(r"(?:了|啦|呢|啊|呀|哦|的|哈)+$", "", object_phrase(raw, PHRASING))


# --- contradictions of an allergy, then allergies, diet and health --------------------------------


@book.rule(
    S + r"对(?P<obj>[^，,。]+?)" + ZADV + r"(?:不过敏|不再过敏|没有过敏|没过敏)",
    S + r"不(?:再)?对(?P<obj>[^，,。]+?)过敏",
)
def _not_allergic(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(_clean_object(m["obj"]), PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE))


@book.rule(
    rf"^(?:其实)?(?P<obj>[{HAN}]{{1,6}}?)(?:我)?" + ZADV + r"(?:吃|喝|碰)?(?:也)?(?:没问题|没事|没关系)了?",
    r"^(?:其实)?(?:我)?" + ZADV + rf"(?:吃|喝|碰)(?P<obj>[{HAN}]{{1,6}}?)(?:也)?(?:没问题|没事|没关系)了?",
    rf"^(?:其实)?(?P<obj>[{HAN}]{{1,6}}?)(?:我)?" + ZADV + r"(?:可以|能|敢)(?:吃|喝|碰)了",
)
def _allergen_fine(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "海鲜我现在吃没问题了": denies an allergy to a known allergen."""
    return listed(
        m["obj"], PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE), accept=is_allergen
    )


@book.rule(S + r"(?P<verb>不介意|能吃|可以吃|敢吃|吃得了|能喝|可以喝|不怕)" + OBJ)
def _tolerates(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _clean_object(m["obj"])
    found = listed(obj, PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE), accept=is_allergen)
    if found or m["verb"] != "不介意":
        return found
    return listed(obj, PHRASING, lambda v: liking(v, confidence=0.5, inferred=True))


@book.rule(
    S + r"对(?P<obj>[^，,。]+?)" + ZADV + r"过敏",
    S + r"有(?P<obj>[^，,。]+?)过敏",
    S + r"(?:一)?(?:吃|碰|喝|闻)(?:到)?(?P<obj>[^，,。]+?)就过敏",
    S + r"(?P<obj>[^，,。对有不没]{1,8}?)过敏",
)
def _allergy(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _clean_object(m["obj"])
    if re.search(r"[不没]", obj):
        return None
    return listed(obj, PHRASING, lambda v: fact("basic.allergy", v))


_DIETS = {
    "吃素": "vegetarian",
    "吃全素": "vegan",
    "不吃肉": "vegetarian",
    "不吃荤": "vegetarian",
    "吃清真": "halal",
    "是回民": "halal",
    "不吃猪肉": "no pork",
    "不吃牛肉": "no beef",
    "不吃羊肉": "no lamb",
}


@book.rule(S + r"(?:不再|不|没再)(?P<diet>吃素|吃全素)", S + r"(?:开始|又|重新)?吃(?:肉|荤)了")
def _diet_ended(m: re.Match[str], clause: str) -> list[Finding]:
    """ "我不吃素了", "我现在吃肉了": a vegetarian (or vegan) diet has ended."""
    diet = "vegan" if m.groupdict().get("diet") == "吃全素" else "vegetarian"
    return [fact("basic.diet_restriction", diet, polarity=NEGATIVE, change=True)]


@book.rule(
    S + r"(?P<diet>吃素|吃全素|不吃肉|不吃荤|吃清真|是回民|不吃猪肉|不吃牛肉|不吃羊肉)",
    S + r"(?P<vegetarian>是素食(?:主义)?者?)",
    S + r"(?P<lactose>乳糖不耐受?)",
)
def _diet(m: re.Match[str], clause: str) -> list[Finding]:
    if m.groupdict().get("vegetarian"):
        return [fact("basic.diet_restriction", "vegetarian")]
    if m.groupdict().get("lactose"):
        return [fact("basic.diet_restriction", "lactose intolerant")]
    return [fact("basic.diet_restriction", _DIETS[m["diet"]])]


_CONDITIONS = {
    "糖尿病": "diabetes",
    "高血压": "high blood pressure",
    "哮喘": "asthma",
    "心脏病": "heart disease",
    "胃病": "stomach disease",
    "偏头痛": "migraine",
    "失眠": "insomnia",
    "抑郁症": "depression",
    "焦虑症": "anxiety",
    "痛风": "gout",
    "鼻炎": "rhinitis",
}


@book.rule(S + r"(?:有|得了|患有|查出|查出了)(?P<cond>" + "|".join(_CONDITIONS) + ")")
def _health(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("basic.health", _CONDITIONS[m["cond"]])]


# --- who the user is ------------------------------------------------------------------------------


#: the common surnames: "我是李娜" gives a name, "我是老师" an occupation
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
#: a person called by a nickname (老李, 小王, 阿强) or by a full name starting with a common surname
PERSON = rf"(?:[老小阿][{HAN}]|[{SURNAMES}][{HAN}]{{1,2}}?)"
#: how words for what someone is end (高中生, 白领, 马拉松迷): never a given name after 我是
_ROLE_ENDINGS = tuple("生领员师家手族迷控党者人的友")
#: who calls the user by a name: 大家, 同事们, 朋友们, 家里人 …
_CALLERS = (
    r"(?:大家伙儿?|大家|大伙儿?|别人|朋友们?|同事们?|同学们?|哥们儿?|家里人|家人|身边的人|周围的人|他们|我妈|我爸|"
    r"爸妈|我老婆|我老公|熟人|队友们?|室友们?)"
)


@book.rule(
    r"^我(?:的名字)?(?:叫|是叫)" + NAME + NAME_END,
    r"^我的(?:名字|全名|中文名|英文名)是" + NAME + NAME_END,
    r"^(?:你)?(?:可以|就|直接|以后)*(?:叫|喊|称呼)我" + NAME + NAME_END,
    r"^" + _CALLERS + r"(?:一般|平时|通常|都|也)*(?:叫|喊|称呼)我" + NAME + NAME_END,
    rf"^(?:你好|您好|大家好|嗨|哈喽)?[，,]?我是(?P<name>{PERSON})(?:[，,。.!！~～]|$)",
)
def _name(m: re.Match[str], clause: str) -> list[Finding] | None:
    name = m["name"]
    if _NOT_NAMES.match(name) or (has_han(name[:1]) and len(name) > 4):
        return None
    if m.group(0).lstrip("你您大家好嗨哈喽，, ").startswith("我是") and not is_person_name(name):
        return None  # "我是程序员", "我是北京人", "我是高手": what the user is, not who
    return [fact("basic.name", name.casefold())]


def is_person_name(word: str) -> bool:
    """A nickname (老李, 小王, 阿强) or a word jieba tags as one person's name (李娜, 王小明) that is no word
    for what someone is (高中生, 白领) and not in the lexicon."""
    # what someone is comes first: 老师 and 小生 look like nicknames (老李, 小王) but are roles
    if word.endswith(_ROLE_ENDINGS) or occupation_of(word) or categories_of(normalize_value(word)):
        return False
    if re.fullmatch(rf"[老小阿][{HAN}]", word):
        return True
    tagged = list(posseg().cut(word))
    return len(tagged) == 1 and tagged[0].flag == "nr"


@book.rule(r"^我?(?:今年|已经|都|快)?" + NUMBER + r"(?:周)?岁")
def _age(m: re.Match[str], clause: str) -> list[Finding] | None:
    age = chinese_number(m["num"])
    return [fact("basic.age", str(age))] if age and 0 < age <= 120 else None


@book.rule(
    S + r"(?:住在|居住在|定居在|定居于|生活在|住于)" + OBJ,
    S + r"是?在(?P<obj>[^，,。在]{1,12}?)(?:工作生活|生活工作|生活|定居|安家)",
    r"^(?:我|我们)?家" + ZADV + r"(?:住)?在" + OBJ,
)
def _residence(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _clean_object(m["obj"])
    return [fact("basic.residence", canonical_place(obj))] if is_real_object(obj) else None


@book.rule(S + r"(?:住|定居)(?P<obj>[^，,。.!！?？在]{2,12})")
def _lives_bare(m: re.Match[str], clause: str) -> list[Finding] | None:
    place = canonical_place(_clean_object(m["obj"]))  # bare 住 reads a place only if it is a known one
    return [fact("basic.residence", place)] if is_place(place) else None


@book.rule(S + r"(?:搬家到|搬到|搬去|搬来|搬回)(?:了)?" + OBJ)
def _moved(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _clean_object(m["obj"])
    return [fact("basic.residence", canonical_place(obj), change=True)] if is_real_object(obj) else None


@book.rule(S + r"在(?P<obj>[^，,。在]{1,12}?)(?:工作|上班|实习)")
def _works_in(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _clean_object(m["obj"])
    if not is_real_object(obj):
        return None
    place = canonical_place(obj)
    if is_place(place):
        return [fact("basic.residence", place, confidence=0.75, inferred=True)]
    return [fact("basic.employer", normalize_value(obj))]


@book.rule(
    S + r"(?:来自|是从)" + OBJ,
    r"^我?的?(?:老家|家乡)" + ZADV + r"(?:是|在)" + OBJ,
    S + r"是?在(?P<obj>[^，,。在]{1,12}?)长大",  # 我是在哈尔滨长大的: the cleft 是…的 says the same
    S + r"(?:出生在|出生于|生在)" + OBJ,
    # 我是重庆人, 我是土生土长的重庆人, 我是地道的北京人
    rf"^我?是(?:(?:土生土长|地地道道|地道|正宗|纯正|纯粹)的?)?(?P<obj>[{HAN}]{{2,6}}?)人$",
)
def _hometown(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = re.sub(r"来的$", "", _clean_object(m["obj"]))
    place = canonical_place(obj)
    if not is_real_object(obj) or (m.group(0).endswith("人") and not is_place(place)):
        return None
    return [fact("basic.hometown", place)]


@book.rule(
    S + r"是(?:一名|一位|名)" + OBJ,
    r"^我?的?(?:工作|职业)" + ZADV + r"是" + OBJ,
    S + r"从事" + OBJ,
    # the trade one is in: 我干会计这行十年了, 我做设计这一行
    S + r"(?:干|做|搞)(?P<obj>[^，,。这]{1,8}?)(?:这一?行|这份工作)",
)
def _occupation_declared(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = re.sub(r"(?:工作|行业|这行)$", "", _clean_object(m["obj"]))
    if not is_real_object(obj):
        return None
    return [fact("basic.occupation", occupation_of(obj) or normalize_value(obj))]


@book.rule(
    S + r"(?:是|做|当)(?:一个|个)?" + OBJ,
    S + r"在(?P<where>[^，,。在]{1,10}?)(?:当|做|是)(?:一名|一个|个|名)?" + OBJ,  # 我在医院当药剂师
)
def _occupation_known(m: re.Match[str], clause: str) -> list[Finding] | None:
    occupation = occupation_of(re.sub(r"(?:工作|的)$", "", _clean_object(m["obj"])))
    if not occupation:
        return None
    found = [fact("basic.occupation", occupation)]
    employer = _named_workplace(m.groupdict().get("where"))
    return found + [fact("basic.employer", employer)] if employer else found


#: a kind of workplace, not its name: 我在医院当护士 names no employer, 我在阿里巴巴做开发 does
_WORKPLACE_KINDS = re.compile(
    r"(?:一家|一所|一个|家|本地|当地|附近的?)?(?:医院|诊所|学校|幼儿园|小学|中学|大学|公司|银行|工厂|厂里|店里?|"
    r"餐厅|饭店|超市|单位|机构|律所|事务所|政府|部队|家里|家|外企|国企|私企|网店|实验室|研究所)"
)


def _named_workplace(where: str | None) -> str | None:
    """The employer a workplace phrase names (阿里巴巴, 华为), or None for a kind of place (医院, 一家律所)
    or a city (在上海当老师: where the user lives, read by the residence rules)."""
    if not where:
        return None
    obj = _clean_object(where)
    if not is_real_object(obj) or _WORKPLACE_KINDS.fullmatch(obj) or is_place(canonical_place(obj)):
        return None
    return normalize_value(obj)


@book.rule(
    S + r"(?:在[^，,。]{1,10}?)?教(?:书|数学|语文|英语|物理|化学|生物|历史|地理|政治|音乐|美术|体育|计算机|"
    r"小学|初中|高中|中学|大学)",
    S + r"是教[^，,。]{1,6}的",
)
def _teaches(m: re.Match[str], clause: str) -> list[Finding]:
    """ "我在中学教数学": the user is a teacher."""
    return [fact("basic.occupation", "teacher")]


@book.rule(rf"^作为(?:一名|一个|一位|一枚)?(?P<obj>[{HAN}]{{1,8}}?)[，,]?(?=我|$)")
def _as_a(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "作为老师，我暑假有空": an occupation the user speaks as (known occupations only)."""
    occupation = occupation_of(m["obj"])
    return [fact("basic.occupation", occupation)] if occupation else None


@book.rule(S + r"(?:入职|加入|跳槽到|去了)了?" + OBJ)
def _joined(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = _clean_object(m["obj"])
    if not re.search(r"公司|集团|银行|医院|大学|学校|研究所|工作室", obj) and normalize_value(obj) == obj:
        return None  # "我去了北京" is a trip; only a known employer or an institution word is a job change
    return [fact("basic.employer", normalize_value(obj), change=True)]


# --- family, pets, people, languages --------------------------------------------------------------

ROLE = (
    r"(?P<role>老婆|妻子|太太|媳妇|老公|丈夫|爱人|女儿|闺女|儿子|孩子|小孩|妈妈|母亲|老妈|爸爸|父亲|老爸|"
    r"父母|爸妈|哥哥|弟弟|姐姐|妹妹|奶奶|外婆|姥姥|爷爷|外公|姥爷|男朋友|男友|女朋友|女友|未婚夫|未婚妻|"
    r"妈|爸)"  # the one-character forms last, so 妈妈 is not read as 妈
)


def _member(role: str, name: str | None) -> str:
    canonical = family_role(role) or role
    return f"{canonical}:{name.casefold()}" if name and not _NOT_NAMES.match(name) else canonical


@book.rule(
    S
    + r"有(?:一|两|三|四|二|\d)?(?:个|位)?"
    + r"(?P<role>女儿|儿子|孩子|小孩|哥哥|姐姐|弟弟|妹妹|男朋友|女朋友|老婆|老公)"
    + r"(?:[，,]?(?:叫|名叫)"
    + NAME
    + NAME_END
    + r")?",
    r"^我?(?:的)?" + ROLE + r"(?:叫|名叫|的名字(?:是|叫))" + NAME + NAME_END,
    r"^我?(?:的)?" + ROLE + r"(?:今年)?" + NUMBER + r"岁(?P<name>)",
    r"^" + NAME + r"是我(?:的)?" + ROLE + "$",
)
def _family(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("basic.family", _member(m["role"], m["name"]))]


@book.rule(
    S + r"(?P<married>结婚了|已婚|成家了)",
    S + r"是(?:一个|一位|个)?(?:(?:\d|[一两二三])个孩子的)?(?:妈妈|爸爸|母亲|父亲|宝妈|宝爸)",
)
def _married_or_parent(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("basic.family", "spouse" if m.groupdict().get("married") else "child")]


@book.rule(r"^我(?:的)?(?P<role>女儿|儿子|老婆|老公|妻子|丈夫|孩子|男朋友|女朋友|闺女|媳妇)")
def _family_mention(m: re.Match[str], clause: str) -> list[Finding]:
    """ "我女儿喜欢画画": the user has a daughter (a weaker signal than a declaration)."""
    role = _member(m["role"], None)
    return [fact("basic.family", role, confidence=0.7, inferred=True, importance=MENTION_IMPORTANCE)]


#: the pets of the lexicon, breeds too (柯基 is a dog); of one character only 猫 and 狗 (马 starts 马拉松)
PET = "(?P<pet>" + "|".join([a for a in han_spellings("pet") if len(a) > 1 or a in "猫狗"]) + ")"


@book.rule(
    r"^(?:我|我家|我们家)?(?:里)?"
    + ZADV
    + r"(?:养了|养着|养|有)(?:一|两|三|几|二|\d)?(?:只|条|个|头|匹)?"
    + PET
    + r"(?:[，,]?(?:叫|名叫)"
    + NAME
    + NAME_END
    + r")?",
    r"^(?:我|我家|我们家)?的?" + PET + r"(?:叫|名叫)" + NAME + NAME_END,
    r"^(?:我|我家|我们家)?(?:里)?"
    + ZADV
    + r"(?:养了|养着|养|有)(?:一|两|三|几|二|\d)?(?:只|条|个|头|匹)?(?:叫|名叫)"
    + NAME
    + r"的"
    + PET,
)
def _pet(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("basic.pet", _member(normalize_value(m["pet"]), m["name"]))]


SOCIAL = r"(?P<role>同事|朋友|闺蜜|哥们|老板|领导|上司|同学|室友|邻居|导师|师父|队友|老师|客户|合伙人|搭档)"


@book.rule(
    r"^" + NAME + r"是我(?:的)?(?:好|老|大学|高中|新|前)?" + SOCIAL,
    r"^我?(?:的)?(?:好|老)?" + SOCIAL + r"(?:叫|名叫)" + NAME + NAME_END,
    # "我同事老张在腾讯工作": a person named right after the relation word
    r"^我(?:的)?(?:好|老|大学|高中|新|前)?"
    + SOCIAL
    + rf"(?P<name>{PERSON})(?=在|是|也|很|跟|和|给|刚|最近|现在|目前|一直|还|今天|昨天|去年|说|$)",
)
def _social(m: re.Match[str], clause: str) -> list[Finding] | None:
    if _NOT_NAMES.match(m["name"]) or (m.group(0).startswith("我") and not is_person_name(m["name"])):
        return None
    return [fact("relation.social", m["name"].casefold(), confidence=0.85)]


@book.rule(S + r"会(?:说|讲)" + OBJ, r"^我?的?母语是" + OBJ)
def _language(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(_clean_object(m["obj"]), PHRASING, lambda v: fact("basic.language", v))
