"""The console's static files (``serve/routes/console.py``): only the files of ``console`` are served,
by name, with a Content-Security-Policy that admits scripts from this origin only; none is in the API spec."""

import re

import pytest
from fastapi.testclient import TestClient

from serve.app import create_fastapi_app

IMPORTED = re.compile(r'from "\./([a-z_]+\.js)";')


@pytest.fixture(scope="module")
def client():
    with TestClient(create_fastapi_app()) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("path", "media_type"),
    [("/console", "text/html"), ("/console/", "text/html"), ("/console/app.js", "text/javascript")],
)
def test_console_files_are_served_with_a_strict_policy(client, path, media_type):
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(media_type)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert response.headers["referrer-policy"] == "no-referrer"


def test_every_module_the_page_imports_is_served(client):
    page = client.get("/console").text
    assert 'src="/console/app.js"' in page and 'href="/console/console.css"' in page
    pending, seen = ["app.js"], set()
    while pending:
        name = pending.pop()
        seen.add(name)
        response = client.get(f"/console/{name}")
        assert response.status_code == 200, name
        pending += [m for m in IMPORTED.findall(response.text) if m not in seen]
    assert {"api.js", "dom.js", "recall.js", "session.js"} <= seen


@pytest.mark.parametrize(
    "path", ["/console/missing.js", "/console/..%2Fapp.py", "/console/%2e%2e/routes/console.py"]
)
def test_nothing_outside_the_console_folder_is_served(client, path):
    assert client.get(path).status_code == 404


def test_the_console_is_not_part_of_the_api_spec(client):
    assert not any(path.startswith("/console") for path in client.get("/openapi.json").json()["paths"])
