"""``hermes-memory-provider install``: put the plugin directory Hermes Agent discovers in place.

Hermes Agent 0.19 finds memory providers only as directories, ``$HERMES_HOME/plugins/<name>/`` with an
``__init__.py`` and a ``plugin.yaml``; the code itself stays in this pip package, and the directory's
``__init__.py`` only forwards ``register(ctx)`` to it, so upgrading the package upgrades the provider.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from hermes_memory_provider.config import NAME

SHIM = '''"""Hermes Memory provider (a MemoryProvider for register_memory_provider), placed here by
`hermes-memory-provider install`; the code is the pip package hermes-memory-client."""

from hermes_memory_provider import register  # noqa: F401
'''

MANIFEST = f"""name: {NAME}
version: 0.1.0
description: "Hermes Memory: per-user bounded memory with frozen facts and a USER profile (self-hosted)."
requires_env:
  - HERMES_MEMORY_URL
  - HERMES_MEMORY_API_KEY
"""


def hermes_home() -> Path:
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except ImportError:  # installed outside Hermes Agent's environment
        return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


def install(home: Path, activate: bool = False) -> Path:
    """Write the plugin directory under ``home`` (and, with ``activate``, select it in config.yaml)."""
    target = home / "plugins" / NAME
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text(SHIM, encoding="utf-8")
    (target / "plugin.yaml").write_text(MANIFEST, encoding="utf-8")
    if activate:
        os.environ["HERMES_HOME"] = str(home)  # Hermes Agent's config functions read it
        from hermes_cli.config import load_config, save_config

        config = load_config()
        config.setdefault("memory", {})["provider"] = NAME
        save_config(config)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-memory-provider", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    setup = commands.add_parser("install", help="place the plugin directory under $HERMES_HOME/plugins/")
    setup.add_argument("--hermes-home", type=Path, default=None, help="default: Hermes Agent's home")
    setup.add_argument("--activate", action="store_true", help=f"also set memory.provider: {NAME}")
    args = parser.parse_args(argv)
    target = install(args.hermes_home or hermes_home(), activate=args.activate)
    print(f"installed {target}")
    print("next: `hermes memory setup` (choose hermes_memory),")
    print("  or set HERMES_MEMORY_URL and HERMES_MEMORY_API_KEY in Hermes Agent's .env")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
