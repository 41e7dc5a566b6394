"""schemas/ is the shared vocabulary below every layer: importing it loads nothing from actors or the doors
above (docs/design.md#nothing-imports-upward). Checked in a fresh interpreter, since this one imports them
all."""

import subprocess
import sys

SCHEMA_MODULES = ["schemas.api", "schemas.api_tenant", "schemas.enums", "schemas.ids", "schemas.settings"]
ABOVE = {"actors", "serve", "jobs", "cli", "localstack", "evaluation", "console"}


def test_schemas_import_nothing_from_the_layers_above():
    probe = (
        f"import sys; import {', '.join(SCHEMA_MODULES)}; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {ABOVE!r}))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
