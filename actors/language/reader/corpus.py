"""The labelled corpus (``corpus/README.md``): its allowed labels, its lines read and checked.

A line that breaks the format is not trained on: ``load`` returns it apart with what is wrong, so the
build and the figures can count it and say so.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
LANGUAGES = ("en", "zh")
ACTS = ("fact", "request", "instruction", "greeting", "secret")
SLOTS = tuple(
    """basic.name basic.residence basic.hometown basic.age basic.birthday basic.gender basic.occupation
    basic.employer basic.education basic.allergy basic.health basic.diet_restriction basic.family basic.pet
    basic.language relation.social preference.food preference.drink preference.content preference.hobby
    preference.music preference.sport preference.travel preference.shopping preference.general
    state.mood state.situation task.goal task.plan""".split()
)
FLAGS = (
    "negated",
    "change",
    "retraction",
    "other",
    "hypothetical",
    "plan",
    "sarcasm",
    "time_bound",
    "quoted",
)
#: flags that make a clause something other than the user's own lasting fact (a look-alike)
NOT_OWN = frozenset({"negated", "other", "hypothetical", "plan", "sarcasm", "quoted"})
#: the slots a clause about someone else still gives the user: who that person or animal is to them
RELATION_SLOTS = frozenset({"basic.family", "relation.social", "basic.pet"})


def not_own(act: str, slot: str | None, flags: frozenset[str]) -> bool:
    """Whether a clause so labelled (or so read) is not the user's own lasting fact: another act, or a flag
    that says why — but for ``other`` on a relation slot ("my uncle owns a restaurant": the user has an
    uncle, ``corpus/README.md``)."""
    reasons = flags & NOT_OWN
    if slot in RELATION_SLOTS:
        reasons -= {"other"}
    return act != "fact" or bool(reasons)


POLARITIES = ("+", "-")


@dataclass(frozen=True, slots=True)
class Clause:
    text: str
    act: str
    slot: str | None
    value: str | None
    polarity: str
    flags: frozenset[str]

    @property
    def look_alike(self) -> bool:
        """Not the user's own lasting fact (``not_own``)."""
        return not_own(self.act, self.slot, self.flags)


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    lang: str
    text: str
    clauses: tuple[Clause, ...]


@dataclass(frozen=True, slots=True)
class Invalid:
    """A line not trained on, and why."""

    file: str
    line: int
    problems: tuple[str, ...]


def problems(record: object) -> list[str]:
    """What is wrong with one parsed line (empty when it follows ``corpus/README.md``)."""
    if not isinstance(record, dict):
        return ["not a JSON object"]
    found = []
    text = record.get("text")
    if not isinstance(record.get("id"), str) or not record.get("id"):
        found.append("no id")
    if record.get("lang") not in LANGUAGES:
        found.append(f"lang {record.get('lang')!r} not in {LANGUAGES}")
    if not isinstance(text, str) or not text.strip():
        return [*found, "no text"]
    clauses = record.get("clauses")
    if not isinstance(clauses, list) or not clauses:
        return [*found, "no clauses"]
    for n, clause in enumerate(clauses):
        found += [f"clause {n}: {problem}" for problem in _clause_problems(clause, text)]
    return found


def _clause_problems(clause: object, turn: str) -> list[str]:
    if not isinstance(clause, dict):
        return ["not an object"]
    found = []
    text, act, slot, value = clause.get("text"), clause.get("act"), clause.get("slot"), clause.get("value")
    if not isinstance(text, str) or not text.strip() or text not in turn:
        found.append(f"text {text!r} is not a substring of the turn")
    if act not in ACTS:
        found.append(f"act {act!r} not in {ACTS}")
    if slot is not None and (slot not in SLOTS or act != "fact"):
        found.append(f"slot {slot!r} is not a slot of a fact")
    if slot is not None and (not isinstance(value, str) or not value.strip()):
        found.append("a slot without a value")
    if value is not None and (not isinstance(value, str) or not isinstance(text, str) or value not in text):
        found.append(f"value {value!r} is not a substring of the clause")
    if value is not None and slot is None:
        found.append("a value without a slot")
    if clause.get("polarity", "+") not in POLARITIES:
        found.append(f"polarity {clause.get('polarity')!r} not in {POLARITIES}")
    flags = clause.get("flags", [])
    if not isinstance(flags, list) or any(flag not in FLAGS for flag in flags):
        found.append(f"flags {flags!r} not all in {FLAGS}")
    return found


def _turn(record: dict[str, object]) -> Turn:
    clauses = record["clauses"]
    assert isinstance(clauses, list)
    return Turn(
        str(record["id"]),
        str(record["lang"]),
        str(record["text"]),
        tuple(
            Clause(
                c["text"],
                c["act"],
                c.get("slot"),
                c.get("value") if c.get("slot") else None,
                c.get("polarity", "+"),
                frozenset(c.get("flags", [])),
            )
            for c in clauses
        ),
    )


def files(part: str, folder: Path = CORPUS) -> list[Path]:
    """``train`` or ``heldout``: every file of that part (``{part}_*.jsonl``: one per language and batch of
    writing), in name order."""
    return sorted(folder.glob(f"{part}_*.jsonl"))


def load(part: str, folder: Path = CORPUS) -> tuple[list[Turn], list[Invalid]]:
    """The valid turns of a part, in file order, and the lines left out with their problems."""
    turns: list[Turn] = []
    invalid: list[Invalid] = []
    seen: set[str] = set()
    for path in files(part, folder):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                invalid.append(Invalid(path.name, number, (f"not JSON: {error.msg}",)))
                continue
            found = problems(record)
            if not found and record["id"] in seen:
                found = [f"id {record['id']!r} repeated"]
            if found:
                invalid.append(Invalid(path.name, number, tuple(found)))
                continue
            seen.add(record["id"])
            turns.append(_turn(record))
    return turns, invalid


def clauses(turns: list[Turn]) -> list[tuple[Turn, Clause]]:
    return [(turn, clause) for turn in turns for clause in turn.clauses]


def corpus_hash(folder: Path = CORPUS) -> str:
    """The hash of every training file (what the shipped model was trained on)."""
    digest = hashlib.sha256()
    for path in files("train", folder):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
