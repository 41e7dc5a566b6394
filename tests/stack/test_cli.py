"""The ``hermes-memory`` command line, run as a user runs it: a separate process, its own home directory.

The ``up --detach`` / ``down`` round trip starts the real stack (milvus-lite server or the Milvus standalone
server, a private local Ray, SQLite, Serve) on free ports, so it is slow; it needs nothing from the session
fixtures.
"""

import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, processes_under

REPO = Path(__file__).resolve().parents[2]
APP_EXISTS = (REPO / "serve" / "app.py").exists()


def cli_command() -> list[str]:
    """The installed entry point when this environment has one, else the module (an uninstalled checkout)."""
    script = Path(sys.executable).with_name("hermes-memory")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]


def run_cli(
    *args: str, home: Path, timeout: float = 120, milvus_server: str = "lite"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_MEMORY_HOME": str(home), "HERMES_EMBEDDER": "hash"}
    env["HERMES_MILVUS_SERVER"] = milvus_server
    # The stack must start its own Ray, never join the test session's cluster.
    env.pop("RAY_ADDRESS", None)
    return subprocess.run(
        [*cli_command(), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_version_matches_the_package_metadata(tmp_path):
    import tomllib

    expected = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    result = run_cli("version", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["hermes-memory", expected]


def test_mcp_without_url_or_key_says_what_to_give(tmp_path, monkeypatch):
    for name in ("HERMES_MEMORY_URL", "HERMES_MEMORY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    result = run_cli("mcp", "--url", "http://127.0.0.1:1", home=tmp_path)
    assert result.returncode == 2 and result.stdout == ""  # stdout is the MCP channel: nothing else on it
    assert "--key" in result.stderr and "HERMES_MEMORY_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_tenant_create_rejects_an_unsafe_id_without_a_traceback(tmp_path):
    result = run_cli("tenant", "create", "no spaces allowed", home=tmp_path)
    assert result.returncode == 1
    assert "invalid tenant_id" in result.stderr
    assert "Traceback" not in result.stderr


def test_tenant_create_prints_a_key_that_the_store_accepts(tmp_path):
    from actors.core.tenancy import KeyGrant
    from actors.store.sql.store import MemoryStore
    from schemas.settings import HermesSettings

    result = run_cli("tenant", "create", "acme", home=tmp_path)
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip()
    store = MemoryStore.from_settings(HermesSettings(home=tmp_path))
    try:
        assert store.keys.authenticate(key) == KeyGrant("acme")
    finally:
        store.dispose()
    again = run_cli("tenant", "create", "acme", home=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr


def test_down_with_nothing_running_says_so(tmp_path):
    result = run_cli("down", home=tmp_path)
    assert result.returncode == 0
    assert "no stack is running" in result.stdout


@pytest.mark.slow
@pytest.mark.stack
@pytest.mark.skipif(not APP_EXISTS, reason="serve/app.py does not exist yet")
@pytest.mark.parametrize("milvus_server", ["lite", "standalone"])
def test_up_detach_serves_until_down(tmp_path, milvus_server):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    up = ("up", "--detach", "--port", str(port), "--timeout", "240")
    started = run_cli(*up, home=tmp_path, timeout=300, milvus_server=milvus_server)
    try:
        assert started.returncode == 0, started.stdout + started.stderr + _log(tmp_path)
        assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200

        key_file = tmp_path / "demo.key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        key = key_file.read_text().strip()
        assert key in started.stdout
        host, _, gcs_port = (tmp_path / "ray.address").read_text().strip().rpartition(":")
        assert host and gcs_port.isdigit()  # how `hermes-memory jobs` finds the stack's Ray
        listed = httpx.get(f"{base}/v1/users/u1/memories", headers={"X-API-Key": key}, timeout=30)
        assert listed.status_code == 200, listed.text
        assert (tmp_path / ("milvus" if milvus_server == "lite" else "milvus-standalone")).is_dir()
        forged = httpx.get(f"{base}/v1/users/u1/memories", headers={"X-API-Key": "hm_demo_x"}, timeout=30)
        assert forged.status_code == 401

        second = run_cli("up", "--detach", "--port", str(free_port()), home=tmp_path)
        assert second.returncode == 1 and "already running" in second.stderr
    finally:
        stopped = run_cli("down", home=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped the stack" in stopped.stdout
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/healthz", timeout=5)
    for leftover in ("stack.pid", "milvus.pid", "ray.address", "stack.ready"):
        assert not (tmp_path / leftover).exists(), leftover
    assert processes_under(tmp_path) == []  # no Milvus left behind either


def _log(home: Path) -> str:
    log = home / "stack.log"
    return log.read_text()[-4000:] if log.exists() else "(no stack.log)"
