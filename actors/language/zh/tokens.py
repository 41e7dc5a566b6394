"""Chinese words for search: each run of Han ideographs cut into words by jieba, stop words dropped."""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import cast

from actors.language.text import han_runs
from actors.language.zh.stopwords import STOP_WORDS


@cache
def jieba() -> ModuleType:
    """jieba, imported on first use (loading its dictionary takes a second) and quiet."""
    import jieba

    jieba.setLogLevel(60)
    return cast(ModuleType, jieba)


@cache
def posseg() -> ModuleType:
    """jieba's part-of-speech tagger (``posseg().cut(text)`` → words with their flags)."""
    import importlib

    jieba()  # quiet before the tagger loads the dictionary
    return importlib.import_module("jieba.posseg")


def terms(lowered: str) -> list[str]:
    found: list[str] = []
    for run in han_runs(lowered):
        found.extend(w for w in jieba().lcut(run) if w.strip() and w not in STOP_WORDS)
    return found
