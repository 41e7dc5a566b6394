"""The web console at ``/console``: static HTML, JS and CSS from ``console/`` (no build step). It is a
client of the HTTP API like any other; it holds the tenant API key in the browser tab only.

Only the files present in that directory are served, looked up by name (no path is ever joined from the
request). A strict Content-Security-Policy allows scripts, styles and requests from this origin only, so
text that users wrote, shown by the console, cannot run as script.
"""

from fastapi import APIRouter
from fastapi.responses import FileResponse
from starlette.exceptions import HTTPException

from console import ASSETS_DIR

MEDIA_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
}
ASSETS = {p.name: p for p in sorted(ASSETS_DIR.iterdir()) if p.suffix in MEDIA_TYPES}
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


def _file(name: str) -> FileResponse:
    path = ASSETS.get(name)
    if path is None:
        raise HTTPException(404, "Not Found")
    return FileResponse(path, media_type=MEDIA_TYPES[path.suffix], headers=HEADERS)


@router.get("/console")
@router.get("/console/")
async def console_page() -> FileResponse:
    return _file("index.html")


@router.get("/console/{name}")
async def console_asset(name: str) -> FileResponse:
    return _file(name)
