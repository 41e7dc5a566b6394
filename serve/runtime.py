"""How Ray Serve itself runs the service: the Serve options of the thin path (issue 20, docs/benchmarks.md).

Ray Serve reads these from the environment of every Ray process (controller, replicas), once, at import,
so they must be in place before Ray starts: the local stack sets them before ``ray.init`` (a value already
in the environment wins, so each can be turned back); on a cluster, export them where ``ray start`` runs.

* **direct ingress** (``RAY_SERVE_ENABLE_DIRECT_INGRESS``): the ingress replica serves HTTP itself (its own
  uvicorn on the replica's event loop) instead of behind Serve's proxy actor. Behind the proxy, a request
  costs an HTTP parse in the proxy, a Ray call to the replica and a second call back to the proxy for the
  body; direct, none of them. Serve still starts its proxy on the head node (it refuses to serve HTTP
  without one) and gives each ingress replica a port from a range: the range is the service's one port,
  and the proxy takes a port of its own that nobody is told (``proxy_port``). One port means one ingress
  replica per node, which is what this app runs (``HermesMemory`` holds no user state; the hosts do).
* **user code on the replica's own loop** (``RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD=0``): Serve otherwise
  runs the app on a second event loop in a thread of its own, one more hand-off each way. The app never
  blocks its loop: SQL and the hosts are awaited (``asyncio.to_thread``, Ray calls).
* **no port quarantine** (``RAY_SERVE_PORT_QUARANTINE_S=0``): when an ingress replica dies, Serve holds its
  port out of the pool for 150 s by default, so that HAProxy workers still routing to it can drain (Serve's
  HAProxy mode, which this service does not run). With one port, that was 160 s without HTTP after any
  crash of the replica; without the quarantine its replacement binds the port as soon as it is up (issue
  35, docs/architecture.md#when-a-process-dies).
* **the port bound reusably** (``reusable_ingress_port``): the connections of a killed replica stay on its
  port for a minute (TIME_WAIT), and a replacement binding it plainly gets "address in use"; Serve then
  blocks that port and retries until the minute is over. Bound with ``SO_REUSEPORT``, as Serve binds its own
  proxy's port, the replacement takes it at once.
* **logs**: the per-request access line goes to Serve's log files only, in buffered writes, not to stderr as
  well (which Ray's log monitor would forward, line by line, to the driver).
"""

from __future__ import annotations

import os
from typing import Any

DIRECT_INGRESS = "RAY_SERVE_ENABLE_DIRECT_INGRESS"

# Ray Serve gives a starting proxy 5 s to answer its ready check, and kills it after three misses in a row.
# On two busy cores a proxy can take longer than 15 s to import and bind, so Serve killed a healthy proxy
# while the app was deploying. As for the thin path's variables below, an operator's own values win.
SERVE_PATIENCE = {
    "RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "60",
    "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S": "60",
}


def patient_serve_environment() -> None:
    """Before ``ray.init``: let Serve wait for a slow proxy on a loaded machine rather than kill it."""
    for name, value in SERVE_PATIENCE.items():
        os.environ.setdefault(name, value)



def serve_environment(http_port: int) -> dict[str, str]:
    """The Serve variables of the thin path, for a service answering HTTP on ``http_port``."""
    return {
        DIRECT_INGRESS: "1",
        # Serve allocates from range(min, max): exactly the service's port
        "RAY_SERVE_DIRECT_INGRESS_MIN_HTTP_PORT": str(http_port),
        "RAY_SERVE_DIRECT_INGRESS_MAX_HTTP_PORT": str(http_port + 1),
        "RAY_SERVE_PORT_QUARANTINE_S": "0",
        "RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD": "0",
        "RAY_SERVE_LOG_TO_STDERR": "0",
        "RAY_SERVE_REQUEST_PATH_LOG_BUFFER_SIZE": "1000",
    }


def apply_serve_environment(http_port: int) -> None:
    """Put the thin path's Serve variables in this process's environment (which the Ray it starts
    inherits), keeping any already set."""
    for name, value in serve_environment(http_port).items():
        os.environ.setdefault(name, value)


def reusable_ingress_port() -> None:
    """In an ingress replica, before Serve starts its HTTP server (the replica's constructor runs first):
    have Serve bind the service's port with ``SO_REUSEPORT``. Serve's replica passes
    ``enable_so_reuseport=False`` to its server starter; this wraps that starter (a private name of Serve:
    tests/unit/test_serve_runtime.py checks it is still there) to pass True. Idempotent."""
    from ray.serve._private import replica

    start = replica.start_asgi_http_server
    if getattr(start, "reuses_port", False):
        return

    async def start_reusing_port(*args: Any, **kwargs: Any) -> Any:
        return await start(*args, **{**kwargs, "enable_so_reuseport": True})

    start_reusing_port.reuses_port = True  # type: ignore[attr-defined]
    replica.start_asgi_http_server = start_reusing_port


def direct_ingress() -> bool:
    return os.environ.get(DIRECT_INGRESS) == "1"
