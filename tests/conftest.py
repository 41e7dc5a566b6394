"""Session-wide fixtures for the stack tests: one Ray, one milvus-lite server, one Serve app per run.

Fixture graph (session-scoped except ``tenant_key``, ``http`` and ``postgres_url``):

    ray_session ─┐
    milvus_server ─ stack_settings ─ serve_app ─ http
                        └─────────── tenant_key (per test: a fresh tenant, so tests never share data)
    milvus_standalone (a real Milvus 2.3 standalone server, for the production-shape tests)

``make_stack_settings(**overrides)`` builds further settings on the same milvus server, each with its own
SQLite file and Milvus collection, for tests that need small caps or another embedder in-process.

Missing components: outside CI a ``stack`` test is skipped when milvus-lite is not installed, a test of the
standalone server when the ``milvus`` package is not, and a ``postgres`` test when nothing answers at
``HERMES_TEST_POSTGRES_URL``; with ``CI=true`` all are errors.
"""

import importlib.util
import itertools
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from schemas.settings import HermesSettings

ON_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
POSTGRES_URL = os.environ.get("HERMES_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
ADMIN_KEY = "test-admin-key"
STACK_FIXTURES = {"ray_session", "milvus_server", "milvus_standalone", "serve_app"}

MARKERS = {
    "slow": "takes more than a few seconds (still run in CI)",
    "stack": "needs the real local stack (Ray, Serve, milvus-lite server)",
    "postgres": "needs the PostgreSQL server on 127.0.0.1:5432",
}


def pytest_configure(config: pytest.Config) -> None:
    # pyproject.toml registers these too; registering here keeps `-m` working under any other ini file.
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


def free_port() -> int:
    """A loopback port that was free a moment ago (the OS picks it; a tiny race is acceptable in tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def processes_under(path: Path) -> list[int]:
    """Live processes (not zombies) whose command line names ``path`` or a path inside it: what a server
    started on that directory left running."""
    names = (str(path).encode() + b"\0", str(path).encode() + b"/")
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and any(name in (proc / "cmdline").read_bytes() for name in names):
                if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


def _missing_stack_component() -> str | None:
    if importlib.util.find_spec("milvus_lite") is None:
        return "milvus-lite is not installed (pip install -e '.[test]')"
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install -e '.[test]')"
    return None


def _missing_standalone() -> str | None:
    if importlib.util.find_spec("milvus") is None:
        return "the milvus package (Milvus standalone server) is not installed (pip install -e '.[test]')"
    return None


def _postgres_unreachable() -> str | None:
    url = make_url(POSTGRES_URL)
    address = (url.host or "127.0.0.1", url.port or 5432)
    try:
        with socket.create_connection(address, timeout=1):
            return None
    except OSError as exc:
        return f"PostgreSQL is not reachable on {address[0]}:{address[1]} ({exc})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A test that uses the stack is a stack test whether or not its author said so: `-m "not stack"` works.
    for item in items:
        if STACK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.stack)
    if ON_CI:
        return  # CI runs everything; a missing component fails loudly in the fixtures below
    reasons = {"stack": _missing_stack_component(), "postgres": _postgres_unreachable()}
    for item in items:
        for marker, reason in reasons.items():
            if reason and item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=reason))


def _require(reason: str | None) -> None:
    if reason and ON_CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    _require(_missing_stack_component())
    import ray

    from serve.runtime import patient_serve_environment

    patient_serve_environment()
    # "local": a private instance even if another Ray cluster runs on this machine.
    ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="hermes-test")
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory):
    _require(_missing_stack_component())
    from localstack.milvus import MilvusLiteServer

    server = MilvusLiteServer(tmp_path_factory.mktemp("milvus"))
    server.start(timeout=120)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def milvus_standalone(tmp_path_factory: pytest.TempPathFactory):
    """A Milvus 2.3 standalone server (``milvus-server``) on free ports, data in tmp; ~4 s to start once its
    binaries are unpacked (the first start on a machine unpacks them: ~15 s more)."""
    _require(_missing_stack_component() or _missing_standalone())
    from localstack.milvus import MilvusStandaloneServer

    server = MilvusStandaloneServer(tmp_path_factory.mktemp("milvus-standalone") / "data")
    server.start(timeout=180)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def make_stack_settings(
    milvus_server, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., HermesSettings]:
    """Fresh, isolated settings: ``make_stack_settings(policy={"capacities": {"working": 5}})``."""
    serial = itertools.count()

    def make(**overrides: object) -> HermesSettings:
        n = next(serial)
        home = tmp_path_factory.mktemp(f"hermes{n}")
        fields: dict[str, object] = {
            "home": home,
            "sql_url": f"sqlite:///{home / 'hermes.db'}",
            "milvus_uri": milvus_server.uri,
            "milvus_collection": f"hermes_test_{n}",
            "embedder": "e5",  # end-to-end tests run on the real embedder, never a fake
            "admin_key": ADMIN_KEY,
            "namespace": "hermes-test",
            "hosts": 2,  # users spread over two hosts: routing is exercised on the session's two CPUs
            "actor_idle_seconds": 30.0,
        }
        fields.update(overrides)
        # Constructor values beat HERMES_* variables from the developer's shell, keeping tests hermetic.
        return HermesSettings(**fields)

    return make


@pytest.fixture(scope="session")
def stack_settings(make_stack_settings) -> HermesSettings:
    return make_stack_settings()


@pytest.fixture(scope="session")
def sql_store(stack_settings):
    """The SQL store behind ``serve_app``, schema created: for setting up and inspecting state directly."""
    from actors.store.sql.store import MemoryStore

    store = MemoryStore.from_settings(stack_settings)
    store.create_schema()
    return store


@pytest.fixture(scope="session")
def serve_app(ray_session, stack_settings, sql_store) -> Iterator[str]:
    """The whole app under Ray Serve on a free loopback port; yields its base URL.

    Serve is one per cluster: if a module fixture already started it, the app joins that instance's port.
    """
    from ray import serve
    from ray.serve.context import _get_global_client

    from serve.app import build_app

    started_here = _get_global_client(raise_if_no_controller_running=False) is None
    if started_here:
        serve.start(http_options={"host": "127.0.0.1", "port": free_port()})
    port = _get_global_client().http_config.port
    try:
        serve.run(build_app(stack_settings), name="hermes", route_prefix="/")
        yield f"http://127.0.0.1:{port}"
    finally:
        if started_here:
            serve.shutdown()
        else:
            serve.delete("hermes")


@pytest.fixture
def tenant_key(sql_store) -> str:
    """A fresh tenant per test (so no test sees another's users); returns its API key."""
    tenant_id = f"t_{uuid.uuid4().hex[:16]}"
    return sql_store.tenants.create(tenant_id, f"test tenant {tenant_id}")


@pytest.fixture
def http(serve_app: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve_app, timeout=60) as client:
        yield client


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL for ``postgres`` tests (override with HERMES_TEST_POSTGRES_URL)."""
    _require(_postgres_unreachable())
    return POSTGRES_URL
