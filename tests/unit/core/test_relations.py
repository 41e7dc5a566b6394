"""The entity graph's readers skip texts that cannot match (a word every match holds is missing): over
generated texts they find exactly what the full patterns find."""

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core import relations

FRAGMENTS = [
    "Atlas",
    "the Atlas project",
    "Bob's",
    "Bob",
    "Ana Lopez",
    " deadline ",
    " birthday ",
    " due date ",
    " date",
    " start ",
    " launch",
    " is ",
    " was ",
    " will be ",
    " on ",
    "next Friday",
    "March 3",
    " works at ",
    " worked for ",
    " is working at ",
    "Google",
    "Acme Corp",
    "work",
    ". ",
    ", ",
    "!",
    "老张",
    "项目",
    "的",
    "截止日期",
    "生日",
    "地址",
    "是",
    "在",
    "下周五",
    "腾讯",
    "工作",
    "。",
    "deadlines",
    "Date",
]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)


@settings(max_examples=2000)
@given(texts)
def test_the_attribute_reader_finds_what_the_full_pattern_finds(text):
    expected = [m.groupdict() for m in relations._ATTRIBUTE.finditer(text)]
    assert [m.groupdict() for m in relations.attribute_sentences(text)] == expected


@settings(max_examples=2000)
@given(texts, st.lists(st.sampled_from(["老张", "小王"]), max_size=2))
def test_the_employer_reader_finds_what_the_full_pattern_finds(text, chinese_people):
    expected = [(m["person"], m["org"]) for m in relations._WORKS_AT.finditer(text)]
    found = relations._employers(text, chinese_people)
    assert found[: len(expected)] == expected
    assert all(person in chinese_people for person, _ in found[len(expected) :])
