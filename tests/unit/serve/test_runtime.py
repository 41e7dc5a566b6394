"""The Serve options of the thin path (``serve.runtime``): direct ingress on exactly the service's port, no
quarantine of that port after a crash, the port bound reusably, and a value the operator already set is kept
(so each option can be turned back)."""

import asyncio
import inspect
import os
import socket

import pytest
from ray.serve._private import http_util, replica

from serve.runtime import (
    DIRECT_INGRESS,
    apply_serve_environment,
    direct_ingress,
    reusable_ingress_port,
    serve_environment,
)


@pytest.mark.parametrize("port", [1024, 8000, 43055, 65534])
def test_direct_ingress_ranges_over_the_one_service_port(port):
    env = serve_environment(port)
    # Serve hands out ports from range(min, max)
    allocated = range(
        int(env["RAY_SERVE_DIRECT_INGRESS_MIN_HTTP_PORT"]), int(env["RAY_SERVE_DIRECT_INGRESS_MAX_HTTP_PORT"])
    )
    assert list(allocated) == [port]
    assert env[DIRECT_INGRESS] == "1" and env["RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD"] == "0"
    # a crashed replica's one port goes straight back to its replacement
    assert env["RAY_SERVE_PORT_QUARANTINE_S"] == "0"


def test_applying_keeps_what_the_environment_already_says(monkeypatch):
    for name in serve_environment(8000):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(DIRECT_INGRESS, "0")
    apply_serve_environment(8000)
    assert not direct_ingress()  # the operator's choice stands
    assert os.environ["RAY_SERVE_LOG_TO_STDERR"] == "0"  # the others were filled in
    monkeypatch.delenv(DIRECT_INGRESS)
    apply_serve_environment(8000)
    assert direct_ingress()


def test_the_replica_binds_its_port_reusably(monkeypatch):
    calls = []

    async def serve_starter(app, http_options, *, event_loop, enable_so_reuseport=False):
        calls.append(enable_so_reuseport)

    monkeypatch.setattr(replica, "start_asgi_http_server", serve_starter)
    reusable_ingress_port()
    reusable_ingress_port()  # a second replica constructor in the process wraps nothing twice
    asyncio.run(replica.start_asgi_http_server(None, None, event_loop=None, enable_so_reuseport=False))
    assert calls == [True]


def test_serve_still_has_the_starter_and_option_that_are_wrapped():
    """The wrapped name is private to Serve: an upgrade that moves it must fail here, not in production."""
    assert "enable_so_reuseport" in inspect.signature(http_util.start_asgi_http_server).parameters
    assert replica.start_asgi_http_server.__module__ in {http_util.__name__, "serve.runtime"}


def _listener(reuse: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if reuse:
        http_util.set_socket_reuse_port(sock)
    return sock


def test_a_reusable_port_is_bound_again_while_the_dead_servers_connections_linger():
    """Why the option: a server's closed connections stay on its port (TIME_WAIT); a plain bind of that port
    then fails, a bind with the option succeeds (when the dead server had it too, as every replica here)."""
    server = _listener(reuse=True)
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.listen()
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server closes first, as the kernel does for a killed one: TIME_WAIT on its side
    client.close()
    server.close()
    plain = _listener(reuse=False)
    with pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))
    plain.close()
    replacement = _listener(reuse=True)
    replacement.bind(("127.0.0.1", port))
    replacement.close()
