"""The learned reader's figures on the corpus's held-out part (never trained or tuned on), beside today's
semantic reader (``actors.language.understanding``) on the same clauses; markdown for docs/quality.md::

    .venv/bin/python -m actors.language.reader.figures

Slot+value: a clause read with its labelled slot and a value that matches the labelled one, normalized
(``scoring.normalized``; the exact-match F1 is given beside). Precision is over the clauses read with a
slot, recall over those labelled with one. The look-alike rate: of the held-out clauses that are not the
user's own lasting fact (``corpus.not_own``: another act, or a flag among ``NOT_OWN`` — ``other`` aside
on a relation slot, "my uncle owns a restaurant" telling who the uncle is to the user), the share read as
the user's own slot; the strict rate counts ``other`` there too.
The semantic reader's values are canonical ("hangzhou" for 杭州): one counts as matching when it is the
lexicon's canonical form of the labelled value, and every reading it makes counts as the user's own (it
has no flags).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from actors.adapters.embedding import E5Embedder
from actors.language.lexicon import canonical_place, normalize_value
from actors.language.reader.corpus import LANGUAGES, NOT_OWN, SLOTS, load
from actors.language.reader.reader import LearnedReader, Reading
from actors.language.reader.scoring import counts, value_matches
from actors.language.reader.train import Example, examples_of
from actors.language.understanding.reader import SemanticReader

Read = tuple[str | None, str | None, bool]


def learned_readings(reader: LearnedReader, examples: Sequence[Example]) -> list[Reading]:
    return [reader.read(e.clause.text, e.states, e.spans) for e in examples]


def strict_look_alikes(examples: Sequence[Example], readings: Sequence[Reading]) -> tuple[int, int]:
    """Clauses with another act or any ``NOT_OWN`` flag, and how many are read as the user's own slot."""
    look_alikes = [
        r
        for e, r in zip(examples, readings, strict=True)
        if e.clause.act != "fact" or e.clause.flags & NOT_OWN
    ]
    return len(look_alikes), sum(r.own_slot for r in look_alikes)


def semantic_readings(reader: SemanticReader, examples: Sequence[Example]) -> list[Read]:
    found: list[Read] = []
    for e in examples:
        r = reader.read(e.clause.text, e.vector)
        if r is None:
            found.append((None, None, False))
            continue
        label = e.clause.value
        canonical = label is not None and r.value in {normalize_value(label), canonical_place(label)}
        # a canonical value counts as the labelled substring itself
        found.append((r.slot, label if canonical else r.value, True))
    return found


def _pct(x: float) -> str:
    return f"{x:.3f}"


def report(examples: Sequence[Example], readings: list[Reading], semantic: list[Read]) -> str:
    learned: list[Read] = [(r.slot, r.value, r.own_slot) for r in readings]
    lines = [
        "| language | clauses | with a slot | slot+value P | R | F1 (exact-match F1) | own facts P | R | F1 "
        "| act accuracy | look-alikes read as own | strict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    others = [
        "| language | semantic reader: slot+value P | R | F1 | own facts F1 | look-alikes read as own |",
        "|---|---|---|---|---|---|",
    ]
    for lang in LANGUAGES:
        mine = [n for n, e in enumerate(examples) if e.lang == lang]
        if not mine:
            continue
        labels = [examples[n].clause for n in mine]
        c = counts(labels, [learned[n] for n in mine])
        exact = counts(labels, [learned[n] for n in mine], exact=True)
        s = counts(labels, [semantic[n] for n in mine])
        act = sum(readings[n].act == examples[n].clause.act for n in mine) / len(mine)
        strict, strict_read = strict_look_alikes([examples[n] for n in mine], [readings[n] for n in mine])
        lines.append(
            f"| {lang} | {len(mine)} | {c.labelled} | {_pct(c.precision)} | {_pct(c.recall)} "
            f"| **{_pct(c.f1)}** ({_pct(exact.f1)}) | {_pct(c.own_precision)} | {_pct(c.own_recall)} "
            f"| {_pct(c.own_f1)} | {_pct(act)} "
            f"| {c.look_alikes_read_as_own}/{c.look_alikes} (**{c.look_alike_rate:.1%}**) "
            f"| {strict_read}/{strict} ({strict_read / max(strict, 1):.1%}) |"
        )
        others.append(
            f"| {lang} | {_pct(s.precision)} | {_pct(s.recall)} | {_pct(s.f1)} | {_pct(s.own_f1)} "
            f"| {s.look_alikes_read_as_own}/{s.look_alikes} ({s.look_alike_rate:.1%}) |"
        )
    lines += ["", *others]
    lines += ["", "| slot | language | labelled | read | right | P | R |", "|---|---|---|---|---|---|---|"]
    for slot in SLOTS:
        for lang in LANGUAGES:
            labelled = read = right = 0
            for e, (got, value, _) in zip(examples, learned, strict=True):
                if e.lang != lang:
                    continue
                labelled += e.clause.slot == slot
                read += got == slot
                right += got == slot == e.clause.slot and value_matches(value, e.clause.value, exact=False)
            if labelled or read:
                p = f"{right / read:.2f}" if read else "–"
                r = f"{right / labelled:.2f}" if labelled else "–"
                lines.append(f"| {slot} | {lang} | {labelled} | {read} | {right} | {p} | {r} |")
    return "\n".join(lines)


def main() -> None:
    started = time.perf_counter()
    _, invalid = load("heldout")
    embedder = E5Embedder()
    examples = examples_of(embedder, "heldout")
    readings = learned_readings(LearnedReader.load(embedder), examples)
    semantic = semantic_readings(SemanticReader.load(embedder), examples)
    print(f"held-out part: {len(examples)} clauses, {len(invalid)} invalid lines skipped\n")
    print(report(examples, readings, semantic))
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
