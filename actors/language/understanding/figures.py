"""The reader's figures on the labelled set: precision and recall per label, on the held-out part (never a
prototype, never used for the thresholds) and on the tuning part (each utterance read against the other
tuning prototypes, leave one out), and how often a found value is the labelled one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from actors.language.lexicon import normalize_value, taste_core
from actors.language.understanding.reader import (
    NONE,
    SemanticReader,
    Utterance,
    cross_validated,
    utterances,
)


@dataclass(frozen=True, slots=True)
class LabelFigures:
    label: str
    #: held-out utterances of this label, and how many the reader read as it
    support: int
    read_as: int
    correct: int
    value_correct: int

    @property
    def precision(self) -> float | None:
        return self.correct / self.read_as if self.read_as else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.support if self.support else None


def figures(vectors: np.ndarray, threshold: float, held_out: bool = True) -> list[LabelFigures]:
    """Per label, on the held-out part (``held_out``: the model trained on the whole tuning part) or on the
    tuning part (each fold read by a model trained on the other folds)."""
    everything = utterances()
    if held_out:
        reader = SemanticReader.tuned(vectors, threshold)
        readings = [(u, reader.read(u.text, vectors[n])) for n, u in enumerate(everything) if u.held_out]
    else:
        reader = SemanticReader.tuned(vectors, threshold)  # its labels' order; each fold's model reads
        folded = cross_validated(vectors)
        readings = [(everything[n], reader.read_probabilities(everything[n].text, p)) for n, p in folded]
    read = [(u, NONE, None) if r is None else (u, r.label, r.value) for u, r in readings]
    rows = []
    for label in sorted({u.label for u in everything}):
        mine = [(u, got, value) for u, got, value in read if u.label == label]
        correct = [(u, value) for u, got, value in mine if got == label]
        rows.append(
            LabelFigures(
                label=label,
                support=len(mine),
                read_as=sum(1 for _, got, _ in read if got == label),
                correct=len(correct),
                value_correct=sum(1 for u, value in correct if _same(u, value)),
            )
        )
    return rows


def _same(item: Utterance, value: str | None) -> bool:
    if item.value is None or value is None:
        return item.value is None and value is None
    wanted = normalize_value(item.value)
    # a taste named with or without its kind ("sci-fi", "sci-fi novel") is one taste, as for the gate
    tastes = item.label.startswith("preference")
    return value == wanted or (tastes and taste_core(value) == taste_core(wanted))


def table(rows: list[LabelFigures]) -> str:
    """A markdown table of the figures, slot-less look-alikes last, with the slotted totals."""
    lines = ["| label | n | read as | precision | recall | value right |", "|---|---|---|---|---|---|"]

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    slotted = [r for r in rows if r.label != NONE]
    for r in [*slotted, *[r for r in rows if r.label == NONE]]:
        value = f"{r.value_correct}/{r.correct}" if r.label != NONE else "—"
        figures_of = f"{pct(r.precision)} | {pct(r.recall)} | {value}"
        lines.append(f"| {r.label} | {r.support} | {r.read_as} | {figures_of} |")
    read_as = sum(r.read_as for r in slotted)
    correct = sum(r.correct for r in slotted)
    support = sum(r.support for r in slotted)
    values = sum(r.value_correct for r in slotted)
    lines.append(
        f"| all slotted | {support} | {read_as} | {pct(correct / read_as if read_as else None)} | "
        f"{pct(correct / support if support else None)} | {values}/{correct} |"
    )
    return "\n".join(lines)


def summary(rows: list[LabelFigures]) -> dict[str, object]:
    """The figures as JSON: per label and for every slotted label together."""
    slotted = [r for r in rows if r.label != NONE]
    read_as, correct = sum(r.read_as for r in slotted), sum(r.correct for r in slotted)
    support = sum(r.support for r in slotted)
    none = next(r for r in rows if r.label == NONE)
    return {
        "labelled_set": len(utterances()),
        "held_out": sum(r.support for r in rows),
        "precision": round(correct / read_as, 4) if read_as else None,
        "recall": round(correct / support, 4) if support else None,
        "look_alikes_kept_slot_less": none.recall,
        "per_label": {
            r.label: {
                "n": r.support,
                "precision": None if r.precision is None else round(r.precision, 4),
                "recall": None if r.recall is None else round(r.recall, 4),
            }
            for r in rows
        },
    }
