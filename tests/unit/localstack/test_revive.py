"""``up`` restarts its Milvus server when it dies (``LocalStack.revive``, called twice a second while the
stack serves): the real milvus-lite server, SIGKILLed, serves the same data dir on the same port again."""

import os
import signal

import pytest

from localstack.milvus import MilvusLiteServer, wait_for_milvus
from localstack.stack import LocalStack
from schemas.settings import HermesSettings

pytestmark = [pytest.mark.stack, pytest.mark.slow]


def test_a_killed_milvus_server_is_restarted_on_its_port(tmp_path):
    pytest.importorskip("milvus_lite")
    stack = LocalStack(HermesSettings(home=tmp_path))
    server = MilvusLiteServer(tmp_path / "milvus")
    server.start(timeout=120, detached=True)
    stack._milvus = server  # what _start_milvus sets; the rest of the stack is not needed here
    try:
        stack.revive()  # alive: left alone
        first = server._process.pid
        os.kill(first, signal.SIGKILL)
        server._process.wait()
        stack.revive()
        assert server.is_running() and server._process.pid != first
        wait_for_milvus(server.uri, timeout=60)
    finally:
        server.stop()
