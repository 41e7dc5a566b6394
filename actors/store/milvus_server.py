"""Run ``milvus-lite server`` as a child process: the local vector store every Ray process connects to.

Only one OS process may open a milvus-lite data dir (it holds a lock on ``<data_dir>/LOCK``), so the data
dir is served over gRPC on 127.0.0.1 and everything else is a client. The server is started attached (it
lives and dies with a test or the service) or detached with a pid file (``hermes-memory up`` / ``down``).

The memtable limit: milvus-lite searches unflushed rows by brute force in Python, and a filtered search
over a memtable of 7.5k rows took ~100 ms against ~5 ms once flushed. Flushing after every write instead
leaves hundreds of tiny segments. A 256 KiB memtable (about 150 rows of 384 floats) flushes in small
batches and measured best: search p50 5.3 ms / p95 10 ms, upsert p50 1.9 ms, while writes kept coming.
"""

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

from actors.errors import StoreUnavailable

MEMTABLE_LIMIT_ENV = "MILVUS_LITE_MEMTABLE_MEMORY_LIMIT_BYTES"
DEFAULT_MEMTABLE_LIMIT_BYTES = 256 * 1024
HOST = "127.0.0.1"


def milvus_lite_executable() -> str:
    """The ``milvus-lite`` script of this interpreter's environment first, else the one on PATH."""
    beside = Path(sys.executable).parent / "milvus-lite"
    if beside.is_file():
        return str(beside)
    found = shutil.which("milvus-lite")
    if found is None:
        raise StoreUnavailable("the milvus-lite executable was not found (pip install milvus-lite)")
    return found


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
    """Guards against a recycled pid: the process must still be milvus-lite serving that data dir."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(b"milvus-lite" in arg for arg in argv) and data_dir.encode() in argv


def _has_exited(pid: int) -> bool:
    """Gone, or a zombie: its exit has finished, so its files (and the data dir lock) are closed. A process
    still exiting has already lost its cmdline, which is why ``_is_our_server`` cannot tell this."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in {"Z", "X"}


def _terminate(pid: int, is_alive, timeout: float) -> None:
    """SIGINT first (milvus-lite then drains requests and releases its data dir), SIGKILL as a last resort."""
    for sig, wait in ((signal.SIGINT, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not is_alive():
                return
            time.sleep(0.1)


def stop_pidfile(pidfile: Path, timeout: float = 15.0) -> bool:
    """Stop the detached server recorded in ``pidfile`` and remove the file. True if one was running."""
    record = read_pidfile(pidfile)
    running = record is not None and _is_our_server(record.pid, record.data_dir)
    if running:
        _terminate(record.pid, lambda: not _has_exited(record.pid), timeout)
    pidfile.unlink(missing_ok=True)
    return running


class MilvusLiteServer:
    """``milvus-lite server --data-dir D --host 127.0.0.1 --port P`` as a child process.

    The log goes to ``<data_dir>/../milvus.log`` (appended) and the pid file of a detached server to
    ``<data_dir>/../milvus.pid``, both beside the data dir so that they survive a wipe of it.
    """

    def __init__(self, data_dir: Path, port: int | None = None):
        self.data_dir = Path(data_dir).resolve()
        self.port = port if port is not None else free_port()
        self.uri = f"http://{HOST}:{self.port}"
        self.log_path = self.data_dir.parent / "milvus.log"
        self.pidfile = self.data_dir.parent / "milvus.pid"
        self._process: subprocess.Popen | None = None

    def start(self, timeout: float = 60, detached: bool = False) -> None:
        """Spawn the server and wait until it answers; ``StoreUnavailable`` (with the log's tail) if not."""
        if self.is_running():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.setdefault(MEMTABLE_LIMIT_ENV, str(DEFAULT_MEMTABLE_LIMIT_BYTES))
        argv = [milvus_lite_executable(), "server", "--data-dir", str(self.data_dir)]
        argv += ["--host", HOST, "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                # detached: its own session, so it outlives this process and ignores our Ctrl-C
                start_new_session=detached,
            )
        try:
            self._wait_until_serving(timeout)
        except StoreUnavailable:
            self.stop()
            raise
        if detached:
            record = PidRecord(pid=self._process.pid, uri=self.uri, data_dir=str(self.data_dir))
            self.pidfile.write_text(json.dumps(record.__dict__))

    def _wait_until_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise StoreUnavailable(
                    f"milvus-lite exited with code {self._process.returncode}: {self._log_tail()}"
                )
            try:
                wait_for_milvus(self.uri, timeout=min(1.0, max(0.0, deadline - time.monotonic())))
                return
            except StoreUnavailable:
                if time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        f"milvus-lite did not serve {self.uri} within {timeout:.0f} s: {self._log_tail()}"
                    ) from None

    def _log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return "(no log)"

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

    def __enter__(self) -> "MilvusLiteServer":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
