"""The filter builder: exact expressions for safe identifiers, a refusal for everything else."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.store.vectors.filters import (
    ALL_ROWS,
    checked_row,
    checked_vector,
    ids_filter,
    partition_name,
    user_filter,
)
from actors.store.vectors.index import VectorRow
from schemas.enums import Layer, State
from schemas.errors import InvalidInput
from schemas.ids import InvalidIdentifier

MEMORY_ID = "m_" + "0123456789abcdef" * 2

HOSTILE = [
    "",
    'a" or tenant_id != "x',
    'u1"',
    "u'1",
    "u1\\",
    "u 1",
    "u1\n",
    "\nu1",
    "u1\t",
    "u1\x00",
    "\uff551",  # fullwidth u
    "u\u0455er",  # Cyrillic dze looks like an s
    "u1\u200b",  # zero-width space
    "u" * 129,
    "-u1",
    "u1 or 1==1",
    "u1)",
    "[u1]",
]


@pytest.mark.parametrize("bad", HOSTILE)
def test_user_filter_rejects_unsafe_user_ids(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        user_filter(bad)


@pytest.mark.parametrize("bad", HOSTILE + ["1acme", "acme-corp", "a" * 49, "acme.corp", "t@x"])
def test_partition_name_rejects_unsafe_tenant_ids(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        partition_name(bad)


@pytest.mark.parametrize(
    "bad", HOSTILE + ["m_" + "0" * 31, "m_" + "G" * 32, MEMORY_ID.upper(), MEMORY_ID + '"']
)
def test_ids_filter_rejects_unsafe_memory_ids(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        ids_filter([MEMORY_ID, bad])


@pytest.mark.parametrize("bad", [None, 3, b"u1", ["u1"]])
def test_non_strings_are_rejected(bad: object) -> None:
    with pytest.raises(InvalidIdentifier):
        user_filter(bad)  # type: ignore[arg-type]


def test_user_filter_exact_strings() -> None:
    assert user_filter("u1") == 'user_id == "u1"'
    assert user_filter("a.b:c@d-e_f") == 'user_id == "a.b:c@d-e_f"'
    assert (
        user_filter("u1", layers=frozenset({Layer.LONGTERM, Layer.WORKING}))
        == 'user_id == "u1" and layer in ["working", "longterm"]'
    )
    assert (
        user_filter("u1", layers=["core"], states={State.FROZEN, State.CONFIRMED})
        == 'user_id == "u1" and layer in ["core"] and state in ["confirmed", "frozen"]'
    )
    assert user_filter("u1", layers=[]) == 'user_id == "u1" and layer in []'


def test_layer_order_does_not_depend_on_the_callers_order() -> None:
    forward = user_filter("u1", layers=[Layer.WORKING, Layer.ARCHIVE, Layer.CORE])
    backward = user_filter("u1", layers=[Layer.CORE, Layer.ARCHIVE, Layer.WORKING])
    assert forward == backward == 'user_id == "u1" and layer in ["working", "core", "archive"]'


@pytest.mark.parametrize("bad", ['working"]', "Working", "", "frozen"])
def test_unknown_layers_are_rejected(bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        user_filter("u1", layers=[Layer.WORKING, bad])


def test_a_bare_string_is_not_taken_for_a_set_of_layers() -> None:
    with pytest.raises(InvalidIdentifier):
        user_filter("u1", layers="working")  # type: ignore[arg-type]


def test_ids_filter_exact_string_keeps_order_and_drops_duplicates() -> None:
    other = "m_" + "f" * 32
    assert ids_filter([other, MEMORY_ID, other]) == f'memory_id in ["{other}", "{MEMORY_ID}"]'


def test_partition_name_and_match_all() -> None:
    assert partition_name("acme_2") == "t_acme_2"
    assert ALL_ROWS == 'memory_id != ""'


@given(st.text(max_size=60))
def test_any_accepted_user_id_stays_inside_its_quotes(user_id: str) -> None:
    try:
        expr = user_filter(user_id)
    except InvalidIdentifier:
        return
    assert expr == f'user_id == "{user_id}"'
    assert not set(user_id) & set("\"\\' \n\r\t")


def test_checked_row_normalises_and_validates() -> None:
    row = checked_row(VectorRow(MEMORY_ID, "u1", "working", "pending", [1.0, 0.0, 0.0]), dim=3)  # type: ignore[arg-type]
    assert row.layer is Layer.WORKING and row.state is State.PENDING
    assert row.vector.dtype == np.float32 and row.vector.shape == (3,)
    with pytest.raises(InvalidIdentifier):
        checked_row(VectorRow(MEMORY_ID, 'u1"', Layer.WORKING, State.PENDING, np.ones(3)), dim=3)
    with pytest.raises(InvalidIdentifier):
        checked_row(VectorRow(MEMORY_ID, "u1", "attic", State.PENDING, np.ones(3)), dim=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad", [np.ones(4), np.ones((2, 3)), np.array([1.0, np.nan, 0.0]), np.array([np.inf, 0, 0])]
)
def test_checked_vector_rejects_wrong_shapes_and_non_finite(bad: np.ndarray) -> None:
    with pytest.raises(InvalidInput):
        checked_vector(bad, dim=3)
