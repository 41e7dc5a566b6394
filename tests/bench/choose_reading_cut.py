"""How the learned reader's readings are kept in the write path (``actors.app.learned_reading``), measured on
the corpus's **training** part only (never the held-out part, nor a probe): for each doubt cut, the
user's own statements read right (slot and normalized value, and a denial or retraction read negative)
and the look-alikes (someone else's fact, a hypothetical, a plan, a joke, a quote, another act) kept as
the user's, per language. ``DOUBT_CUT`` is the cut with the most right readings whose look-alike rate
stays within 2 %.

    .venv/bin/python tests/bench/choose_reading_cut.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.learned_reading import NOT_THE_USERS, PLACES, RELATION_SLOTS, LearnedClauseReader  # noqa: E402
from actors.language.lexicon import canonical_place, normalize_value  # noqa: E402
from actors.language.reader.corpus import load  # noqa: E402
from actors.language.reader.reader import LearnedReader  # noqa: E402

CUTS = (-3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0)


def main() -> None:
    embedder = E5Embedder(num_threads=1)
    learned = LearnedReader.load(embedder)
    turns, _ = load("train")
    read: list[tuple[str, object, object]] = []  # (lang, labelled clause, learned reading)
    batch = 32
    for at in range(0, len(turns), batch):
        chunk = turns[at : at + batch]
        _, states, spans = embedder.embed_passages_with_states([t.text for t in chunk])
        for turn, s, sp in zip(chunk, states, spans, strict=True):
            start = 0
            for clause in turn.clauses:
                found = turn.text.find(clause.text, start)
                if found < 0:
                    continue
                start = found + len(clause.text)
                read.append((turn.lang, clause, learned.read(turn.text, s, sp, (found, start))))
    print(f"{len(read)} training clauses")
    for cut in CUTS:
        reader = LearnedClauseReader(learned, doubt_cut=cut)
        right, own, kept_alike, alike = Counter(), Counter(), Counter(), Counter()
        for lang, clause, reading in read:
            kept = reader.kept(reading)
            other_ok = clause.slot in RELATION_SLOTS
            look_alike = clause.act != "fact" or bool(
                clause.flags & (NOT_THE_USERS - ({"other"} if other_ok else set()))
            )
            if look_alike:
                alike[lang] += 1
                kept_alike[lang] += kept is not None
                continue
            if clause.slot is None:
                continue
            own[lang] += 1
            norm = canonical_place if clause.slot in PLACES else normalize_value
            negative = clause.polarity == "-" or bool(clause.flags & {"negated", "retraction"})
            right[lang] += (
                kept is not None
                and kept.slot == clause.slot
                and kept.value == norm(clause.value or "")
                and kept.negative == negative
            )
        figures = "  ".join(
            f"{lang}: right {right[lang]}/{own[lang]} ({right[lang] / max(own[lang], 1):.1%}), "
            f"look-alikes kept {kept_alike[lang]}/{alike[lang]} "
            f"({kept_alike[lang] / max(alike[lang], 1):.1%})"
            for lang in ("en", "zh")
        )
        print(f"cut {cut:+.1f}  {figures}")


if __name__ == "__main__":
    main()
