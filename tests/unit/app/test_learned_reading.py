"""``HERMES_READER=learned``: the learned reader behind the semantic reader's interface applies only a slot
read as the user's own, with the value canonical as the rules' are (planted states, no model)."""

from __future__ import annotations

import numpy as np

from actors.app.learned_reading import LearnedClauseReader
from actors.language.reader.corpus import SLOTS
from actors.language.reader.train import Example, train
from tests.unit.language.test_learned_reader import _planted


class _Planted:
    """An embedder that hands out the planted states of the examples it knows."""

    def __init__(self, examples: list[Example]):
        self.known = {e.clause.text: e for e in examples}

    def embed_passages_with_states(self, texts):
        found = [self.known[t] for t in texts]
        return np.stack([e.vector for e in found]), [e.states for e in found], [e.spans for e in found]


def test_only_a_slot_read_as_the_users_own_is_applied_with_its_value():
    rng = np.random.default_rng(11)
    reader = train(_planted(rng, 300), penalty=1e-2, threshold=0.5, doubt_cut=0.0)
    fresh = _planted(rng, 60)
    clause_reader = LearnedClauseReader(reader, _Planted(fresh))
    applied = 0
    for e in fresh:
        reading = clause_reader.read(e.clause.text, e.vector)
        own = reader.read(e.clause.text, e.states, e.spans)
        assert (reading is not None) == own.own_slot
        if reading is not None:
            assert reading.slot == own.slot in SLOTS and reading.value == own.value
            applied += 1
    assert applied >= 20
