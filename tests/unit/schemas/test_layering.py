"""schemas/ is the shared vocabulary below every layer: importing it loads nothing from actors, serve or jobs
(docs/design.md#nothing-imports-upward). Checked in a fresh interpreter, since this one imports them all."""

import subprocess
import sys

SCHEMA_MODULES = ["schemas.api", "schemas.api_tenant", "schemas.enums", "schemas.ids", "schemas.settings"]


def test_schemas_import_nothing_from_the_layers_above():
    probe = (
        f"import sys; import {', '.join(SCHEMA_MODULES)}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'actors', 'serve', 'jobs'}))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
