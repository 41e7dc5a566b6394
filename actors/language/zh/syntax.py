"""Chinese below the sentence: how clauses are cut, what a question looks like, where an object phrase ends
and how a listed object splits into items."""

from __future__ import annotations

import re

from actors.language.pack import Phrasing

CLAUSE_SPLIT = re.compile(r"\s*[，,]\s*")

#: a Chinese question may put its question word anywhere ("周末去哪玩比较好"): those that ask, not tell
_QUESTION = re.compile(
    r"(?:吗|么|嘛|呢)$|^(?:请问|为什么|怎么|什么|哪|谁|能不能|可不可以|是不是|有没有)|"
    r"哪里|哪儿|哪个|哪些|哪家|哪种|去哪|在哪|怎么办|怎么样|如何|多少钱|几点|好不好|行不行|"
    r"要不要|能不能|可不可以|是不是|有没有|该(?:学|选|买|去|吃|做|怎么)什么|什么好|比较好$"
)


def is_question(body: str) -> bool:
    """A sentence (terminal punctuation already stripped) that asks something."""
    return bool(_QUESTION.search(body))


def is_bare_value(probe: str) -> bool:
    return len(probe) <= 8


OBJECT_END = re.compile(r"[，,。.!！?？;；:：(（]|因为|所以|但是|不过|而且|然后|的时候|之后|以后")
ITEM_SPLIT = re.compile(r"[、/]|以及|还有|或者|和|跟|与|及|或")

PHRASING = Phrasing(object_end=OBJECT_END, item_split=ITEM_SPLIT)
