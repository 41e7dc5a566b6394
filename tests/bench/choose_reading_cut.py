"""How the learned reader's readings are kept in the write path (``actors.app.learned_reading``), measured on
the corpus's **training** part only (never the held-out part, nor a probe): per language, for each doubt
cut and least slot probability, the user's own statements read right (slot and normalized value, a
denial or retraction read negative), the precision over every slot kept for a fact (an event given a slot
is wrong), and the look-alikes (someone else's fact, a hypothetical, a plan, a joke, a quote, another act)
kept as the user's. ``DOUBT_CUT`` and ``MIN_SCORE`` are the pair with the most right readings whose
look-alike rate stays within 2 % in both languages. Beside it, the semantic reader's tuned utterances
(``actors/language/understanding``, never its held-out lines) that no rule gives a slot, read as the write
path reads them (``LearnedClauseReader.read_clause``): the slot labelled read, and look-alikes given one.

    .venv/bin/python tests/bench/choose_reading_cut.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.learned_reading import NOT_THE_USERS, PLACES, LearnedClauseReader  # noqa: E402
from actors.core.extraction import RuleExtractor, Turn  # noqa: E402
from actors.language.lexicon import canonical_place, normalize_value  # noqa: E402
from actors.language.reader.corpus import load  # noqa: E402
from actors.language.reader.reader import LearnedReader  # noqa: E402
from actors.language.understanding.reader import utterances  # noqa: E402

CUTS = (-2.5, -1.5, -1.0, -0.5, 0.0)
SCORES = (0.55, 0.65, 0.75)


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
    for cut, score in [(c, s) for s in SCORES for c in CUTS]:
        reader = LearnedClauseReader(learned, doubt_cut=cut, min_score=score)
        right, own, kept_alike, alike, wrong = Counter(), Counter(), Counter(), Counter(), Counter()
        for lang, clause, reading in read:
            kept = reader.kept(reading)
            if clause.act != "fact" or clause.flags & NOT_THE_USERS:
                alike[lang] += 1
                kept_alike[lang] += kept is not None
                continue
            if clause.slot is None:  # an event or a remark: a slot read there is a misreading
                wrong[lang] += kept is not None
                continue
            own[lang] += 1
            norm = canonical_place if clause.slot in PLACES else normalize_value
            negative = clause.polarity == "-" or bool(clause.flags & {"negated", "retraction"})
            good = (
                kept is not None
                and kept.slot == clause.slot
                and kept.value == norm(clause.value or "")
                and kept.negative == negative
            )
            right[lang] += good
            wrong[lang] += kept is not None and not good
        figures = "  ".join(
            f"{lang}: right {right[lang]}/{own[lang]} ({right[lang] / max(own[lang], 1):.1%}), "
            f"precision {right[lang] / max(right[lang] + wrong[lang], 1):.1%}, "
            f"look-alikes kept {kept_alike[lang]}/{alike[lang]} "
            f"({kept_alike[lang] / max(alike[lang], 1):.1%})"
            for lang in ("en", "zh")
        )
        print(f"cut {cut:+.1f} score {score:.2f}  {figures}")
    tuned(embedder, learned)


def tuned(embedder: E5Embedder, learned: LearnedReader) -> None:
    rules = RuleExtractor()
    unruled = [
        u
        for u in utterances()
        if not u.held_out and not any(c.slot for c in rules.extract(Turn(u.text, "s", "d")))
    ]
    _, states, spans = embedder.embed_passages_with_states([u.text for u in unruled])
    print(f"{len(unruled)} tuned utterances no rule gives a slot")
    for cut, score in [(c, s) for s in SCORES for c in CUTS]:
        reader = LearnedClauseReader(learned, doubt_cut=cut, min_score=score)
        right = Counter()
        for u, s, sp in zip(unruled, states, spans, strict=True):
            kept = reader.read_clause(u.text, s, sp)
            kind = "none" if u.label == "none" else "slot"
            got = kept is not None and (
                u.label.startswith("preference") and kept.slot.startswith("preference")
            )
            got = got or (kept is not None and kept.slot == u.label)
            right[kind, "all"] += 1
            right[kind, "read"] += (kept is not None) if kind == "none" else got
        print(
            f"cut {cut:+.1f} score {score:.2f}  "
            f"slot read right {right['slot', 'read']}/{right['slot', 'all']}, "
            f"look-alikes given a slot {right['none', 'read']}/{right['none', 'all']}"
        )


if __name__ == "__main__":
    main()
