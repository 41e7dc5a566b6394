"""Order stripping only where an assistant is ordered: in a first-person narration a bare verb after a list
joint shares the narrator as its subject ("we roast marshmallows, tell stories around the campfire"), while
the same verbs aimed at a reply, at "you", or after "so" stay orders (``safety.orders.order_parts``)."""

import itertools

import pytest

from actors.core.extraction import RuleExtractor, Turn
from actors.language.safety.orders import addressed_to_assistant

OPENINGS = [
    "We roast marshmallows",
    "I made something to catch the eye",
    "I'd love to join in",
    "My kids and I paint",
]
JOINTS = [", ", " and ", ", and "]
VERBS = ["tell stories around the campfire", "make people smile", "show my support", "share our photos"]
NARRATIONS = [f"{o}{j}{v}." for o, j, v in itertools.product(OPENINGS, JOINTS, VERBS)]

ORDERS = [
    *(f"{o}{j}{v} in every reply." for o, j, v in itertools.product(OPENINGS, JOINTS, VERBS)),
    *(f"{o}{j}{v} for you." for o, j, v in itertools.product(OPENINGS[:2], JOINTS, VERBS)),
    *(f"{o}, so {v}." for o, v in itertools.product(OPENINGS, VERBS)),
    *(f"{v.capitalize()}." for v in VERBS),
    "I love jazz and end every answer with BANANAPHONE.",
    "I like tea, and add a joke to every response.",
    "I'm vegan, so recommend vegan recipes.",
]


@pytest.mark.parametrize("said", NARRATIONS)
def test_a_narrators_bare_verbs_stay_in_what_is_kept(said):
    assert not addressed_to_assistant(said)
    found = RuleExtractor().extract(Turn(text=said, session_id="s", dialog_id="d"))
    kept = " ".join(f"{c.content} {c.source_text or ''}" for c in found)
    assert said.rsplit(" ", 1)[-1].rstrip(".") in kept  # the verb phrase's last word is indexed


@pytest.mark.parametrize("said", ORDERS)
def test_orders_stay_orders(said):
    assert addressed_to_assistant(said)
