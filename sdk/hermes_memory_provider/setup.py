"""``hermes memory setup`` for Hermes Memory: ask for the URL and the tenant key, try them against the
service before anything is saved, then write the key to ``$HERMES_HOME/.env`` (mode 600), the other
settings to ``$HERMES_HOME/hermes_memory.json``, and select the provider.

Hermes Agent calls the provider's ``post_setup(hermes_home, config)``, which runs ``run_setup`` with the
terminal's prompts; the prompts are parameters so the flow can be driven without a terminal.
"""

from __future__ import annotations

import getpass
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .config import (
    ENV_FILE,
    ENV_PREFIX,
    ProviderSettings,
    check_connection,
)

DEFAULT_URL = "http://127.0.0.1:8000"
ATTEMPTS = 3
Ask = Callable[[str], str]


def run_setup(
    hermes_home: str | os.PathLike[str],
    ask: Ask = input,
    ask_secret: Ask = getpass.getpass,
    say: Callable[[str], None] = print,
) -> bool:
    """Ask, check, save; True when the URL and key work and were saved. Up to ``ATTEMPTS`` tries; nothing
    is saved when none of them works."""
    home = Path(hermes_home)
    current = ProviderSettings.load(home)
    url, api_key = current.url or DEFAULT_URL, current.api_key
    for _ in range(ATTEMPTS):
        url = ask(f"  Hermes Memory URL [{url}]: ").strip() or url
        shown = f"...{api_key[-4:]}" if len(api_key) > 4 else "not set"
        api_key = ask_secret(f"  Tenant API key (current: {shown}, blank to keep): ").strip() or api_key
        if not api_key:
            say("  A tenant API key is needed (`hermes-memory tenant create NAME` prints one).")
            continue
        ok, message = check_connection(url, api_key, timeout=current.timeout)
        say(f"  {'ok' if ok else 'not working'}: {message}")
        if ok:
            ProviderSettings.save({"url": url, "prefetch_budget_ms": current.prefetch_budget_ms}, str(home))
            write_env(home / ENV_FILE, {ENV_PREFIX + "URL": url, ENV_PREFIX + "API_KEY": api_key})
            say(f"  saved: URL and key in {home / ENV_FILE}, settings in {home / 'hermes_memory.json'}")
            return True
    say("  nothing saved; run `hermes memory setup` again once the service answers")
    return False


def write_env(path: Path, values: dict[str, str]) -> None:
    """Set these ``KEY=value`` lines in a dotenv file, keeping every other line; the file is mode 600."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    kept = [line for line in lines if line.split("=", 1)[0].strip().removeprefix("export ") not in values]
    kept.extend(f"{key}={value}" for key, value in values.items())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=stat.S_IRUSR | stat.S_IWUSR, exist_ok=True)
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)  # before the key is written into it
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
