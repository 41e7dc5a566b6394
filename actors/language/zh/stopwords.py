"""Chinese stop words, in two tiers (docs/design.md#language-packs).

* ``STOP_WORDS`` — words the tokenizer drops from the keyword route's terms (jieba words).
* ``UNINFORMATIVE`` — characters the write score does not count (it counts Chinese by the character): the
  stop words and the other function characters — negation, aspect, modal and passive markers.
"""

STOP_WORDS = frozenset("的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 在 和 也 就 都 很 有 这 那 个".split())

UNINFORMATIVE = STOP_WORDS | frozenset("还呀哦嘛着过一不没要会说对把被给让")
