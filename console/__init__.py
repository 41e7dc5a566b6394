"""The web console's static files (HTML, JS, CSS; no build step), served at ``/console`` by
``serve.routes.console``. A package only so that an installed distribution carries them."""

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent
