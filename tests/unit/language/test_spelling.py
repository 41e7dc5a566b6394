"""How the lexicon finds a value's spelling in the user's words (``lexicon._spelled``): at a word's start,
case-blind, a Han character counting as a boundary. Held over generated words and texts to the rule as one
regular expression (the form it had before the look-behind was checked by hand, being slow to compile)."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.language.lexicon import _spelled
from actors.language.text import HAN

#: letters of several scripts and cases, digits, the underscore, Han, spaces and punctuation
ALPHABET = "aAbBéÉßẞıİ_09٣- .,'’我住在成都\u3400\uf900\u4dbf"


def by_the_rule(word: str, content: str) -> str | None:
    if re.search(f"[{HAN}]", word):
        return word if word in content else None
    found = re.search(rf"(?<![^\W{HAN}]){re.escape(word)}", content, re.IGNORECASE)
    return found.group(0) if found else None


@settings(max_examples=600)
@given(
    word=st.text(ALPHABET, min_size=1, max_size=5),
    before=st.text(ALPHABET, max_size=8),
    after=st.text(ALPHABET, max_size=8),
    spelled=st.sampled_from([str, str.upper, str.lower, str.title]),
)
def test_a_spelling_is_found_where_the_rule_finds_it(word, before, after, spelled):
    content = before + spelled(word) + after
    assert _spelled(word, content) == by_the_rule(word, content)
    assert _spelled(word, before + after) == by_the_rule(word, before + after)


def test_a_spelling_starts_a_word():
    assert _spelled("zürich", "我住在Zürich") == "Zürich"
    assert _spelled("ramen", "I love Ramen.") == "Ramen"
    assert _spelled("men", "I love ramen") is None
    assert _spelled("men", "ramen, men") == "men"
    assert _spelled("成都", "我住在成都") == "成都"
    # a match refused for its boundary may overlap one that starts a word
    assert _spelled("x-x", "ax-x-x") == "x-x"
