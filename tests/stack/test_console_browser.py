"""The web console (``console``, served at ``/console``) in a real headless browser: Debian's
``chromium`` driven by Playwright against the real stack. A wrong key sees nothing; with the tenant's key
an operator finds a user, reads tiers, badges and the profile, resolves an alert, unfreezes and refreezes a
fact with a reason, runs a recall, previews a session context, forgets a memory — and every step leaves
what it should in the audit trail. The key never appears in a URL.

Then each thing a person acts on: a frozen fact and the statement contradicting it side by side, accepted
(the audited unfreeze applies the statement) or rejected (the statement is forgotten), a reason required
either way; adding and editing a memory; "try a turn" (a preview that stores nothing, then stored on
request); the 390 px layout with nothing wider than the screen; the "no such user" page; and the API docs
with every request to another origin refused.

A screenshot of each page goes to ``$HERMES_CONSOLE_SCREENSHOTS`` (default: a pytest temporary
directory, printed). Missing browser or Playwright: skipped, except under ``CI=true`` where it fails.
"""

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import _require

pytestmark = [pytest.mark.stack, pytest.mark.slow]

CHROMIUM = "chromium"
WRONG_KEY = "hm_nobody_" + "0" * 48


def _missing_browser() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (pip install -e '.[test]')"
    if shutil.which(CHROMIUM) is None:
        return "Debian's chromium is not installed (apt-get install -y chromium)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator:
    _require(_missing_browser())
    from playwright.sync_api import expect, sync_playwright

    # an assertion waits as long as an action may (pages' default timeout, below): on a loaded machine a
    # user's first call activates their actor, and expect's own 5 s default failed the walkthrough once
    expect.set_options(timeout=60_000)
    with sync_playwright() as playwright:
        # Playwright cannot download its own browsers here: it drives the system's chromium
        launched = playwright.chromium.launch(executable_path=shutil.which(CHROMIUM))
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    chosen = os.environ.get("HERMES_CONSOLE_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("console-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"console screenshots: {folder}")
    return folder


class Console:
    """One browser tab on the console, recording what could leak the key and any script error."""

    def __init__(self, page, base: str, screenshots: Path):
        self.page = page
        self.base = base
        self.screenshots = screenshots
        self.urls: list[str] = []
        self.api_calls: list[dict[str, str]] = []
        self.errors: list[str] = []
        page.on("request", self._seen)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _seen(self, request) -> None:
        self.urls.append(request.url)
        if "/v1/" in request.url:
            self.api_calls.append(request.headers)

    def open(self, fragment: str = "") -> None:
        self.page.goto(f"{self.base}/console{fragment}")

    def sign_in(self, key: str) -> None:
        self.page.fill("#api-key", key)
        self.page.click("#login-form button[type=submit]")

    def shot(self, name: str) -> None:
        self.page.screenshot(path=self.screenshots / f"{name}.png", full_page=True)


@pytest.fixture
def console(browser, serve_app, screenshots) -> Iterator[Console]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)  # a first write activates a user's actor: slow on a loaded machine
    yield Console(page, serve_app, screenshots)
    context.close()


def say(http, key, user, session, *texts):
    turns = [{"text": t, "dialog_id": f"{session}-d{n}"} for n, t in enumerate(texts)]
    body = {"session_id": session, "turns": turns}
    response = http.post(f"/v1/users/{user}/turns", json=body, headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_wrong_key_sees_nothing(console, http, tenant_key):
    from playwright.sync_api import expect

    say(http, tenant_key, "mei", "s1", "Remember this: I keep bees")
    console.open("#/users/mei/memory")
    console.sign_in(WRONG_KEY)
    expect(console.page.locator("#login-error")).to_contain_text("refused")
    expect(console.page.locator("#login")).to_be_visible()
    expect(console.page.locator("#nav")).to_be_hidden()
    assert console.page.locator("#view").inner_text() == ""
    assert console.page.evaluate("sessionStorage.length") == 0
    assert "bees" not in console.page.content()
    console.shot("login-refused")


def test_console_walkthrough(console, http, tenant_key):
    from playwright.sync_api import expect

    page = console.page
    for session in ("s1", "s2"):
        said = ("I'm allergic to peanuts", "I live in Hangzhou", "我周末喜欢爬山")
        say(http, tenant_key, "mei", session, *said)
    alert = say(http, tenant_key, "mei", "s3", "I think I don't mind peanuts")["alerts"][0]
    say(http, tenant_key, "bob", "s1", "Remember this: my dog is called Rex", "I live in Oslo")

    console.open()
    console.sign_in(tenant_key)
    expect(page.locator(".user-row")).to_have_count(2)
    console.shot("users")
    page.fill("#user-search", "me")
    page.click("#user-search-run")
    expect(page.locator(".user-row")).to_have_count(1)
    page.click(".user-row a >> text=mei")

    # memory by tier: capacity bars from the tenant's policy, state badges, provenance
    expect(page.locator("#capacity .bar[data-label=core]")).to_contain_text("2 / 50")
    expect(page.locator("#capacity .bar[data-label=working]")).to_contain_text("/ 200")
    expect(page.locator(".memory-row[data-state=frozen]")).to_have_count(2)
    expect(page.locator(".memory-row[data-state=pending] .badge-pending")).to_have_count(1)
    expect(page.locator(".memory-row").first).to_contain_text("s3-d0")
    console.shot("memory")

    page.click(".tabs >> text=Profile")
    allergy = page.locator(".slot-card[data-slot='basic.allergy']")
    expect(allergy).to_contain_text("peanut")
    expect(allergy.locator(".badge-alert")).to_contain_text("contested")
    # a value shows in the user's words, the canonical key beside it
    sport = page.locator(".slot-card[data-slot='preference.sport']")
    expect(sport.locator(".conclusion strong.display")).to_have_text("爬山")
    expect(sport.locator(".conclusion .key")).to_have_text("hiking")
    console.shot("profile")

    # the open alert, rejected with a reason that lands in the allergy's audit trail
    page.click(".tabs >> text=Alerts")
    card = page.locator(f".alert-card[data-alert={alert['alert_id']}]")
    expect(card).to_contain_text("frozen_conflict")
    console.shot("alerts")
    card.locator("textarea[name=reason]").fill("the user was joking")
    card.locator("button[data-do=reject]").click()
    expect(page.locator("#alert-list")).to_contain_text("No open alerts")
    console.open(f"#/users/mei/item/{alert['memory_id']}")
    resolved = page.locator("#audit-trail .audit-row[data-action=resolve_alert]")
    expect(resolved).to_contain_text("the user was joking")

    # the audited unfreeze: reason and dialog id required; then frozen again with a reason
    page.click(".tabs >> text=Frozen")
    home = page.locator(".frozen-card", has_text="Hangzhou")
    home.locator("button[data-do=unfreeze]").click()
    form = home.locator("form[data-action=unfreeze]")
    form.locator("button[type=submit]").click()  # empty: the browser refuses to send it
    expect(form).to_be_visible()
    form.locator("input[name=reason]").fill("the user asked to review it")
    console.shot("unfreeze-form")
    form.locator("button[type=submit]").click()
    expect(form).to_be_visible()  # still no dialog id
    form.locator("input[name=dialog_id]").fill("s4-d0")
    form.locator("button[type=submit]").click()
    expect(page.locator(".notice")).to_contain_text("unfreeze: done")
    expect(page.locator(".frozen-card")).to_have_count(1)
    page.click(".tabs >> text=Memory")
    row = page.locator(".memory-row[data-state=unfrozen]")
    expect(row).to_have_count(1)
    row.locator("a.mono").click()
    item = page.locator("#item")
    unfreeze = page.locator("#audit-trail .audit-row[data-action=unfreeze]")
    expect(unfreeze).to_contain_text("the user asked to review it")
    expect(unfreeze).to_contain_text("s4-d0")
    item.locator("button[data-do=freeze]").click()
    item.locator("form[data-action=freeze] input[name=reason]").fill("confirmed by the user on the phone")
    item.locator("form[data-action=freeze] button[type=submit]").click()
    expect(page.locator("#item[data-state=frozen]")).to_be_visible()
    expect(page.locator("#audit-trail .audit-row[data-action=freeze]").first).to_contain_text("on the phone")
    console.shot("item-audit")

    # recall playground: every hit with its score breakdown as bars
    page.click(".tabs >> text=Recall")
    page.fill("#recall-query", "what should I avoid cooking?")
    page.click("#recall-run")
    top = page.locator(".hit").first
    expect(top).to_contain_text("peanut")
    expect(top.locator(".badge-route")).not_to_have_count(0)
    widths = top.locator(".score .fill").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    # the total, one bar per route that scored the hit, then relevance, time decay and importance
    assert len(widths) >= 5 and widths[0] > 0
    for bar in ("semantic", "relevance", "time_decay", "importance"):
        assert top.locator(f".fill.signal-{bar}").count() == 1
    assert top.locator(".contribution .seg").count() == 3
    console.shot("recall")

    # session context preview: the budget split drawn 35 / 40 / 20 / 5
    page.click(".tabs >> text=Session context")
    page.click("#session-run")
    segments = page.locator("#budget-split .budget-seg")
    expect(segments).to_have_count(4)
    widths = segments.evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    shares = [round(w / sum(widths), 2) for w in widths]
    assert shares == pytest.approx([0.35, 0.40, 0.20, 0.05], abs=0.01)
    expect(page.locator("#session-preview pre").first).to_contain_text("allergy: Peanut")
    console.shot("session")

    # forget one of bob's memories: gone from its page and from his list
    console.open("#/users/bob/memory")
    doomed = page.locator(".memory-row").first.get_attribute("data-memory")
    page.locator(f".memory-row[data-memory={doomed}] a.mono").click()
    page.locator("#item button[data-do=forget]").click()
    page.locator("form[data-action=forget] button[type=submit]").click()
    expect(page.locator("#item-gone")).to_be_visible()
    console.shot("forgotten")
    page.click(".tabs >> text=Memory")
    expect(page.locator("#memory-count")).to_contain_text("memories")
    expect(page.locator(f".memory-row[data-memory={doomed}]")).to_have_count(0)

    console.open("#/alerts")
    page.select_option("select[aria-label='alert status']", "all")
    expect(page.locator(".alert-card[data-status=resolved]")).to_have_count(1)
    console.shot("tenant-alerts")

    page.click("#logout")
    expect(page.locator("#login")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0

    assert console.errors == []
    assert not any(tenant_key in url for url in console.urls)
    assert console.api_calls and all(h.get("x-api-key") == tenant_key for h in console.api_calls)


def api_get(http, key, path):
    response = http.get(path, headers={"X-API-Key": key})
    return response.status_code, response.json()


def frozen_then_contradicted(http, key, user):
    """Peanuts frozen (said in two sessions), then contradicted: the alert and its two memories."""
    for session in ("s1", "s2"):
        say(http, key, user, session, "I'm allergic to peanuts")
    alert = say(http, key, user, "s3", "I think I don't mind peanuts")["alerts"][0]
    return alert, alert["memory_id"], alert["related_ids"][0]


def test_an_alert_accepted_and_another_rejected(console, http, tenant_key):
    from playwright.sync_api import expect

    page = console.page
    accepted, fact, statement = frozen_then_contradicted(http, tenant_key, "ivy")
    rejected, jon_fact, jon_statement = frozen_then_contradicted(http, tenant_key, "jon")
    console.open("#/users/ivy/alerts")
    console.sign_in(tenant_key)
    card = page.locator(f".alert-card[data-alert={accepted['alert_id']}]")
    # plain words, the two sides next to each other
    expect(card.locator(".side-frozen")).to_contain_text("allergic to peanuts")
    expect(card.locator(".side-challenger")).to_contain_text("I think I don't mind peanuts")
    expect(card).to_contain_text("contradicts a frozen fact")
    box = card.locator(".side-frozen").bounding_box(), card.locator(".side-challenger").bounding_box()
    assert box[0]["x"] < box[1]["x"] and abs(box[0]["y"] - box[1]["y"]) < 2  # side by side
    console.shot("alert-conflict")
    card.locator("button[data-do=accept]").click()  # no reason: refused, nothing changes
    expect(card.locator(".error")).to_contain_text("Give a reason")
    assert api_get(http, tenant_key, f"/v1/users/ivy/memories/{statement}")[0] == 200
    card.locator("textarea[name=reason]").fill("the allergy was outgrown, says the doctor")
    card.locator("button[data-do=accept]").click()
    expect(page.locator("#alert-list")).to_contain_text("No open alerts")
    _, detail = api_get(http, tenant_key, f"/v1/users/ivy/memories/{fact}")
    assert (
        detail["memory"]["state"] == "frozen"
        and detail["memory"]["content"] == "I think I don't mind peanuts"
    )
    unfreeze = [e for e in detail["audit"] if e["action"] == "unfreeze"]
    assert unfreeze and "outgrown" in unfreeze[0]["reason"] and unfreeze[0]["source_dialog_id"] == "s3-d0"
    assert api_get(http, tenant_key, f"/v1/users/ivy/memories/{statement}")[0] == 404
    _, alerts = api_get(http, tenant_key, "/v1/users/ivy/alerts?status=all")
    assert [a["status"] for a in alerts["alerts"] if a["alert_id"] == accepted["alert_id"]] == ["resolved"]

    console.open("#/users/jon/alerts")
    card = page.locator(f".alert-card[data-alert={rejected['alert_id']}]")
    card.locator("textarea[name=reason]").fill("a joke, the allergy stands")
    card.locator("button[data-do=reject]").click()
    expect(page.locator("#alert-list")).to_contain_text("No open alerts")
    _, detail = api_get(http, tenant_key, f"/v1/users/jon/memories/{jon_fact}")
    assert detail["memory"]["state"] == "frozen" and detail["memory"]["content"] == "I'm allergic to peanuts"
    assert any("a joke" in e["reason"] for e in detail["audit"] if e["action"] == "resolve_alert")
    assert api_get(http, tenant_key, f"/v1/users/jon/memories/{jon_statement}")[0] == 404
    assert console.errors == []


def test_add_edit_and_try_a_turn(console, http, tenant_key):
    from playwright.sync_api import expect

    page = console.page
    say(http, tenant_key, "kim", "s1", "I live in Lisbon")
    console.open("#/users/kim/write")
    console.sign_in(tenant_key)

    # try a turn: what would be kept, and nothing stored until asked
    page.fill("#try-text", "I have a cat named Tom")
    page.click("#try-run")
    expect(page.locator("#try-result .outcome-row[data-action=created]")).to_contain_text("cat named Tom")
    expect(page.locator("#try-result")).to_contain_text("nothing was stored")
    assert api_get(http, tenant_key, "/v1/users/kim/memories")[1]["total"] == 1
    console.shot("try-a-turn")
    page.click("#try-store")
    expect(page.locator("#try-result")).to_contain_text("Stored.")
    assert api_get(http, tenant_key, "/v1/users/kim/memories")[1]["total"] == 2

    # add a structured memory
    form = page.locator("#add-form")
    form.locator("textarea[name=content]").fill("I prefer green tea")
    form.locator("select[name=kind]").select_option("preference")
    form.locator("input[name=slot]").fill("preference.drink")
    form.locator("input[name=value]").fill("green tea")
    form.locator("#add-run").click()
    expect(page.locator("#add-result .outcome-row[data-action=created]")).to_be_visible()
    listed = api_get(http, tenant_key, "/v1/users/kim/memories")[1]["items"]
    tea = next(m for m in listed if m["content"] == "I prefer green tea")
    assert tea["slot"] == "preference.drink" and tea["value"] == "green tea"

    # edit it: a new statement through the gates, the old one forgotten with the reason
    console.open(f"#/users/kim/item/{tea['memory_id']}")
    page.click("#item button[data-do=edit]")
    edit = page.locator("form[data-action=edit]")
    expect(edit.locator("textarea[name=content]")).to_have_value("I prefer green tea")
    edit.locator("textarea[name=content]").fill("I prefer black tea")
    edit.locator("input[name=value]").fill("black tea")
    edit.locator("button[type=submit]").click()  # no reason: the browser refuses to send it
    expect(edit).to_be_visible()
    edit.locator("input[name=reason]").fill("the user switched")
    edit.locator("button[type=submit]").click()
    expect(page.locator("#item h2").first).to_have_text("I prefer black tea")
    console.shot("edited")
    listed = api_get(http, tenant_key, "/v1/users/kim/memories")[1]["items"]
    assert [m["value"] for m in listed if m["slot"] == "preference.drink"] == ["black tea"]
    assert api_get(http, tenant_key, f"/v1/users/kim/memories/{tea['memory_id']}")[0] == 404
    assert console.errors == []


def test_quality_figures_for_the_tenant_and_each_user(console, http, tenant_key, stack_settings):
    """Before a consolidation run the Quality page and a user's Quality tab say so plainly; after two runs
    they show the tenant's figures, each user's, when they were computed, and the reader's figures."""
    from playwright.sync_api import expect

    from jobs import consolidate

    page = console.page
    tenant = http.get("/v1/policy", headers={"X-API-Key": tenant_key}).json()["tenant_id"]
    for session in ("s1", "s2"):
        say(http, tenant_key, "ines", session, "I live in Porto", "我喜欢爬山")
    console.open("#/quality")
    console.sign_in(tenant_key)
    none_yet = page.locator("#no-quality-run")
    expect(none_yet).to_contain_text("No consolidation run has covered this tenant yet")
    console.open("#/users/ines/quality")
    expect(page.locator("#no-quality-run")).to_contain_text("No consolidation run has covered this user yet")
    console.shot("quality-none")

    consolidate.run(stack_settings, [tenant])
    run = consolidate.run(stack_settings, [tenant])
    page.click(".tabs >> text=Memory")
    page.click(".tabs >> text=Quality")
    expect(page.locator("#quality-run")).to_contain_text(run["run_id"])
    mine = page.locator("#user-quality")
    expect(mine.locator("tr[data-figure=profile_agreement] .figure")).to_have_text("100%")
    expect(mine.locator("tr[data-figure=profile_drift] .figure")).to_have_text("0%")
    expect(mine.locator("tr[data-figure=eviction_hit_rate] .figure")).to_have_text("–")  # nothing evicted
    console.shot("quality-user")

    page.click("#nav >> text=Quality")
    expect(page.locator("#quality-run")).to_contain_text(run["run_id"])
    expect(page.locator("#tenant-quality tr[data-figure=profile_agreement] .figure")).to_have_text("100%")
    expect(page.locator("#quality-users tr[data-user=ines]")).to_contain_text("100%")
    expect(page.locator("#quality-extraction")).to_contain_text("all slotted")
    console.shot("quality-tenant")
    page.click("#quality-users a >> text=ines")
    expect(page.locator("#user-quality")).to_be_visible()
    assert not console.errors


def test_narrow_screen_and_no_such_user(browser, serve_app, screenshots, http, tenant_key):
    from playwright.sync_api import expect

    frozen_then_contradicted(http, tenant_key, "lea")
    say(http, tenant_key, "lea", "s4", "Remember this: my dialog ids are long", "I live in Hangzhou")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(60_000)
    narrow = Console(page, serve_app, screenshots)
    narrow.open()
    narrow.sign_in(tenant_key)
    expect(page.locator(".user-row")).to_have_count(1)
    memory_id = api_get(http, tenant_key, "/v1/users/lea/memories")[1]["items"][0]["memory_id"]
    pages = {
        "users": ("", ".user-row"),
        "memory": ("#/users/lea/memory", ".memory-row"),
        "alerts": ("#/users/lea/alerts", ".side-challenger"),
        "profile": ("#/users/lea/profile", ".slot-card"),
        "recall": ("#/users/lea/recall", "#recall-query"),
        "write": ("#/users/lea/write", "#try-form"),
        "item": (f"#/users/lea/item/{memory_id}", "#audit-trail"),
        "tenant-alerts": ("#/alerts", ".alert-card"),
    }
    for name, (fragment, ready) in pages.items():
        narrow.open(fragment)
        expect(page.locator(ready).first).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{name} is {width} px wide at 390"
        narrow.shot(f"narrow-{name}")

    narrow.open("#/users/nobody-at-all/memory")
    expect(page.locator("#no-such-user")).to_contain_text("No such user")
    expect(page.locator("#no-such-user")).to_contain_text("nobody-at-all")
    expect(page.locator("#capacity")).to_have_count(0)
    narrow.shot("no-such-user")
    narrow.open("#/users/lea/memory")  # a known user is never shown as unknown
    expect(page.locator(".memory-row").first).to_be_visible()
    expect(page.locator("#no-such-user")).to_have_count(0)
    assert narrow.errors == []
    context.close()


def test_api_docs_work_offline(browser, serve_app, screenshots):
    from playwright.sync_api import expect

    context = browser.new_context()
    elsewhere: list[str] = []

    def only_this_origin(route):
        if route.request.url.startswith(serve_app):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", only_this_origin)
    page = context.new_page()
    page.goto(f"{serve_app}/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Hermes Memory")
    expect(page.locator(".opblock").first).to_be_visible()
    page.screenshot(path=screenshots / "docs-offline.png")
    assert elsewhere == []
    context.close()
