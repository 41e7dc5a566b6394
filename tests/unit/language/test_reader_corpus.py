"""The reader's corpus follows its format (actors/language/reader/corpus/README.md): every clause's text is
a substring of its turn, every value a substring of its clause, every act, slot, polarity and flag in its
allowed set, ids unique. The validator itself is checked on families of broken lines."""

from __future__ import annotations

import copy
import json

import pytest

from actors.language.reader.corpus import ACTS, CORPUS, FLAGS, SLOTS, files, load, problems

GOOD = {
    "id": "en-x-1",
    "lang": "en",
    "text": "I've lived in Porto for three years now, what's a good day trip from here?",
    "clauses": [
        {
            "text": "I've lived in Porto for three years now",
            "act": "fact",
            "slot": "basic.residence",
            "value": "Porto",
            "flags": [],
        },
        {"text": "what's a good day trip from here?", "act": "request"},
    ],
}


def _broken(path: tuple[object, ...], value: object) -> dict[str, object]:
    record = copy.deepcopy(GOOD)
    target: object = record
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    return record


def test_a_line_in_the_format_has_no_problem():
    assert problems(GOOD) == []
    assert problems(json.loads(json.dumps(GOOD, ensure_ascii=False))) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("lang",), "fr"),
        (("id",), ""),
        (("text",), ""),
        (("clauses",), []),
        (("clauses", 0, "text"), "I have lived in Porto"),  # not a substring of the turn
        (("clauses", 0, "value"), "Lisbon"),  # not a substring of the clause
        (("clauses", 0, "value"), None),  # a slot without a value
        (("clauses", 0, "slot"), "basic.city"),
        (("clauses", 0, "act"), "statement"),
        (("clauses", 1, "slot"), "basic.residence"),  # a slot on a request
        (("clauses", 0, "flags"), ["maybe"]),
        (("clauses", 0, "polarity"), "0"),
    ],
)
def test_each_kind_of_broken_line_is_named(path, value):
    assert problems(_broken(path, value))


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("flag", FLAGS)
def test_every_allowed_act_and_flag_passes(act, flag):
    record = _broken(("clauses", 1, "act"), act)
    record["clauses"][1]["flags"] = [flag]  # type: ignore[index]
    assert problems(record) == []


def test_every_allowed_slot_passes():
    for slot in SLOTS:
        assert problems(_broken(("clauses", 0, "slot"), slot)) == [], slot


def test_repeated_ids_and_bad_json_are_left_out_and_counted(tmp_path):
    line = json.dumps(GOOD, ensure_ascii=False)
    (tmp_path / "train_en.jsonl").write_text(f"{line}\n{line}\n{{not json\n", encoding="utf-8")
    turns, invalid = load("train", tmp_path)
    assert len(turns) == 1
    assert [i.line for i in invalid] == [2, 3]


def test_the_corpus_has_both_languages_in_both_parts_and_no_invalid_line():
    assert {"train_en.jsonl", "train_zh.jsonl", "train_c_en.jsonl", "train_c_zh.jsonl"} <= {
        p.name for p in files("train")
    }
    assert {p.name for p in files("heldout")} == {"heldout_en.jsonl", "heldout_zh.jsonl"}
    for part in ("train", "heldout"):
        turns, invalid = load(part)
        assert turns
        assert not invalid, "\n".join(
            f"{CORPUS.name}/{i.file}:{i.line}: {'; '.join(i.problems)}" for i in invalid
        )


def test_no_held_out_turn_is_also_a_training_turn():
    """The held-out figures are only honest if the reader never trained on the very turns they score."""

    def turn_texts(part: str) -> set[str]:
        return {
            json.loads(line)["text"].strip().casefold()
            for path in CORPUS.glob(f"{part}_*.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        }

    assert not turn_texts("train") & turn_texts("heldout")
