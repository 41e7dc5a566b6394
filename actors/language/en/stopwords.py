"""English stop words, in two tiers (docs/design.md#language-packs).

* ``STOP_WORDS`` — function words too common to find anything by: the tokenizer drops them from the terms
  the keyword route (BM25) indexes and searches.
* ``UNINFORMATIVE`` — what the write score does not count as a content word: the function words, less the
  two a statement about oneself still says something with ("doing", "yours"), and the chatter of
  conversation (greetings, fillers, intensifiers, vague nouns).
"""

STOP_WORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being am i me my mine "
    "you your yours he she it its we our they them their this that these those do does did doing have has "
    "had "
    "what which who whom whose when where why how not no so too very can could should would will just about "
    "into over than then there here s t don't i'm it's".split()
)

CHATTER = frozenset(
    """
    him his her us yes really also may might must shall gonna wanna got get gets getting ok okay oh ah um uh
    like well yeah yep hey hi hello thanks thank please sure cool nice great lol haha im i've i'd i'll
    that's didn't doesn't isn't wasn't aren't can't won't all any some much many more most
    out up down again still even only ever now today one thing things stuff lot bit kind sort
    agree totally absolutely definitely
    """.split()
)

UNINFORMATIVE = (STOP_WORDS - {"doing", "yours"}) | CHATTER
