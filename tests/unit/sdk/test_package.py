"""The SDK's own distribution (``sdk/pyproject.toml``) lists the service's modules it ships one by one: the
client must import nothing else of the repository, or ``pip install ./sdk`` builds a client that cannot be
imported."""

import subprocess
import sys
import tomllib
from pathlib import Path

SDK = Path(__file__).resolve().parents[3] / "sdk"
OURS = ("actors", "serve", "jobs", "schemas", "sdk")


def test_the_client_imports_only_the_modules_the_sdk_package_ships():
    listing = (
        "import sys, sdk.client; "
        f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {OURS!r})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", listing], cwd=SDK.parent, check=True, capture_output=True, text=True
    ).stdout.split()
    setuptools = tomllib.loads((SDK / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = set(setuptools["py-modules"]) | {"sdk.client"}
    # package roots the imports pass through (``schemas`` is a namespace package in the SDK's install)
    assert set(loaded) - {"schemas", "sdk"} == shipped
    assert "sdk" in setuptools["packages"]
