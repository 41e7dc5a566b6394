"""The profile and the session context are plain domain code: importing them loads no store, application,
runtime or HTTP module, no API model and no SQL (docs/design.md#nothing-imports-upward). Checked in a fresh
interpreter, since this one imports them all."""

import subprocess
import sys

CORE_MODULES = ["actors.core.profile", "actors.core.context", "actors.core.records"]
FORBIDDEN = (
    "actors.store",
    "actors.app",
    "actors.runtime",
    "serve",
    "jobs",
    "cli",
    "localstack",
    "evaluation",
    "schemas.api",
    "sqlalchemy",
    "ray",
)


def test_profile_and_context_import_nothing_above_the_core():
    probe = (
        f"import sys; import {', '.join(CORE_MODULES)}; "
        f"print(sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r})))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
