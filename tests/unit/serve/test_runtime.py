"""The Serve options of the thin path (``serve.runtime``): direct ingress on exactly the service's port, and
a value the operator already set is kept (so each option can be turned back)."""

import os

import pytest

from serve.runtime import DIRECT_INGRESS, apply_serve_environment, direct_ingress, serve_environment


@pytest.mark.parametrize("port", [1024, 8000, 43055, 65534])
def test_direct_ingress_ranges_over_the_one_service_port(port):
    env = serve_environment(port)
    # Serve hands out ports from range(min, max)
    allocated = range(
        int(env["RAY_SERVE_DIRECT_INGRESS_MIN_HTTP_PORT"]), int(env["RAY_SERVE_DIRECT_INGRESS_MAX_HTTP_PORT"])
    )
    assert list(allocated) == [port]
    assert env[DIRECT_INGRESS] == "1" and env["RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD"] == "0"


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
