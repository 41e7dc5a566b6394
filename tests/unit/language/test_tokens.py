"""The tokenizer: the search terms (BM25) and the write score's content units, from every pack's words."""

import json
from pathlib import Path

from actors.language.tokens import content_units, tokenize, word_count


def test_search_terms_are_lightly_stemmed_english_and_jieba_chinese_without_stop_words():
    assert tokenize("Melanie's paintings were painted") == ("melani", "painting", "paint")  # one suffix off
    assert tokenize("The cat and the dog") == ("cat", "dog")
    assert tokenize("I’m fine, it’s 3pm") == ("fin", "3pm")  # curly apostrophes read as straight ones
    terms = tokenize("我对花生过敏 I love hiking")
    assert terms[:2] == ("lov", "hik")  # English terms first, then each Chinese run's words
    assert "花生" in terms and "过敏" in terms and "我" not in terms


def test_content_units_skip_chatter_and_function_characters_and_keep_numbers():
    assert content_units("Hi! I really like jazz, thanks") == ["jazz"]
    assert content_units("my flight is at 12:30 on 3.5") == ["flight", "12:30", "3.5"]
    assert content_units("我对花生过敏") == ["花", "生", "敏"]  # 我, 对, 过 are function characters
    assert content_units("my password is [REDACTED:password]") == ["password"]
    assert "doing" in content_units("what I'm doing")  # a search stop word, yet content in a write


def test_two_chinese_characters_weigh_one_word():
    assert word_count(content_units("peanut allergy 花生过敏")) == 2 + 3 / 2


def test_tokens_stay_those_of_the_tokenizer_recall_was_tuned_with():
    """Recall quality rests on the terms: these are the old tokenizer's terms and content units, recorded
    before the language packs took the tokenizer over (the sentences are the test suite's own)."""
    golden = json.loads((Path(__file__).with_name("tokens_golden.json")).read_text(encoding="utf-8"))
    assert len(golden) > 300
    for entry in golden:
        assert list(tokenize(entry["text"])) == entry["tokens"], entry["text"]
        assert content_units(entry["text"]) == entry["units"], entry["text"]
