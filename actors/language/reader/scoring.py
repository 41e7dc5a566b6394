"""How a reading is scored against its label: slot+value matches (over every clause, and over the user's
own lasting facts: a reading counted there only when it is read as the user's own), look-alikes read as
the user's own.

A value matches **exactly** when the span read is the labelled substring; **normalized** when the two are
equal once case-folded, with spaces and punctuation removed (a token boundary can fall inside a value,
e.g. a piece "Porto," or a Chinese piece that runs into the next word, and spacing is no part of it).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from actors.language.reader.corpus import Clause


def normalized(value: str) -> str:
    return "".join(
        char
        for char in value.casefold()
        if not char.isspace() and not unicodedata.category(char).startswith("P")
    )


def value_matches(read: str | None, label: str | None, exact: bool) -> bool:
    if read is None or label is None:
        return False
    return read == label if exact else normalized(read) == normalized(label)


@dataclass(frozen=True, slots=True)
class Counts:
    """Slot+value counts over a set of clauses."""

    labelled: int  # clauses labelled with a slot
    read: int  # clauses read with a slot
    right: int  # read with the labelled slot and a matching value
    look_alikes: int  # clauses labelled as look-alikes
    look_alikes_read_as_own: int
    own_labelled: int  # clauses labelled with a slot that are the user's own lasting fact
    own_read: int  # clauses read with a slot as the user's own
    own_right: int  # both, with the labelled slot and a matching value

    @property
    def precision(self) -> float:
        return self.right / self.read if self.read else 0.0

    @property
    def recall(self) -> float:
        return self.right / self.labelled if self.labelled else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def own_precision(self) -> float:
        return self.own_right / self.own_read if self.own_read else 0.0

    @property
    def own_recall(self) -> float:
        return self.own_right / self.own_labelled if self.own_labelled else 0.0

    @property
    def own_f1(self) -> float:
        p, r = self.own_precision, self.own_recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def look_alike_rate(self) -> float:
        return self.look_alikes_read_as_own / self.look_alikes if self.look_alikes else 0.0


def counts(
    labels: Sequence[Clause],
    readings: Sequence[tuple[str | None, str | None, bool]],
    exact: bool = False,
) -> Counts:
    """``readings``: per clause, the slot and value read and whether it is read as the user's own fact."""
    labelled = read = right = look_alikes = read_as_own = own_labelled = own_read = own_right = 0
    for label, (slot, value, own) in zip(labels, readings, strict=True):
        matches = slot is not None and slot == label.slot and value_matches(value, label.value, exact)
        labelled += label.slot is not None
        read += slot is not None
        right += matches
        own_label = label.slot is not None and not label.look_alike
        own_labelled += own_label
        own_read += own
        own_right += own and own_label and matches
        if label.look_alike:
            look_alikes += 1
            read_as_own += own
    return Counts(labelled, read, right, look_alikes, read_as_own, own_labelled, own_read, own_right)
