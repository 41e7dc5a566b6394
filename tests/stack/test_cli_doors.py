"""The command line's new doors against the running stack: ``export`` streams a user's file, ``import``
sends it back in parts (idempotent: nothing is added twice), ``keys mint`` prints a per-user key that then
reaches its user only; and, on a store of its own, the operator's ``tenant policy --set`` validates like the
admin route (the field named, exit code 1, no traceback)."""

import json

import pytest

from cli.doors import parts
from tests.stack.test_cli import run_cli
from tests.stack.test_isolation import headers, new_key

pytestmark = [pytest.mark.stack, pytest.mark.slow]


def test_export_import_and_keys_from_the_command_line(http, serve_app, sql_store, tmp_path):
    _, key = new_key(sql_store)
    for session in ("s1", "s2"):
        turns = [{"text": "I'm allergic to peanuts", "dialog_id": f"{session}-1"}]
        assert http.post(
            "/v1/users/alice/turns", json={"session_id": session, "turns": turns}, headers=headers(key)
        )
    over = ("--url", serve_app, "--key", key)
    out = tmp_path / "alice.jsonl"
    exported = run_cli("export", "--user", "alice", "--out", str(out), *over, home=tmp_path)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1] == {"type": "end", "records": len(lines) - 2}
    memories = [line for line in lines if line["type"] == "memory"]
    assert any("peanut" in line["content"] for line in memories)

    again = run_cli("import", str(out), "--user", "alice", *over, home=tmp_path)
    assert again.returncode == 0, again.stderr
    (alice,) = json.loads(again.stdout)["users"]
    assert alice["memories_present"] == len(memories) and alice["memories_added"] == 0

    minted = run_cli("keys", "mint", "alice", "--label", "cli", *over, home=tmp_path)
    assert minted.returncode == 0, minted.stderr
    alice_key = json.loads(minted.stdout)["api_key"]
    assert http.get("/v1/users/alice/memories", headers=headers(alice_key)).status_code == 200
    assert http.get("/v1/users/bob/memories", headers=headers(alice_key)).status_code == 403
    refused = run_cli("import", str(out), *over[:2], "--key", alice_key, home=tmp_path)
    assert refused.returncode == 1 and "importing needs a tenant key" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_operator_changes_a_policy_from_the_command_line(tmp_path):
    assert run_cli("tenant", "create", "acme", home=tmp_path).returncode == 0
    changed = run_cli("tenant", "policy", "acme", "--set", "capacities.working=50", home=tmp_path)
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)["policy"]["capacities"]["working"] == 50
    bad = run_cli("tenant", "policy", "acme", "--set", "capacities.working=0", home=tmp_path)
    assert (
        bad.returncode == 1 and "capacities.working: Input should be greater than or equal to 1" in bad.stderr
    )
    assert "Traceback" not in bad.stderr
    shown = json.loads(run_cli("tenant", "show", "acme", home=tmp_path).stdout)
    assert shown["policy"]["capacities"]["working"] == 50


def test_a_file_is_cut_into_parts_of_whole_lines():
    lines = [b'{"n": %d}\n' % n for n in range(100)]
    cut = list(parts(iter(lines), limit=64))
    assert b"".join(cut) == b"".join(lines) and all(len(part) <= 64 for part in cut)
    assert all(part.endswith(b"\n") for part in cut) and len(cut) > 10
