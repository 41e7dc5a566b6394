"""How the LoCoMo harness maps recall hits to ranked dialog ids: each hit's first source at its rank, a
restated or merged memory's other sources after every hit's first."""

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from evaluation.locomo import ranked_dia_ids


def response(*sources):
    return SimpleNamespace(
        hits=[SimpleNamespace(memory=SimpleNamespace(source_dialog_ids=s)) for s in sources]
    )


def test_a_restated_memory_ranks_once():
    ranked = ranked_dia_ids(response(["D1:1", "D2:4", "D3:9"], ["D5:2"], ["D1:1"], ["D6:1", "D5:2"]))
    assert ranked == ["D1:1", "D5:2", "D6:1", "D2:4", "D3:9"]


ids = st.lists(st.sampled_from([f"D{s}:{t}" for s in range(1, 4) for t in range(1, 4)]), max_size=4)


@given(st.lists(ids, max_size=8))
def test_every_source_once_the_firsts_in_hit_order(sources):
    ranked = ranked_dia_ids(response(*sources))
    assert sorted(ranked) == sorted({d for s in sources for d in s})
    firsts = list(dict.fromkeys(s[0] for s in sources if s))
    assert ranked[: len(firsts)] == firsts
