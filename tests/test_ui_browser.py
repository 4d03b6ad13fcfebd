"""The viewer in a real browser (Playwright driving the machine's Chromium, headless): click through
sessions → session → subagent → back, search and jump to a hit, filter, promote and forget memories,
charts drawn with data, live update after an index run, and XSS payloads that stay text. Screenshots
go to build/screenshots/ (and docs/img/ with UPDATE_DOCS_IMG=1)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ui_fixture
from fixtures.make import Session, slug, uid
from playwright.sync_api import Browser, Page, expect, sync_playwright
from ui_server import chromium_path, screenshot_paths

from hooks.events import log_event
from index.store import run_index
from total_recall.ui.export import session_html
from total_recall.ui.server import background as serve

CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (scripts/test.sh installs it)")

# Counts script elements added once the page is parsed (the parser's own are inventoried by _no_xss).
WATCH = """
window.__added = 0;
new MutationObserver(ms => ms.forEach(m => m.addedNodes.forEach(n => {
  if (document.readyState === 'loading') return;
  if (n.nodeName === 'SCRIPT' || (n.querySelector && n.querySelector('script'))) window.__added++;
}))).observe(document, {childList: true, subtree: true});
"""
OUR_SCRIPTS = ("/static/chart.umd.min.js", "/static/app.js")


@dataclass
class Site:
    url: str
    corpus: ui_fixture.UiCorpus
    db: Path


def _index(tmp: Path) -> tuple[ui_fixture.UiCorpus, Path]:
    corpus = ui_fixture.build(tmp)
    db = tmp / "index.db"
    assert run_index(db, [corpus.root], jobs=1).errors == []
    for i, ms in enumerate((12.0, 30.5, 18.2, 95.0)):
        log_event(
            db.parent, {"event": "hook", "hook": "session-start" if i % 2 else "prompt", "latency_ms": ms}
        )
    return corpus, db


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    corpus, db = _index(tmp_path_factory.mktemp("ui"))
    with serve(db) as url:
        yield Site(url, corpus, db)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    ctx = browser.new_context(viewport={"width": 1360, "height": 900})
    pg = ctx.new_page()
    dialogs: list[str] = []
    errors: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.add_init_script(WATCH)
    yield pg
    ctx.close()
    assert dialogs == [], f"a dialog fired: {dialogs}"
    assert errors == [], f"script errors on the page: {errors}"


def shot(page: Page, name: str, docs: bool = True) -> None:
    for path in screenshot_paths(name, docs):
        page.screenshot(path=str(path), full_page=False)


def test_sessions_session_subagent_and_back(site: Site, page: Page) -> None:
    page.goto(site.url + "/")
    rows = page.locator("tr.session-row")
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text("title <script>")  # newest first: the beta session is a day later
    shot(page, "sessions")
    page.get_by_role("link", name="Fix the flaky login test").click()
    expect(page.locator("#session-title")).to_have_text("Fix the flaky login test")
    shot(page, "session")
    abandoned = page.locator(".msg.abandoned")
    expect(abandoned).to_have_count(2)  # the rewound prompt and its answer
    expect(abandoned.nth(0)).to_contain_text("raise the timeout to 30 seconds")
    expect(abandoned.nth(1)).to_contain_text("Raised the login timeout")
    expect(page.locator(".marker.compaction")).to_have_count(1)
    expect(page.locator(".md pre.hl")).to_have_count(1)  # the fenced Python block, highlighted
    expect(page.locator("#resume")).to_contain_text(f"claude --resume {site.corpus.main}")
    task = page.locator("details.tool:has(> summary .tag.agent)")
    task.locator("> summary").click()
    expect(task.locator("section.agent")).to_contain_text("login_timeout = 5")
    shot(page, "session-subagent", docs=False)
    task.locator("a.open-agent").click()
    expect(page.locator("#agent-title")).to_contain_text("Find timeout")
    expect(page.locator(".msg.user")).to_contain_text(site.corpus.agent_prompt)
    shot(page, "subagent", docs=False)
    page.go_back()
    expect(page.locator("#session-title")).to_have_text("Fix the flaky login test")


def test_search_and_jump_to_the_hit(site: Site, page: Page) -> None:
    page.goto(site.url + "/search")
    page.fill("#q", "configurable env var")
    page.press("#q", "Enter")
    hits = page.locator("li.hit")
    expect(hits.first).to_be_visible()
    expect(hits.first.locator("mark").first).to_be_visible()
    shot(page, "search")
    href = hits.first.locator("a.jump").get_attribute("href") or ""
    hits.first.locator("a.jump").click()
    anchor = href.split("#", 1)[1]
    target = page.locator(f"#{anchor}")
    expect(target).to_have_class(re.compile(r"\bjumped\b"))
    expect(target).to_be_in_viewport()


def test_filters_narrow_the_list(site: Site, page: Page) -> None:
    page.goto(site.url + "/")
    beta = page.locator("#f-project option", has_text="script").get_attribute("value")
    page.select_option("#f-project", value=beta)  # auto-submits
    expect(page).to_have_url(re.compile(r"project="))
    expect(page.locator("tr.session-row")).to_have_count(1)
    page.goto(site.url + "/")
    page.check("input[name=errors]")
    expect(page.locator("tr.session-row")).to_have_count(1)
    expect(page.locator("tr.session-row")).to_contain_text("Fix the flaky login test")


def test_usage_charts_have_data(site: Site, page: Page) -> None:
    page.goto(site.url + "/usage")
    canvases = page.locator("canvas.chart[data-points]")
    expect(canvases).to_have_count(5)
    points = page.evaluate(
        "[...document.querySelectorAll('canvas.chart')].map(c => Chart.getChart(c).data.datasets"
        ".reduce((n, d) => n + d.data.filter(v => v > 0).length, 0))"
    )
    assert all(n > 0 for n in points), points
    expect(page.locator("#hooks")).to_contain_text("session-start")
    shot(page, "usage")


def test_promote_and_forget_change_the_memory_page(browser: Browser, tmp_path: Path) -> None:
    _corpus, db = _index(tmp_path)
    with serve(db) as url:
        pg = browser.new_page(viewport={"width": 1360, "height": 900})
        pg.goto(url + "/memory")
        promoted = pg.locator("#promoted li.item")
        expect(promoted).to_have_count(0)
        corr = pg.locator("#corrections li.item").first
        text = corr.locator(".content").inner_text()
        corr.locator("select[name=kind]").select_option("standing_decision")
        corr.locator("button.promote").click()
        expect(pg.locator("#done")).to_contain_text("promoted to standing_decision")
        expect(pg.locator("#promoted li.item")).to_contain_text(text)
        expect(pg.locator("#decisions")).to_contain_text(text)
        shot(pg, "memory")
        bans = pg.locator("#bans li.item")
        expect(bans).to_have_count(1)
        bans.first.locator("button.forget").click()
        expect(pg.locator("#done")).to_contain_text("forgot ban")
        expect(pg.locator("#bans li.item")).to_have_count(0)
        pg.close()


def test_mark_an_item_wrong_and_see_why(browser: Browser, tmp_path: Path) -> None:
    _corpus, db = _index(tmp_path)
    with serve(db) as url:
        pg = browser.new_page()
        pg.goto(url + "/memory")
        item = pg.locator("#decisions li.item").first
        expect(item.locator(".badge-wrong")).to_have_count(0)
        item_id = item.locator("a.mid").inner_text()
        item.locator("button.wrong").click()
        expect(pg.locator("#done")).to_contain_text(f"{item_id} will not be injected again")
        item = pg.locator("#decisions li.item").first
        expect(item.locator(".badge-wrong")).to_have_text("marked wrong")
        expect(item.locator("button.wrong")).to_have_count(0)
        item.locator("a.mid").click()
        expect(pg.locator("h1")).to_contain_text(item_id)
        expect(pg.locator(".why-feedback")).to_contain_text("wrong")
        pg.close()


def test_forget_a_session_needs_confirmation(browser: Browser, tmp_path: Path) -> None:
    corpus, db = _index(tmp_path)
    with serve(db) as url:
        pg = browser.new_page()
        pg.goto(f"{url}/session/{corpus.older}")
        pg.get_by_role("link", name="forget this session…").click()
        pg.click("#forget-session")  # box not ticked: refused
        expect(pg.locator(".error")).to_contain_text("confirmation")
        pg.go_back()
        pg.check("#confirm")
        pg.click("#forget-session")
        expect(pg.locator("tr.session-row")).to_have_count(2)
        expect(pg.locator("#sessions")).not_to_contain_text("Release checklist")
        pg.close()


def test_live_update_after_an_index_run(browser: Browser, tmp_path: Path) -> None:
    corpus, db = _index(tmp_path)
    with serve(db) as url:
        pg = browser.new_page()
        pg.goto(url + "/")
        expect(pg.locator("tr.session-row")).to_have_count(3)
        pg.wait_for_timeout(2500)  # the first poll takes the stamp
        cwd = "/home/dev/projects/alpha"
        s = Session(uid("ui-live"), cwd=cwd)
        s.prompt("a brand new session arrives")
        s.response(text="indexed while the page was open")
        s.summary(s.last or "", "Arrived while watching")
        s.write(corpus.root / slug(cwd) / f"{uid('ui-live')}.jsonl")
        assert run_index(db, [corpus.root], jobs=1).errors == []
        expect(pg.locator("tr.session-row")).to_have_count(4, timeout=10_000)
        expect(pg.locator("#sessions")).to_contain_text("Arrived while watching")
        pg.close()


def _no_xss(page: Page, inline: int = 0) -> None:
    """No payload ran, no script element but the viewer's own exists or was added, no live link or image."""
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__added") == 0
    scripts = page.evaluate("[...document.scripts].map(s => [s.src, s.type, s.textContent.length])")
    ours = [s for s in scripts if s[0] and s[0].endswith(OUR_SCRIPTS)]
    data = [s for s in scripts if s[1] == "application/json"]
    assert len(scripts) - len(ours) - len(data) == inline, scripts
    assert page.locator("a[href^='javascript:']").count() == 0
    assert page.locator("img").count() == 0


def test_xss_payloads_render_as_text(site: Site, page: Page, tmp_path: Path) -> None:
    sid = site.corpus.xss
    page.goto(f"{site.url}/session/{sid}")
    for d in page.locator("details").all():
        d.evaluate("d => d.open = true")
    expect(page.locator("#session-title")).to_contain_text(ui_fixture.XSS_SCRIPT)
    expect(page.locator(".meta")).to_contain_text(ui_fixture.XSS_CWD)
    expect(page.locator(".msg.user")).to_contain_text(ui_fixture.XSS_IMG)
    expect(page.locator(".result").first).to_contain_text("javascript:window.__pwned=5")
    _no_xss(page)
    shot(page, "xss", docs=False)
    for path in ("/", "/memory", "/search?q=pwned+render", f"/session/{sid}/agent/none"):
        page.goto(site.url + path)
        _no_xss(page)
    from index.store import open_reader

    out = tmp_path / "export.html"
    out.write_text(session_html(open_reader(site.db), sid) or "")
    page.goto(out.as_uri())
    _no_xss(page)
    expect(page.locator("#session-title")).to_contain_text(ui_fixture.XSS_SCRIPT)


@pytest.mark.corpus
def test_every_page_on_the_shared_corpus(corpus_db: Path, browser: Browser) -> None:
    with serve(corpus_db) as url:
        pg = browser.new_page(viewport={"width": 1360, "height": 900})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url + "/")
        first = pg.locator("tr.session-row a.title").first
        expect(first).to_be_visible()
        first.click()
        expect(pg.locator("#thread")).to_be_visible()
        agent_links = pg.locator("a.open-agent")
        if agent_links.count():
            agent_links.first.evaluate("a => a.click()")
            expect(pg.locator("#agent-title")).to_be_visible()
            pg.go_back()
        for path in ("/search?q=test", "/memory", "/usage"):
            resp: Any = pg.goto(url + path)
            assert resp is not None and resp.status == 200, path
        shot(pg, "corpus-usage", docs=False)
        assert errors == []
        pg.close()
