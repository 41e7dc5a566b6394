"""``hermes-memory eval locomo``: the reader never needs the graded fields, the metrics, and the whole command
(memory service on milvus-lite + E5, and both baselines) on a small LoCoMo-format conversation."""

import json
from pathlib import Path

import pytest

from cli import main as cli
from evaluation import locomo as eval_locomo
from evaluation.baselines import reciprocal_rank_fusion
from evaluation.data import load_conversations
from evaluation.metrics import evidence_recall, load_evidence, score, session_recall_any

FORBIDDEN = ("answer", "evidence", "observation", "event_summary", "session_summary", "adversarial_answer")
DEV_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


def turn(dia_id: str, speaker: str, text: str, **extra) -> dict:
    return {"dia_id": dia_id, "speaker": speaker, "text": text, **extra}


def sample() -> dict:
    """Two sessions between Ana and Ben, and questions about both of them."""
    return {
        "sample_id": "mini-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                turn("D1:1", "Ana", "Hi Ben! I adopted a puppy named Biscuit last week."),
                turn("D1:2", "Ben", "Congrats! I started learning the cello this spring."),
                turn("D1:3", "Ana", "I'm allergic to cats, so a dog was the only option for me."),
                turn("D1:4", "Ben", "My sister Clara moved to Lisbon for her new job."),
                turn(
                    "D1:5",
                    "Ana",
                    "Here is Biscuit at the beach.",
                    blip_caption="a photo of a dog on the sand",
                ),
            ],
            "session_2_date_time": "10:15 am on 2 June, 2023",
            "session_2": [
                turn("D2:1", "Ben", "I played my first cello recital on Saturday and I was so nervous."),
                turn("D2:2", "Ana", "I finished my marathon training plan and ran 30 km yesterday."),
                turn("D2:3", "Ben", "Clara says Lisbon is sunny, I'm visiting her in August."),
                turn("D2:4", "Ana", "Biscuit chewed my running shoes, I have to buy new ones."),
            ],
        },
        "qa": [
            {
                "question": "What is the name of Ana's dog?",
                "answer": "Biscuit",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "What instrument does Ben play?",
                "answer": "cello",
                "evidence": ["D1:2", "D2:1"],
                "category": 1,
            },
            {
                "question": "Where does Ben's sister live?",
                "answer": "Lisbon",
                "evidence": ["D1:4; D2:3"],
                "category": 4,
            },
            {
                "question": "When did Ana run 30 km?",
                "answer": "1 June 2023",
                "evidence": ["D2:2"],
                "category": 2,
            },
            {
                "question": "What is Ana's favourite color?",
                "adversarial_answer": "blue",
                "evidence": [],
                "category": 5,
            },
        ],
        "observation": {"session_1_observation": "Ana adopted Biscuit"},
        "event_summary": {"events_session_1": "Ana adopts a puppy"},
        "session_summary": {"session_1_summary": "Ana and Ben catch up"},
    }


def stripped(data: dict) -> dict:
    clean = {k: v for k, v in data.items() if k not in FORBIDDEN}
    clean["qa"] = [{k: v for k, v in q.items() if k not in FORBIDDEN} for q in data["qa"]]
    return clean


def write(path: Path, samples: list[dict]) -> Path:
    path.write_text(json.dumps(samples))
    return path


def rankings(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_reader_needs_none_of_the_graded_fields(tmp_path):
    full = load_conversations(write(tmp_path / "full.json", [sample()]))
    bare = load_conversations(write(tmp_path / "bare.json", [stripped(sample())]))
    assert full == bare
    (conversation,) = bare
    first = conversation.utterances[0]
    assert first.text == "Ana: Hi Ben! I adopted a puppy named Biscuit last week." and first.dia_id == "D1:1"
    assert conversation.utterances[4].text.endswith("[shares a photo: a photo of a dog on the sand]")
    assert [s.at.date().isoformat() for s in conversation.sessions] == ["2023-05-08", "2023-06-02"]
    assert [q.category for q in conversation.questions] == [4, 1, 4, 2, 5]
    assert load_evidence(tmp_path / "bare.json") == {}


def test_reciprocal_rank_fusion_favours_what_both_rankings_place_high():
    assert reciprocal_rank_fusion(["a", "b", "c"], ["b", "d", "a"]) == ["b", "a", "d", "c"]
    assert reciprocal_rank_fusion(["a"], []) == ["a"]


def test_a_holdout_is_scored_apart_from_the_tuned_conversations(tmp_path):
    other = sample()
    other["sample_id"] = "mini-2"
    data = write(tmp_path / "two.json", [sample(), other])
    printed: list[str] = []
    figures = eval_locomo.run(
        data, tmp_path / "r.jsonl", systems=["bm25"], log=printed.append, holdout=frozenset({"mini-2"})
    )
    headings = [line.strip().split(":")[0] for line in printed if "recall@10" in line]
    assert headings == ["tuned on", "held out (mini-2)", "whole file"]
    assert figures["bm25"].counts["overall"] == 8  # the whole file's figures are what run returns


def test_metrics_per_category_skip_adversarial_questions(tmp_path):
    graded = load_evidence(write(tmp_path / "full.json", [sample()]))
    assert set(graded) == {("mini-1", 0), ("mini-1", 1), ("mini-1", 2), ("mini-1", 3)}
    assert graded[("mini-1", 2)].evidence == {"D1:4", "D2:3"}
    assert evidence_recall(["D1:2", "D9:9"], frozenset({"D1:2", "D2:1"})) == 0.5
    assert (
        session_recall_any(["D3:1", "D3:2", "D4:1", "D5:1", "D6:1", "D7:1", "D2:1"], frozenset({"D2:1"})) == 0
    )
    lines = [
        {"sample_id": "mini-1", "question_index": i, "ranked_dia_ids": ["D1:1", "D1:2", "D2:2"]}
        for i in range(5)
    ]
    figures = score(lines, graded)
    assert figures.counts == {"single-hop": 2, "multi-hop": 1, "temporal": 1, "overall": 4}
    assert figures.recall_at_10["single-hop"] == 0.5 and figures.recall_at_10["multi-hop"] == 0.5


@pytest.mark.slow
def test_the_command_ranks_with_the_memory_service_and_both_baselines(
    tmp_path, make_stack_settings, monkeypatch, capsys
):
    settings = make_stack_settings()
    monkeypatch.setenv("HERMES_MILVUS_URI", settings.milvus_uri)  # the session's milvus-lite server
    data = write(tmp_path / "mini.json", [sample()])
    out = tmp_path / "ranked.jsonl"
    assert (
        cli.main(["eval", "locomo", "--data", str(data), "--out", str(out), "--k", "10", "--system", "all"])
        == 0
    )
    printed = capsys.readouterr().out
    assert all(f"{name} R@10" in printed for name in ("memory", "bm25", "dense", "fused"))

    memory = rankings(out)
    assert [(r["sample_id"], r["question_index"]) for r in memory] == [("mini-1", i) for i in range(5)]
    all_turns = {u.dia_id for u in load_conversations(data)[0].utterances}
    assert all(set(r["ranked_dia_ids"]) <= all_turns for r in memory)
    assert "D1:1" in memory[0]["ranked_dia_ids"][:3]  # "What is the name of Ana's dog?"
    for name in ("bm25", "dense", "fused"):
        baseline = rankings(tmp_path / f"ranked.{name}.jsonl")
        assert len(baseline) == 5 and all(len(r["ranked_dia_ids"]) == 9 for r in baseline)

    bare = write(tmp_path / "bare.json", [stripped(sample())])
    assert (
        cli.main(
            ["eval", "locomo", "--data", str(bare), "--out", str(tmp_path / "b.jsonl"), "--system", "bm25"]
        )
        == 0
    )
    assert "R@10" not in capsys.readouterr().out  # nothing to grade against, nothing printed
    assert rankings(tmp_path / "b.jsonl") == rankings(tmp_path / "ranked.bm25.jsonl")


@pytest.mark.slow
@pytest.mark.skipif(not DEV_FILE.exists(), reason=f"{DEV_FILE} not present")
def test_a_slice_of_the_dev_file_beats_nothing_and_stays_bounded(
    tmp_path, make_stack_settings, monkeypatch, capsys
):
    """Three sessions of the first dev conversation and the questions whose evidence lies inside them."""
    first = json.loads(DEV_FILE.read_text())[0]
    conversation = {
        k: v
        for k, v in first["conversation"].items()
        if not k.startswith("session_") or k.split("_")[1] in {"1", "2", "3"}
    }
    inside = [
        q
        for q in first["qa"]
        if q.get("evidence")
        and q.get("category") != 5
        and all(e.split(":")[0] in {"D1", "D2", "D3"} for e in q["evidence"])
    ]
    data = write(
        tmp_path / "slice.json",
        [{"sample_id": first["sample_id"], "conversation": conversation, "qa": inside[:12]}],
    )
    settings = make_stack_settings()
    monkeypatch.setenv("HERMES_MILVUS_URI", settings.milvus_uri)
    out = tmp_path / "slice.jsonl"
    assert cli.main(["eval", "locomo", "--data", str(data), "--out", str(out), "--system", "memory"]) == 0
    assert "overall" in capsys.readouterr().out
    graded = load_evidence(data)
    figures = score(rankings(out), graded)
    assert figures.recall_at_10["overall"] > 0.3
