"""Language packs: one per language, chosen per sentence and clause by script, and named in the settings."""

import pytest

from actors.core.extraction import RuleExtractor, Turn, make_extractor
from actors.language.pack import choose
from actors.language.packs import PACKS, packs
from actors.language.segments import segment
from schemas.settings import HermesSettings


def test_the_pack_is_chosen_by_script_with_english_as_the_fallback():
    every = packs()
    assert [p.code for p in every] == ["en", "zh"]
    assert choose("I live in Hangzhou", every).code == "en"
    assert choose("我住在杭州", every).code == "zh"
    assert choose("I live in 杭州", every).code == "zh"  # mixed: zh also tries the en books
    assert choose("我住在杭州", packs(["en"])).code == "en"


def test_each_sentence_and_clause_carries_its_own_pack():
    sentences = segment("I love jazz and I hate 香菜。其实我住在苏州，喜欢爬山", packs())
    assert [s.pack.code for s in sentences] == ["zh", "zh"]
    english = segment("I love jazz, my sister lives in Lisbon", packs())[0]
    assert english.pack.code == "en" and [c.pack.code for c in english.clauses] == ["en", "en"]


def test_the_registry_refuses_unknown_packs_and_a_set_without_the_fallback():
    with pytest.raises(ValueError, match="unknown language pack"):
        packs(["en", "fr"])
    with pytest.raises(ValueError, match="fallback"):
        packs(["zh"])
    assert set(PACKS) == {"en", "zh"}


def test_the_extractor_is_built_from_the_settings(monkeypatch):
    settings = HermesSettings()
    assert (settings.extractor, settings.extractor_languages) == ("rules", "en,zh")
    extractor = make_extractor(settings.extractor, settings.extractor_languages)
    assert isinstance(extractor, RuleExtractor) and [p.code for p in extractor.packs] == ["en", "zh"]
    monkeypatch.setenv("HERMES_EXTRACTOR_LANGUAGES", "en")
    english_only = make_extractor("rules", HermesSettings().extractor_languages)
    turn = Turn("我对花生过敏", "s1", "d1")
    assert [c.value for c in extractor.extract(turn)] == ["peanut"]
    assert english_only.extract(turn) == []  # no Chinese rule book, and no English rule reads it
    with pytest.raises(ValueError, match="unknown extractor"):
        make_extractor("llm")
