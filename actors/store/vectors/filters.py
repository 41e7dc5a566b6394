"""Everything handed to the vector index is checked here, and every Milvus filter expression and partition
name is built here, and only here.

Milvus-lite rejects ``filter_params`` (templated expressions), so values have to be spliced into the
expression text. That is safe only because each value is re-validated right here against its narrow
alphabet (``schemas.ids``: no quotes, backslashes, spaces, control or non-ASCII characters) or is a member
of a closed enum, whatever the caller claims to have checked already. Anything else raises
``schemas.ids.InvalidIdentifier`` before a string is produced.
"""

from collections.abc import Iterable
from enum import StrEnum
from typing import TypeVar, cast

import numpy as np

from actors.store.vectors.index import VectorRow
from schemas.enums import Layer, State
from schemas.errors import InvalidInput
from schemas.ids import InvalidIdentifier, check_memory_id, check_tenant_id, check_user_id

#: Matches every row: Milvus ignores ``partition_names`` on an unfiltered ``count(*)``, so counts and scans
#: of a whole partition need an expression that is always true.
ALL_ROWS = 'memory_id != ""'


def partition_name(tenant_id: str) -> str:
    """The tenant's partition: ``t_<tenant_id>`` (tenant ids are already partition-name safe)."""
    return f"t_{check_tenant_id(tenant_id)}"


def _quoted(values: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{value}"' for value in values) + "]"


_Member = TypeVar("_Member", bound=StrEnum)


def _enum_members(field: str, enum: type[_Member], values: Iterable[object]) -> list[_Member]:
    """Validated members in declaration order, so equal sets always give byte-identical expressions."""
    wanted: set[_Member] = set()
    for value in values:
        try:
            wanted.add(enum(cast(str, value)))  # any other value raises ValueError
        except ValueError:
            raise InvalidIdentifier(field, value) from None
    return [member for member in enum if member in wanted]


def checked_layers(values: Iterable[object]) -> list[Layer]:
    return _enum_members("layer", Layer, values)


def checked_states(values: Iterable[object]) -> list[State]:
    return _enum_members("state", State, values)


def user_filter(
    user_id: str,
    layers: Iterable[Layer] | None = None,
    states: Iterable[State] | None = None,
) -> str:
    """``user_id == "u1"`` plus optional ``layer in [...]`` / ``state in [...]`` clauses.

    ``None`` means "any"; an empty collection means "none" and yields ``in []`` (matches nothing).
    """
    clauses = [f'user_id == "{check_user_id(user_id)}"']
    if layers is not None:
        clauses.append(f"layer in {_quoted(checked_layers(layers))}")
    if states is not None:
        clauses.append(f"state in {_quoted(checked_states(states))}")
    return " and ".join(clauses)


def tenant_filter(states: Iterable[State] | None = None) -> str:
    """Every row of the partition searched (``ALL_ROWS``), optionally only those in ``states``."""
    if states is None:
        return ALL_ROWS
    return f"{ALL_ROWS} and state in {_quoted(checked_states(states))}"


def ids_filter(memory_ids: Iterable[str]) -> str:
    """``memory_id in ["m_…", …]`` in the given order, duplicates dropped."""
    unique = dict.fromkeys(check_memory_id(memory_id) for memory_id in memory_ids)
    return f"memory_id in {_quoted(unique)}"


def checked_row(row: VectorRow, dim: int) -> VectorRow:
    """The row with validated ids, enum-typed layer/state and a finite float32 ``(dim,)`` vector."""
    return VectorRow(
        memory_id=check_memory_id(row.memory_id),
        user_id=check_user_id(row.user_id),
        layer=checked_layers([row.layer])[0],
        state=checked_states([row.state])[0],
        vector=checked_vector(row.vector, dim),
    )


def checked_vector(vector: np.ndarray, dim: int) -> np.ndarray:
    flat = np.asarray(vector, dtype=np.float32).reshape(-1)
    if flat.shape != (dim,) or not np.all(np.isfinite(flat)):
        raise InvalidInput(f"expected a finite vector of {dim} floats, got shape {np.shape(vector)}")
    return flat
