"""Run a local Milvus as a child process: the vector store every Ray process connects to over gRPC.

Two servers, one interface (``local_server(kind, data_dir)``):

* ``MilvusLiteServer`` (the default): ``milvus-lite server``, from the ``milvus-lite`` package. Only one OS
  process may open a milvus-lite data dir (it holds a lock on ``<data_dir>/LOCK``), so the data dir is served
  on 127.0.0.1 and everything else is a client.
* ``MilvusStandaloneServer``: a real Milvus 2.3 standalone, the Go binary shipped in the ``milvus``
  package (``pip install -e '.[milvus-server]'``), for tenants larger than milvus-lite holds (see
  docs/benchmarks.md: a million rows where milvus-lite passed 10 GB and never finished loading).

Either is started attached (it lives and dies with a test or the service) or detached with a pid file
(``hermes-memory up`` / ``down``).

The milvus-lite memtable limit: milvus-lite searches unflushed rows by brute force in Python, and a filtered
search over a memtable of 7.5k rows took ~100 ms against ~5 ms once flushed. Flushing after every write
instead leaves hundreds of tiny segments. A 256 KiB memtable (about 150 rows of 384 floats) flushes in small
batches and measured best: search p50 5.3 ms / p95 10 ms, upsert p50 1.9 ms, while writes kept coming.
"""

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from schemas.errors import StoreUnavailable

MEMTABLE_LIMIT_ENV = "MILVUS_LITE_MEMTABLE_MEMORY_LIMIT_BYTES"
#: seconds a Milvus standalone component's etcd session lives without a keepalive (``common.session.ttl``)
SESSION_TTL_ENV = "HERMES_MILVUS_SESSION_TTL"
#: Milvus's own default. 10 s made restarts faster (stale registrations expire sooner) but on a machine at
#: load 15-30 for 2 CPUs a component missed its keepalives for 10 s, its session expired and the server quit
DEFAULT_SESSION_TTL_S = 30
DEFAULT_MEMTABLE_LIMIT_BYTES = 256 * 1024
HOST = "127.0.0.1"


def _executable(name: str, package: str) -> str:
    """The script of this interpreter's environment first, else the one on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise StoreUnavailable(f"the {name} executable was not found (pip install {package})")
    return found


def milvus_lite_executable() -> str:
    return _executable("milvus-lite", "milvus-lite")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def wait_for_milvus(uri: str, timeout: float) -> None:
    """Return once a client can list collections at ``uri``; ``StoreUnavailable`` after ``timeout`` s."""
    from pymilvus import MilvusClient

    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            client = MilvusClient(uri=uri, timeout=2.0, dedicated=True)
            try:
                client.list_collections(timeout=2.0)
                return
            finally:
                client.close()
        except Exception as exc:  # any failure here only means "not serving yet"
            last_error = exc
        if time.monotonic() >= deadline:
            raise StoreUnavailable(f"Milvus at {uri} did not answer within {timeout:.0f} s: {last_error}")
        time.sleep(0.2)


@dataclass(frozen=True)
class PidRecord:
    pid: int
    uri: str
    data_dir: str


def read_pidfile(pidfile: Path) -> PidRecord | None:
    """The detached server recorded in ``pidfile``, or None when the file is missing or unreadable."""
    try:
        return PidRecord(**json.loads(pidfile.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _is_our_server(pid: int, data_dir: str) -> bool:
    """Guards against a recycled pid: the process must still be a Milvus serving that data dir (milvus-lite
    names it as an argument, the standalone server runs the binary linked inside it)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    inside = data_dir.encode() + b"/"
    return any(b"milvus" in arg for arg in argv) and any(
        arg == data_dir.encode() or arg.startswith(inside) for arg in argv
    )


def _has_exited(pid: int) -> bool:
    """Gone, or a zombie with no thread left: its exit has finished, so its files (and the data dir lock)
    are closed. A process still exiting has already lost its cmdline, which is why ``_is_our_server`` cannot
    tell this; and its main thread shows as a zombie while other threads still shut down."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        threads = len(os.listdir(f"/proc/{pid}/task"))
    except (OSError, IndexError):
        return True
    return state in {"Z", "X"} and threads <= 1


def _terminate(pid: int, is_alive, timeout: float) -> None:
    """SIGINT first (milvus-lite drains requests and releases its data dir; Milvus stops its components and
    removes their registrations), SIGKILL as a last resort."""
    for sig, wait in ((signal.SIGINT, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if _exits_within(is_alive, wait):
            return


def _exits_within(is_alive, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not is_alive():
            return True
        time.sleep(0.1)
    return not is_alive()


def stop_pidfile(pidfile: Path, timeout: float = 15.0) -> bool:
    """Stop the detached server recorded in ``pidfile`` and remove the file. True if one was running."""
    record = read_pidfile(pidfile)
    running = record is not None and _is_our_server(record.pid, record.data_dir)
    if record is not None and running:
        _terminate(record.pid, lambda: not _has_exited(record.pid), timeout)
    pidfile.unlink(missing_ok=True)
    return running


class LocalMilvus:
    """A Milvus server serving ``data_dir`` on ``http://127.0.0.1:<port>``, run as a child process.

    The log goes to ``<data_dir>/../milvus.log`` (appended) and the pid file of a detached server to
    ``<data_dir>/../milvus.pid``, both beside the data dir so that they survive a wipe of it.
    """

    kind: ClassVar[str]
    #: how errors name it
    label: ClassVar[str]

    def __init__(self, data_dir: Path, port: int | None = None):
        self.data_dir = Path(data_dir).resolve()
        self.port = port if port is not None else self._default_port()
        self.uri = f"http://{HOST}:{self.port}"
        self.log_path = self.data_dir.parent / "milvus.log"
        self.pidfile = self.data_dir.parent / "milvus.pid"
        self._process: subprocess.Popen | None = None

    def _default_port(self) -> int:
        return free_port()

    def _claim_data_dir(self) -> tuple[int, ...]:
        """File descriptors the server inherits that hold the data dir for it (milvus-lite locks its own)."""
        return ()

    def _command(self) -> tuple[list[str], dict[str, str]]:
        """argv and environment of the server process."""
        raise NotImplementedError

    def start(self, timeout: float = 60, detached: bool = False) -> None:
        """Spawn the server and wait until it answers; ``StoreUnavailable`` (with the log's tail) if not."""
        if self.is_running():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        held = self._claim_data_dir()
        try:
            argv, env = self._command()
            with self.log_path.open("ab") as log:
                self._process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=self.data_dir,
                    pass_fds=held,
                    # detached: its own session, so it outlives this process and ignores our Ctrl-C
                    start_new_session=detached,
                )
        finally:
            for fd in held:
                os.close(fd)
        try:
            self._wait_until_serving(timeout)
        except StoreUnavailable:
            self.stop()
            raise
        if detached:
            record = PidRecord(pid=self._process.pid, uri=self.uri, data_dir=str(self.data_dir))
            self.pidfile.write_text(json.dumps(record.__dict__))

    def _wait_until_serving(self, timeout: float) -> None:
        assert self._process is not None  # start() has just spawned it
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise StoreUnavailable(
                    f"{self.label} exited with code {self._process.returncode}: {self._log_tail()}"
                    f"{self._exit_hint()}"
                )
            try:
                wait_for_milvus(self.uri, timeout=min(1.0, max(0.0, deadline - time.monotonic())))
                return
            except StoreUnavailable:
                if time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        f"{self.label} did not serve {self.uri} within {timeout:.0f} s: {self._log_tail()}"
                    ) from None

    def _exit_hint(self) -> str:
        """What to do about an exit whose cause the log names, if we know."""
        return ""

    def _log_tail(self, lines: int = 5) -> str:
        try:
            tail = self.log_path.read_text(errors="replace").strip().splitlines()[-lines:]
        except OSError:
            return "(no log)"
        return " | ".join(line[:400] for line in tail)

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        if self._process is None:
            return
        pid = self._process.pid
        if self._process.poll() is None:
            _terminate(pid, lambda: self._process.poll() is None, timeout)
        self._process.wait()
        self._process = None
        record = read_pidfile(self.pidfile)
        if record is not None and record.pid == pid:
            self.pidfile.unlink(missing_ok=True)

    def __enter__(self) -> "LocalMilvus":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class MilvusLiteServer(LocalMilvus):
    """``milvus-lite server --data-dir D --host 127.0.0.1 --port P``."""

    kind = "lite"
    label = "milvus-lite"

    def _command(self) -> tuple[list[str], dict[str, str]]:
        env = dict(os.environ)
        env.setdefault(MEMTABLE_LIMIT_ENV, str(DEFAULT_MEMTABLE_LIMIT_BYTES))
        argv = [milvus_lite_executable(), "server", "--data-dir", str(self.data_dir)]
        return argv + ["--host", HOST, "--port", str(self.port)], env


class MilvusStandaloneServer(LocalMilvus):
    """Milvus 2.3 standalone (embedded etcd and rocksmq) from the ``milvus`` package, run directly.

    The package's ``milvus-server`` launcher is not used: it takes a port that is not free *right now* as a
    hint and silently counts up to the next one, and a port whose previous server just stopped is not free
    for a minute (TIME_WAIT), so a restart came up on another port than the one asked for and clients never
    found it. Its Milvus config template and binaries are used as it would use them, with every port chosen
    here: free ports from the OS, kept in ``<data dir>/ports.json`` and reused on restart (Milvus registers
    each component's address in etcd for 30 s, and a restart on other ports waited ~55 s for those stale
    registrations to expire). The embedded etcd's ports (always localhost:2379/2380 otherwise, so two servers
    on one machine collided) are set through an etcd config file (``ETCD_CONFIG_PATH``, which Milvus reads).
    Components advertise 127.0.0.1 rather than the host's first address, which may change.

    What it cannot do: Milvus 2.3 binds its gRPC and metrics ports on every interface, without
    authentication; on a machine reachable from untrusted networks, firewall those ports.

    Its binaries (~250 MB unpacked from the wheel, ~15 s on a busy 2-CPU machine) are unpacked once per
    machine and version into a cache (``~/.cache/hermes-memory``) and linked from each data dir.
    """

    kind = "standalone"
    label = "Milvus standalone"
    #: the template's port settings, besides ``proxy_port``; the last two are not in the template
    _PORTS = (
        "etcd_port",
        "root_coord_port",
        "proxy_internal_port",
        "query_coord_port",
        "query_node_port",
        "index_coord_port",
        "index_node_port",
        "data_coord_port",
        "data_node_port",
        "etcd_peer_port",
        "metrics_port",
    )
    _COMPONENTS = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexNode", "dataCoord", "dataNode")
    _SETTINGS = {
        "log.level": "warn",
        "log.stdout": "false",  # its own files under <data dir>/logs; only a crash's stderr reaches our log
        # on SIGINT, quit after 3 s: a graceful stop (default: up to 30 min) never completed in 10 s here
        "common.gracefulStopTimeout": 3,
    }

    def _exit_hint(self) -> str:
        tail = self._log_tail(lines=40).casefold()
        if "session" in tail and ("expire" in tail or "lease" in tail or "keepalive" in tail):
            return (
                f" — a component's etcd session expired (a loaded machine misses keepalives): set "
                f"{SESSION_TTL_ENV} above its {session_ttl()} s"
            )
        return ""

    @property
    def _ports_file(self) -> Path:
        return self.data_dir / "ports.json"

    def _saved_ports(self) -> dict[str, int]:
        try:
            return {name: int(port) for name, port in json.loads(self._ports_file.read_text()).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def _default_port(self) -> int:
        saved = self._saved_ports().get("proxy_port")
        return saved if saved is not None and _is_free(saved) else free_port()

    def _claim_data_dir(self) -> tuple[int, ...]:
        """Milvus would hang on a data dir in use (its etcd waits for the lock), after this start had
        rewritten the running server's config: a lock held by the server process refuses it at once."""
        fd = os.open(self.data_dir / "server.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreUnavailable(f"{self.data_dir} is in use by another Milvus server") from None
        return (fd,)

    def _ports(self) -> dict[str, int]:
        saved = self._saved_ports()
        ports = {"proxy_port": self.port}
        for name in self._PORTS:
            port = saved.get(name)
            while port is None or port in ports.values() or not _is_free(port):
                port = free_port()
            ports[name] = port
        self._ports_file.write_text(json.dumps(ports))
        return ports

    def _command(self) -> tuple[list[str], dict[str, str]]:
        try:
            from milvus import MilvusServerConfig
        except ImportError:
            raise StoreUnavailable(
                "the Milvus standalone server is not installed (pip install -e '.[milvus-server]')"
            ) from None
        bin_dir = self._link_binaries()
        ports = self._ports()
        config = MilvusServerConfig(data_dir=str(self.data_dir))
        config.resolve_storage()  # the data, log and etcd paths under the data dir
        for name, port in ports.items():
            config.set(name, port)
        for component in self._COMPONENTS:
            config.set(f"{component}.ip", HOST)
        for key, value in self._SETTINGS.items():
            config.set(key, value)
        # a restarted server waits for its previous run's registrations to expire before it serves a loaded
        # collection (~38 s with 30 s, ~15 s with 10 s); a shorter session expires under load
        config.set("common.session.ttl", session_ttl())
        config.write_config()  # <data dir>/configs/milvus.yaml, where Milvus looks (its working dir)

        etcd, peer = f"http://{HOST}:{ports['etcd_port']}", f"http://{HOST}:{ports['etcd_peer_port']}"
        etcd_config = self.data_dir / "configs" / "embed-etcd.yaml"
        etcd_config.write_text(
            f"listen-client-urls: {etcd}\nadvertise-client-urls: {etcd}\nlisten-peer-urls: {peer}\n"
            f"initial-advertise-peer-urls: {peer}\ninitial-cluster: default={peer}\n"
        )
        env = {
            **os.environ,
            "DEPLOY_MODE": "STANDALONE",
            "METRICS_PORT": str(ports["metrics_port"]),
            "MILVUS_RUN_DIR": str(self.data_dir / "run"),
            "ETCD_CONFIG_PATH": str(etcd_config),
            "LD_LIBRARY_PATH": _prepend(str(bin_dir), os.environ.get("LD_LIBRARY_PATH")),
        }
        return [str(bin_dir / "milvus"), "run", "standalone"], env

    def _link_binaries(self) -> Path:
        import milvus

        cache = _cache_root() / f"milvus-server-{milvus.__version__}"
        cache.mkdir(parents=True, exist_ok=True)
        with (cache / ".lock").open("w") as lock:  # one unpacker at a time; the others then find it done
            fcntl.flock(lock, fcntl.LOCK_EX)
            milvus._initialize_data_files(str(cache))  # unpacks only what is missing or changed
        link = self.data_dir / "bin"
        if not link.is_symlink():
            shutil.rmtree(link, ignore_errors=True)
            link.symlink_to(cache / "bin", target_is_directory=True)
        return link


def session_ttl() -> int:
    """The standalone server's session TTL in seconds: ``HERMES_MILVUS_SESSION_TTL``, else 30."""
    raw = os.environ.get(SESSION_TTL_ENV)
    if raw is None:
        return DEFAULT_SESSION_TTL_S
    try:
        seconds = int(raw)
    except ValueError:
        seconds = 0
    if seconds < 1:
        raise StoreUnavailable(f"{SESSION_TTL_ENV} must be a whole number of seconds >= 1, not {raw!r}")
    return seconds


def local_server(kind: str, data_dir: Path, port: int | None = None) -> LocalMilvus:
    """The local server of ``HermesSettings.milvus_server``'s kind."""
    return {"lite": MilvusLiteServer, "standalone": MilvusStandaloneServer}[kind](data_dir, port)


def _prepend(path: str, search_path: str | None) -> str:
    return os.pathsep.join([path, search_path]) if search_path else path


def _is_free(port: int) -> bool:
    """Milvus listens on every interface: the port must be free there. As its listeners do, ignore TIME_WAIT
    (a restart reuses the ports its previous run just closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hermes-memory"
