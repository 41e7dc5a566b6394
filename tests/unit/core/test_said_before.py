"""A memory's context: the turns said before it in its session, kept bounded (``actors.core.said_before``)."""

from hypothesis import given
from hypothesis import strategies as st

from actors.core.said_before import CONTEXT_TURN_CHARS, SessionTurns, context_of

turn_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=700)
writes = st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3", "s4", "s5", "s6"]), turn_text), max_size=60)


def test_the_context_is_the_last_turns_before_one_a_line():
    assert context_of(["a", "b", "c"], 2) == "b\nc"
    assert context_of(["a", "", "c"], 2) == "c"  # a turn that gives none still takes its place
    assert context_of([], 2) is None and context_of(["a"], 0) is None


@given(writes, st.integers(1, 4), st.integers(1, 4))
def test_the_kept_turns_are_each_sessions_last_within_both_bounds(said, turns, sessions):
    kept = SessionTurns(turns, sessions)
    model: dict[str, list[str]] = {}  # a session dropped for others starts again when it comes back
    for session_id, text in said:
        kept.add(session_id, text)
        model[session_id] = [*model.pop(session_id, []), text[:CONTEXT_TURN_CHARS]][-turns:]
        model = dict(list(model.items())[-sessions:])
    for session_id in {s for s, _ in said}:
        assert kept.before(session_id) == model.get(session_id, [])
    assert kept.nbytes <= sessions * (600 + turns * CONTEXT_TURN_CHARS)


@given(writes)
def test_a_copy_is_independent(said):
    kept = SessionTurns()
    for session_id, text in said:
        kept.add(session_id, text)
    before = {s: kept.before(s) for s, _ in said}
    twin = kept.copy()
    twin.add("s1", "more")
    twin.clear()
    assert {s: kept.before(s) for s, _ in said} == before


def test_forgetting_cuts_the_words_out_of_the_kept_turns():
    kept = SessionTurns(turns=3)
    for text in [
        "Ana: my locker code word is tangerine",
        "Bo: nice, and yours?",
        "Ana: tangerine again, I said",
    ]:
        kept.add("s1", text)
    kept.forget(["Ana: my locker code word is tangerine"])
    assert all("tangerine" not in turn for turn in kept.before("s1"))
    assert kept.before("s1")[1] == "Bo: nice, and yours?"
