"""Regenerate ``infra/serve_config.yaml`` from the app with ``serve build`` and embed it in the KubeRay
``RayService`` (``infra/k8s/rayservice.yaml``, the ``serveConfigV2`` block), so the two never drift apart.

    python infra/sync_serve_config.py           # rewrite both files
    python infra/sync_serve_config.py --check   # exit 1 if either file is out of date (writes nothing)

``serve build`` names applications ``app1``, ``app2``...; ours is renamed ``hermes`` (what ``hermes-memory
up`` deploys). Run from the repository root with the project installed.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

INFRA = Path(__file__).resolve().parent
SERVE_CONFIG = INFRA / "serve_config.yaml"
RAYSERVICE = INFRA / "k8s" / "rayservice.yaml"
IMPORT_PATH = "serve.app:app"
APP_NAME = "hermes"
BLOCK_KEY = "  serveConfigV2: |"


def build_serve_config() -> str:
    serve_cli = Path(sys.executable).with_name("serve")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "serve_config.yaml"
        subprocess.run(
            [str(serve_cli), "build", IMPORT_PATH, "-o", str(out)],
            cwd=INFRA.parent,
            check=True,
            capture_output=True,
        )
        text = out.read_text()
    generated = "- name: app1\n"
    if generated not in text:
        raise SystemExit(f"serve build output has no {generated.strip()!r}; update {Path(__file__).name}")
    return text.replace(generated, f"- name: {APP_NAME}\n", 1)


def embed(serve_config: str, manifest: str) -> str:
    """Replace the body of the ``serveConfigV2: |`` literal block: every line indented deeper than the key."""
    lines = manifest.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == BLOCK_KEY), None)
    if start is None:
        raise SystemExit(f"{RAYSERVICE} has no line {BLOCK_KEY!r}")
    end = start + 1
    while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
        end += 1
    body = [f"    {line}" if line.strip() else "\n" for line in serve_config.splitlines(keepends=True)]
    return "".join(lines[: start + 1] + body + ["\n"] + lines[end:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    args = parser.parse_args()
    serve_config = build_serve_config()
    manifest = embed(serve_config, RAYSERVICE.read_text())
    wanted = {SERVE_CONFIG: serve_config, RAYSERVICE: manifest}
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"out of date: {path.relative_to(INFRA.parent)} (run `make infra`)")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(INFRA.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
