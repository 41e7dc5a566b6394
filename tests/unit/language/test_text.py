"""The one module that knows the scripts: which characters are Han ideographs."""

import re
from pathlib import Path

from actors.language.text import HAN, han_runs, has_han, is_han


def test_han_covers_the_unified_ideographs_extension_a_and_the_compatibility_block_only():
    assert has_han("我住在杭州") and has_han("I live in 杭州") and not has_han("I live in Hangzhou")
    assert has_han("\u3400") and has_han("\u9fff") and has_han("\uf900")  # ext. A, unified, compat.
    assert not has_han("䷀")  # a Yijing hexagram symbol sits between the blocks: not an ideograph
    assert not has_han("こんにちは") and not has_han("，。！")  # kana and full-width punctuation
    assert is_han("花生") and not is_han("花生 peanut") and not is_han("")
    assert han_runs("我对花生、虾过敏 and 芒果") == ["我对花生", "虾过敏", "芒果"]


def test_no_other_module_spells_a_han_range():
    """Every module asks ``actors.language.text``; a second range would drift from it."""
    root = Path(__file__).resolve().parents[3]
    spelled = re.compile(r"\\u(?:3400|4e00|9fff|4dbf|f900)", re.IGNORECASE)
    offenders = [
        str(path.relative_to(root))
        for folder in ("actors", "serve", "jobs", "schemas")
        for path in (root / folder).rglob("*.py")
        if path.name != "text.py" and spelled.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert HAN.startswith("\u3400")
