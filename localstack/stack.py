"""The local stack: SQL schema, a local Milvus (milvus-lite, or the standalone server with
``HERMES_MILVUS_SERVER=standalone``), a local Ray and Ray Serve, started in that order and
stopped in reverse, plus the pid-file bookkeeping that lets ``hermes-memory down`` stop a detached ``up``.
Heavy imports (ray, pymilvus, the app, the store) happen inside the methods that need them.

Errors (all ``HermesError``, so callers print them without a traceback):

    StackError               a stack component failed or misbehaved
    ├── StackAlreadyRunning  a live ``up`` already owns this home directory (its pid file names it)
    └── StackStartFailed     a component did not come up in time; the log file says why
"""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from actors.core.tenancy import KeyGrant
from schemas.errors import StackAlreadyRunning, StackStartFailed, StoreUnavailable
from schemas.settings import HermesSettings

if TYPE_CHECKING:  # imported where used: see above
    from actors.store.sql.store import MemoryStore
    from localstack.milvus import LocalMilvus

APP_NAME = "hermes"
DEMO_TENANT = "demo"
HEALTH_PATH = "/healthz"
TRACING_HOOK = "actors.adapters.telemetry:ray_startup_hook"



@dataclass(frozen=True)
class StackPaths:
    """Where one home directory keeps the stack's state; ``home`` is always absolute."""

    home: Path

    def milvus_dir(self, kind: str) -> Path:
        """The two servers' data dirs differ in format, so each kind has its own."""
        return self.home / ("milvus" if kind == "lite" else f"milvus-{kind}")

    @property
    def milvus_pid_file(self) -> Path:
        """Where either server records itself when detached: beside its data dir."""
        return self.home / "milvus.pid"

    @property
    def pid_file(self) -> Path:
        return self.home / "stack.pid"

    @property
    def ray_address_file(self) -> Path:
        """The local Ray's address while the stack runs: how ``hermes-memory jobs`` finds the cluster."""
        return self.home / "ray.address"

    @property
    def ready_file(self) -> Path:
        """Exists while a started stack has finished ``on_ready`` (demo key written, banner printed)."""
        return self.home / "stack.ready"

    @property
    def log_file(self) -> Path:
        return self.home / "stack.log"

    @property
    def demo_key_file(self) -> Path:
        return self.home / "demo.key"


def local_settings(
    settings: HermesSettings, host: str | None = None, port: int | None = None
) -> HermesSettings:
    """The settings with an absolute home and the CLI's overrides."""
    update: dict[str, object] = {}
    if host is not None:
        update["http_host"] = host
    if port is not None:
        update["http_port"] = port
    return settings.with_absolute_home().model_copy(update=update)


def uses_external_milvus(settings: HermesSettings) -> bool:
    """An explicitly configured ``HERMES_MILVUS_URI`` means a Milvus run elsewhere; otherwise we start the
    local server of ``HERMES_MILVUS_SERVER`` (milvus-lite or the standalone server)."""
    return "milvus_uri" in settings.model_fields_set


class LocalStack:
    """One process's whole stack. ``start`` is all-or-nothing: a failure stops what already started."""

    def __init__(self, settings: HermesSettings):
        self.settings = local_settings(settings)
        self.paths = StackPaths(self.settings.home)
        self._store: MemoryStore | None = None
        self._milvus: LocalMilvus | None = None
        self._ray_started = False
        self._serve_started = False

    @property
    def base_url(self) -> str:
        return f"http://{self.settings.http_host}:{self.settings.http_port}"

    def start(self) -> None:
        # Serve would fail on a taken port too, but only after Milvus and Ray started, inside a RayTaskError.
        _require_free_port(self.settings.http_host, self.settings.http_port)
        self.paths.home.mkdir(parents=True, exist_ok=True)
        try:
            self._create_schema()
            self._start_milvus()
            self._start_ray()
            self._start_serve()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Idempotent; each step runs even if an earlier one failed, so nothing is left behind."""
        if self._serve_started:
            from ray import serve

            self._serve_started = False
            _best_effort(serve.shutdown)
        if self._ray_started:
            import ray

            self._ray_started = False
            self.paths.ray_address_file.unlink(missing_ok=True)
            _best_effort(ray.shutdown)
        if self._milvus is not None:
            milvus, self._milvus = self._milvus, None
            _best_effort(milvus.stop)
        if self._store is not None:
            store, self._store = self._store, None
            _best_effort(store.dispose)

    def revive(self) -> None:
        """Restart the local Milvus server if it died (a crash, an OOM kill): on the same port and data dir,
        so the hosts' clients find it again as after a network blip. Ray restarts its own actors; Milvus is
        the one process of the stack that only this one watches."""
        milvus = self._milvus
        if milvus is None or milvus.is_running():
            return
        print(f"hermes-memory: the {milvus.label} server exited; restarting it", flush=True)
        try:
            milvus.start(timeout=120, detached=True)
        except StoreUnavailable as exc:  # tried again on the next tick
            print(f"hermes-memory: {exc}", flush=True)

    def ensure_demo_tenant(self) -> str | None:
        """Give the ``demo`` tenant a key in ``demo.key`` (mode 600, written before anything prints it);
        returns the key when it is new. Keys are stored hashed, so a missing or stale key file (say the SQL
        database was replaced) means a rotated key rather than an unusable one."""
        store = self._store
        assert store is not None, "the stack is not started"
        known = self.paths.demo_key_file.read_text().strip() if self.paths.demo_key_file.exists() else ""
        if known and store.keys.authenticate(known) == KeyGrant(DEMO_TENANT):
            return None
        if DEMO_TENANT in store.tenants.ids():
            key = store.keys.rotate(DEMO_TENANT)
        else:
            key = store.tenants.create(DEMO_TENANT, "Demo tenant")
        _write_private(self.paths.demo_key_file, key + "\n")
        return key

    def _create_schema(self) -> None:
        self._store = open_store(self.settings)

    def _start_milvus(self) -> None:
        if uses_external_milvus(self.settings):
            return
        from localstack.milvus import local_server, stop_pidfile

        # A server orphaned by a killed ``up`` would still hold the data dir's lock.
        stop_pidfile(self.paths.milvus_pid_file)
        kind = self.settings.milvus_server
        server = local_server(kind, self.paths.milvus_dir(kind))
        # Detached = its own session: a terminal's Ctrl-C reaches only us, and we stop it last, in order.
        server.start(timeout=120, detached=True)
        self._milvus = server
        self.settings = self.settings.model_copy(update={"milvus_uri": server.uri})

    def _start_ray(self) -> None:
        import ray

        from actors.adapters import telemetry
        from serve.runtime import apply_serve_environment, patient_serve_environment

        _export_source_root()
        patient_serve_environment()
        if self.settings.ray_address:
            ray.init(address=self.settings.ray_address, namespace=self.settings.namespace)
        else:
            apply_serve_environment(self.settings.http_port)  # the Ray started here inherits them
            # "local" always starts a private instance, never joins a stray cluster from /tmp/ray.
            # Every worker then sets up the OTel SDK from the OTEL_* variables it inherits from us.
            tracing: dict[str, Any] = (
                {"_tracing_startup_hook": TRACING_HOOK} if telemetry.tracing_requested() else {}
            )
            ray.init(
                address="local",
                num_cpus=os.cpu_count(),
                include_dashboard=False,
                namespace=self.settings.namespace,
                **tracing,
            )
        self._ray_started = True
        self.paths.ray_address_file.write_text(ray.get_runtime_context().gcs_address + "\n")

    def _start_serve(self) -> None:
        from ray import serve

        from actors.adapters.telemetry import tracing_requested
        from serve.app import build_app
        from serve.runtime import direct_ingress
        from serve.telemetry import serve_tracing_config

        http = {"host": self.settings.http_host, "port": self.settings.http_port}
        if direct_ingress():  # the replica serves the service's port; Serve's idle proxy takes another
            http["port"] = _free_port(self.settings.http_host)
        if tracing_requested():
            serve.start(http_options=http, tracing_config=serve_tracing_config())
        else:
            serve.start(http_options=http)
        self._serve_started = True
        serve.run(build_app(self.settings), name=APP_NAME, route_prefix="/")


def serve_until_signalled(stack: LocalStack, on_ready: Callable[[], None]) -> None:
    """Start the stack, run ``on_ready``, block until SIGINT/SIGTERM (restarting a dead Milvus server
    meanwhile), then stop everything.

    The pid file comes first, so ``down`` can stop a stack still starting. A signal during start-up raises
    (KeyboardInterrupt, or SystemExit from the SIGTERM handler ``ray.init`` installs) and ``start`` unwinds;
    once running, a signal only ends the wait. That handler just appends to a list: it can re-enter itself
    (Ctrl-C twice, ``timeout`` forwarding the group's signal), and taking a lock there (``Event.set``) hangs.
    """
    stack.paths.home.mkdir(parents=True, exist_ok=True)
    stack.paths.pid_file.write_text(f"{os.getpid()}\n")
    try:
        signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
        stack.start()
        received: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, _frame: received.append(signum))
        on_ready()
        stack.paths.ready_file.touch()
        while not received:
            time.sleep(0.5)
            stack.revive()
    finally:
        stack.paths.ready_file.unlink(missing_ok=True)
        stack.stop()
        _remove_own_pid(stack.paths.pid_file)


def running_pid(paths: StackPaths) -> int | None:
    """The pid of the live ``up`` that owns this home, or None (a stale pid file is removed)."""
    try:
        pid = int(paths.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    if _is_stack_process(pid):
        return pid
    paths.pid_file.unlink(missing_ok=True)
    return None


def refuse_if_running(paths: StackPaths) -> None:
    pid = running_pid(paths)
    if pid is not None:
        raise StackAlreadyRunning(f"already running from {paths.home} (pid {pid}); use `hermes-memory down`")


def start_detached(argv: list[str], paths: StackPaths, base_url: str, timeout: float) -> int:
    """Run ``argv`` (a foreground ``up``) in its own session, logging to ``stack.log``; return its pid once
    it is ready and ``/healthz`` answers. If it dies or times out, the error names the log file."""
    refuse_if_running(paths)
    paths.home.mkdir(parents=True, exist_ok=True)
    paths.ready_file.unlink(missing_ok=True)  # left by a stack that was killed outright
    env = {**os.environ, "HERMES_MEMORY_HOME": str(paths.home)}
    with paths.log_file.open("ab") as log:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise StackStartFailed(f"the stack exited with code {child.returncode}; see {paths.log_file}")
        if paths.ready_file.exists() and is_healthy(base_url):
            return child.pid
        time.sleep(0.5)
    _terminate_group(child.pid, grace_seconds=30)
    child.wait()
    raise StackStartFailed(f"no answer from {base_url}{HEALTH_PATH} in {timeout:.0f}s; see {paths.log_file}")


def stop_running(paths: StackPaths, timeout: float) -> int | None:
    """SIGTERM the ``up`` that owns this home and wait for it to finish its own shutdown; SIGKILL its process
    group if it overstays ``timeout``. Returns the pid stopped, or None if nothing was running."""
    from localstack.milvus import stop_pidfile

    pid = running_pid(paths)
    if pid is not None:
        _terminate_group(pid, grace_seconds=timeout)
        paths.pid_file.unlink(missing_ok=True)
    # Normally gone with its ``up``; left over only if that process was killed outright.
    stop_pidfile(paths.milvus_pid_file)
    return pid


def is_healthy(base_url: str) -> bool:
    try:
        return httpx.get(base_url + HEALTH_PATH, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _export_source_root() -> None:
    """Put this checkout on the PYTHONPATH that Ray workers inherit: they import the tracing hook before
    applying the driver's sys.path, so an uninstalled checkout would otherwise be invisible to them."""
    root = str(Path(__file__).resolve().parents[2])
    paths = [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def _require_free_port(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will: ignore TIME_WAIT
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise StackStartFailed(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def _terminate_group(pid: int, grace_seconds: float) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline:
        if not _is_alive(pid):
            return
        time.sleep(0.2)
    try:  # only a detached ``up`` leads its own process group; never signal a group we do not own
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # An orphan nobody has reaped yet (containers often lack a reaping init) is a zombie: dead for us.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (not Linux): the signal check is all there is


def _is_stack_process(pid: int) -> bool:
    """Guards against pid reuse: the pid must be alive and its command line must be an ``up``."""
    if not _is_alive(pid):
        return False
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return True  # no /proc (not Linux): trust the pid file
    return "up" in words and any("hermes-memory" in w or w == "cli.main" for w in words)


def open_store(settings: HermesSettings) -> "MemoryStore":
    """The SQL store with its schema in place (creating it is idempotent)."""
    from actors.store.sql.store import MemoryStore

    store = MemoryStore.from_settings(settings)
    store.create_schema()
    return store


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o600)  # O_CREAT's mode is ignored when the file already existed


def _remove_own_pid(path: Path) -> None:
    try:
        if int(path.read_text().strip()) == os.getpid():
            path.unlink()
    except (FileNotFoundError, ValueError):
        pass


def _best_effort(step: Callable[[], object]) -> None:
    """Shutdown keeps going past a failing step; the failure is reported, not swallowed."""
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - any failure here must not stop the remaining steps
        print(f"hermes-memory: shutdown step {step!r} failed: {exc!r}", flush=True)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
