"""Families of phrasings found by the black-box probes (tests/bench/probe_wordings.py, tuned part), each
generated as a product of how it is said × what is said, with the look-alikes each family must leave
alone: a name given as "X speaking", home named as a place and the place named first, the Chinese cleft
是…的 (我是在哈尔滨长大的), the trade one is in (我干会计这行), a taste judged revolting, being a fan of
something (我是个铁杆的足球迷), lists asked for in Chinese (列成要点), a mood with its subject left out,
a reply length asked in the past tense, pets named by breed, accented capitals, and diets shown in the
user's words."""

from __future__ import annotations

from itertools import product

import pytest

from actors.core.context import shown_value
from actors.core.extraction import RuleExtractor, Turn
from schemas.enums import Polarity

EXTRACTOR = RuleExtractor()


def read(text: str) -> list[tuple[str | None, str | None, Polarity]]:
    return [(c.slot, c.value, c.polarity) for c in EXTRACTOR.extract(Turn(text, "s1", "d1"))]


def slots(text: str) -> set[str | None]:
    return {slot for slot, _, _ in read(text)}


NAMES = ["Rafael", "Łukasz", "Šimon Dvořák", "Ana Lucía", "Oluwaseun"]


@pytest.mark.parametrize(
    ("giving", "name"),
    list(product(["{} speaking.", "{} speaking, nice to meet you", "Hi, {} speaking!"], NAMES)),
)
def test_a_name_given_as_x_speaking_is_read_whole(giving: str, name: str) -> None:
    assert [v for s, v, _ in read(giving.format(name)) if s == "basic.name"] == [name.casefold()]


@pytest.mark.parametrize("text", ["Public speaking scares me", "English speaking countries are easier"])
def test_speaking_of_something_else_is_no_name(text: str) -> None:
    assert "basic.name" not in slots(text)


PLACES = ["Rotterdam", "Porto Alegre", "Łódź", "Valparaíso"]
HOME_FIRST = [
    "These days home is {}.",
    "Home is {} now",
    "Nowadays, home for me is {}.",
    "Currently home is {}",
]
PLACE_FIRST = ["{} is where I live now.", "{} is where I'm based", "{} is my home these days."]


@pytest.mark.parametrize(("frame", "place"), list(product(HOME_FIRST + PLACE_FIRST, PLACES)))
def test_home_named_as_a_place_is_the_residence(frame: str, place: str) -> None:
    assert ("basic.residence", place.casefold(), Polarity.POSITIVE) in read(frame.format(place))


@pytest.mark.parametrize(
    "text",
    ["Home is where the heart is.", "This is where I live", "Mom is home now", "Dinner is my home cooking"],
)
def test_home_look_alikes_name_no_residence(text: str) -> None:
    assert "basic.residence" not in slots(text)


ZH_PLACES = {"哈尔滨": "harbin", "成都": "chengdu", "昆明": "kunming", "宜宾": "宜宾"}


@pytest.mark.parametrize(
    ("frame", "place"), list(product(["我是在{}长大的。", "我是在{}长大的", "我其实是在{}长大的"], ZH_PLACES))
)
def test_the_chinese_cleft_says_where_one_grew_up(frame: str, place: str) -> None:
    assert ("basic.hometown", ZH_PLACES[place], Polarity.POSITIVE) in read(frame.format(place))


@pytest.mark.parametrize("place", list(ZH_PLACES))
def test_the_chinese_cleft_says_where_one_lives(place: str) -> None:
    assert ("basic.residence", ZH_PLACES[place], Polarity.POSITIVE) in read(f"我是在{place}生活的")


ZH_TRADES = {"会计": "accountant", "律师": "lawyer", "设计": "designer"}


@pytest.mark.parametrize(
    ("frame", "trade"), list(product(["我干{}这行十年了。", "我做{}这一行", "我搞{}这行好多年了"], ZH_TRADES))
)
def test_the_trade_one_is_in_is_the_occupation(frame: str, trade: str) -> None:
    found = [v for s, v, _ in read(frame.format(trade)) if s == "basic.occupation"]
    assert found and found[0] in (ZH_TRADES[trade], trade)


@pytest.mark.parametrize("text", ["我做这份工作很累", "我做饭这件事很拿手"])
def test_a_trade_look_alike_names_no_occupation(text: str) -> None:
    assert "basic.occupation" not in slots(text)


TASTES = ["Olives", "Cilantro", "Blue cheese", "Licorice"]
REVOLTING = ["{} are disgusting to me.", "{} is gross to me", "{} tastes like soap.", "{} smells awful to me"]


@pytest.mark.parametrize(("frame", "taste"), list(product(REVOLTING, TASTES)))
def test_a_taste_judged_revolting_is_a_dislike(frame: str, taste: str) -> None:
    found = [(s, p) for s, _, p in read(frame.format(taste)) if s and s.startswith("preference")]
    assert found and all(p is Polarity.NEGATIVE for _, p in found)


@pytest.mark.parametrize(
    "text", ["The traffic is awful", "My commute is horrible", "The weather is gross today"]
)
def test_a_judgement_of_no_taste_is_no_dislike(text: str) -> None:
    assert not any(s and s.startswith("preference") for s in slots(text))


ZH_FANS = {"足球": "soccer", "咖啡": "coffee", "摇滚": "rock", "日本动漫": "日本动漫"}


@pytest.mark.parametrize(
    ("frame", "taste"),
    list(product(["我是个铁杆的{}迷。", "我是{}迷", "我是资深{}爱好者", "我是一个忠实的{}粉"], ZH_FANS)),
)
def test_a_fan_of_something_likes_it(frame: str, taste: str) -> None:
    found = [(s, v) for s, v, p in read(frame.format(taste)) if s and s.startswith("preference")]
    assert found and ZH_FANS[taste] in {v for _, v in found}


@pytest.mark.parametrize("text", ["我是个路痴", "我是球迷", "我是他的粉丝团团长的朋友，不太懂"])
def test_a_fan_look_alike_is_no_taste(text: str) -> None:
    assert not any(s and s.startswith("preference") for s in slots(text))


@pytest.mark.parametrize(
    ("frame", "wanted"),
    list(
        product(
            ["回答的时候请{}", "以后都{}吧", "麻烦{}"],
            [("列成要点", "bullet points"), ("整理成表格", "table")],
        )
    ),
)
def test_a_list_asked_for_in_chinese_is_a_format(frame: str, wanted: tuple[str, str]) -> None:
    words, key = wanted
    assert ("style.format", key, Polarity.POSITIVE) in read(frame.format(words))


MOODS = {"stressed out": "stressed", "tired": "tired", "anxious": "anxious", "happy": "happy"}


@pytest.mark.parametrize(
    ("frame", "mood"), list(product(["Feeling {} today.", "Feeling pretty {}", "Been so {} lately"], MOODS))
)
def test_a_mood_with_its_subject_left_out_is_a_state(frame: str, mood: str) -> None:
    assert ("state.mood", MOODS[mood], Polarity.POSITIVE) in read(frame.format(mood))


@pytest.mark.parametrize(
    "text", ["I'd rather you kept replies under 100 words.", "Keeping your answers under 3 sentences is best"]
)
def test_a_reply_length_asked_in_other_tenses_is_read(text: str) -> None:
    assert "style.reply_length" in slots(text)


@pytest.mark.parametrize(
    ("breed", "animal"), [("柯基", "dog"), ("金毛", "dog"), ("布偶", "cat"), ("英短", "cat")]
)
@pytest.mark.parametrize("frame", ["我家有只{}", "我养了一只{}", "我家里养着一条{}"])
def test_a_pet_named_by_its_breed_is_its_animal_shown_as_the_breed(
    frame: str, breed: str, animal: str
) -> None:
    text = frame.format(breed).replace("一条布偶", "一只布偶").replace("一条英短", "一只英短")
    found = [v for s, v, _ in read(text) if s == "basic.pet"]
    assert found == [animal] and shown_value("basic.pet", animal, text) == breed


@pytest.mark.parametrize("text", ["我有个马拉松比赛", "我有只眼睛有点肿"])
def test_no_pet_out_of_a_one_character_word(text: str) -> None:
    assert "basic.pet" not in slots(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [("我乳糖不耐受，喝牛奶会拉肚子", "乳糖不耐受"), ("我不吃猪肉", "不吃猪肉"), ("我吃素好几年了", "吃素")],
)
def test_a_diet_shows_in_the_users_words(text: str, shown: str) -> None:
    (value,) = [v for s, v, _ in read(text) if s == "basic.diet_restriction"]
    assert value is not None and shown_value("basic.diet_restriction", value, text) == shown


NAMED_PLACES = ["Athens", "Wales", "Des Moines", "Los Angeles", "Marseilles"]
NAMED_EMPLOYERS = ["Siemens", "Goldman Sachs", "Wells Fargo", "Sears"]


@pytest.mark.parametrize(
    ("frame", "slot", "name"),
    [(f, "basic.residence", n) for f, n in product(["I live in {}.", "These days home is {}"], NAMED_PLACES)]
    + [
        (f, "basic.hometown", n)
        for f, n in product(["I grew up in {}", "I'm originally from {}"], NAMED_PLACES)
    ]
    + [(f, "basic.employer", n) for f, n in product(["I work at {}.", "I work for {}"], NAMED_EMPLOYERS)],
)
def test_the_name_of_a_place_or_a_company_is_no_plural_and_shows_as_written(
    frame: str, slot: str, name: str
) -> None:
    text = frame.format(name)
    assert (slot, name.casefold(), Polarity.POSITIVE) in read(text)
    assert shown_value(slot, name.casefold(), text) == name
