"""The Chinese language pack: clause syntax, the rule books (facts, then tastes, then the English books for
the English words of a mixed clause), the tokenizer's terms (jieba) and the stop words. It reads every
clause with a Han ideograph in it."""

from actors.language import en
from actors.language.pack import LanguagePack, Words
from actors.language.text import HAN, has_han
from actors.language.zh import facts, stopwords, syntax, tastes, tokens
from actors.language.zh.markers import MARKERS

WORDS = Words(
    terms=tokens.terms,
    unit=f"[{HAN}]",
    stop_words=stopwords.STOP_WORDS,
    uninformative=stopwords.UNINFORMATIVE,
    casefold=False,
)

PACK = LanguagePack(
    code="zh",
    reads=has_han,
    words=WORDS,
    phrasing=syntax.PHRASING,
    clause_split=syntax.CLAUSE_SPLIT,
    is_question=syntax.is_question,
    is_bare_value=syntax.is_bare_value,
    inherit_subject=None,
    markers=MARKERS,
    books=(facts.book, tastes.book, *en.PACK.books),
)
