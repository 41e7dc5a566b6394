"""The English language pack: clause syntax, the rule books (facts, then tastes), the tokenizer's terms and
the stop words. English is the fallback pack: it reads any clause no other pack claims."""

from actors.language.en import facts, stopwords, syntax, tastes, tokens
from actors.language.en.markers import MARKERS
from actors.language.pack import LanguagePack, Words

WORDS = Words(
    terms=tokens.terms,
    unit=tokens.UNIT,
    stop_words=stopwords.STOP_WORDS,
    uninformative=stopwords.UNINFORMATIVE,
    min_unit_chars=3,
)

PACK = LanguagePack(
    code="en",
    reads=None,
    words=WORDS,
    phrasing=syntax.PHRASING,
    clause_split=syntax.CLAUSE_SPLIT,
    is_question=syntax.is_question,
    is_bare_value=syntax.is_bare_value,
    inherit_subject=syntax.inherit_subject,
    markers=MARKERS,
    books=(facts.book, tastes.book),
)
