"""The viewer without a browser (Starlette's TestClient) and its HTML exports: pages answer from the index
APIs, transcript text is escaped, Markdown passes no raw HTML or unsafe link, only loopback hosts (or a
token) are served, memory actions need the CSRF token, and the exports are self-contained."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
import ui_fixture
from click.testing import CliRunner
from starlette.testclient import TestClient

from index.retrieval import SessionFilter, list_sessions, session_thread
from index.store import open_reader, run_index
from lib.settings import Settings
from total_recall.cli import cli
from total_recall.cmd_ui import is_loopback
from total_recall.ui.app import Config, create_app
from total_recall.ui.render import mark, markdown, safe_url

BASE = "http://127.0.0.1:8765"


@pytest.fixture
def built(tmp_path: Path) -> tuple[ui_fixture.UiCorpus, Path]:
    corpus = ui_fixture.build(tmp_path)
    db = tmp_path / "index.db"
    assert run_index(db, [corpus.root], jobs=1).errors == []
    return corpus, db


def client(db: Path, **kw: object) -> TestClient:
    return TestClient(create_app(Config(db=db, **kw)), base_url=BASE)  # type: ignore[arg-type]


def test_markdown_keeps_text_and_drops_raw_html_and_unsafe_links() -> None:
    html = str(markdown("**bold** <script>alert(1)</script> [x](javascript:alert(1)) ![i](http://a/b.png)"))
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html and "<img" not in html
    link = str(markdown("[docs](https://example.org/a)"))
    assert 'href="https://example.org/a"' in link and 'rel="noopener noreferrer nofollow"' in link
    code = str(markdown("```python\nx = '<b>'\n```"))
    assert '<pre class="hl">' in code and "&lt;b&gt;" in code and "<b>" not in code


@pytest.mark.parametrize(
    "url, ok",
    [
        ("https://example.org", True),
        ("http://127.0.0.1:8765/x", True),
        ("javascript:alert(1)", False),
        ("JAVASCRIPT:alert(1)", False),
        ("data:text/html,<b>", False),
        ("/session/x", False),
        ("vbscript:x", False),
    ],
)
def test_only_web_links_survive(url: str, ok: bool) -> None:
    assert safe_url(url) is ok


def test_search_snippets_mark_words_and_escape_the_rest() -> None:
    got = str(mark("a <b>[login]</b> [x] timeout [logins]", "login"))
    assert got == "a &lt;b&gt;<mark>login</mark>&lt;/b&gt; [x] timeout <mark>logins</mark>"
    assert str(mark("[<script>]", "script")) == "[&lt;script&gt;]"  # never unescaped, even when marked


def test_every_page_answers_and_escapes_transcript_text(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    corpus, db = built
    c = client(db)
    for path in (
        "/",
        f"/session/{corpus.main}",
        f"/session/{corpus.main}/agent/{corpus.agent_id}",
        f"/session/{corpus.xss}",
        "/search?q=login+timeout",
        "/search?q=timeout&by=session",
        "/memory",
        "/usage?by=week&since=3650d",
    ):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "<script>window" not in r.text and "<img src=x" not in r.text, path
        assert "content-security-policy" in r.headers
    page = c.get(f"/session/{corpus.xss}").text
    assert 'href="javascript' not in page and 'onerror="window' not in page
    assert c.get("/session/nope").status_code == 404
    assert c.get(f"/session/{corpus.main}/agent/nope").status_code == 404
    assert c.get(f"/session/{corpus.main}/export.exe").status_code == 404


def test_session_thread_nests_results_and_subagents(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    corpus, db = built
    t = session_thread(open_reader(db), corpus.main)
    assert t is not None
    calls = [m for m in t["messages"] if m["kind"] == "tool_use"]
    task = next(m for m in calls if m["tool_name"] == "Task")
    assert task["agent"]["agent_id"] == corpus.agent_id
    assert task["agent"]["messages"][0]["text"] == corpus.agent_prompt
    assert task["result"]["text"].startswith("The timeout lives")
    assert not any(m["kind"] == "tool_result" for m in t["messages"])  # each folded under its call
    assert t["compactions"] == 1 and t["abandoned"] == 2 and t["unlinked_agents"] == []
    older = session_thread(open_reader(db), corpus.older)
    assert older is not None  # a result whose call was never stored is still shown, on its own
    assert [m["text"] for m in older["messages"] if m["kind"] == "tool_result"] == [
        "output of a call not stored"
    ]


def test_session_list_filters(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    corpus, db = built
    conn = open_reader(db)

    def ids(**kw: object) -> list[str]:
        return [r["session_id"] for r in list_sessions(conn, SessionFilter(**kw))["rows"]]  # type: ignore[arg-type]

    assert ids() == [corpus.xss, corpus.main, corpus.older]  # newest first
    assert ids(has_errors=True) == [corpus.main]
    assert ids(text="release checklist") == [corpus.older]
    assert ids(until="2026-01-09") == [corpus.older]
    assert ids(since="2026-01-11") == [corpus.xss]
    assert ids(project="/home/dev/projects/alpha") == [corpus.main, corpus.older]
    assert ids(model="nonexistent-model") == []
    assert ids(text="the of and") == []  # only stopwords: nothing to match, not everything
    page = list_sessions(conn, SessionFilter(), page=2, per_page=2)
    assert [r["session_id"] for r in page["rows"]] == [corpus.older] and page["pages"] == 2


def test_other_hosts_and_missing_tokens_are_refused(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    _, db = built
    c = client(db)
    assert c.get("/", headers={"host": "evil.example:8765"}).status_code == 403  # DNS rebinding
    assert c.get("/", headers={"host": "localhost:8765"}).status_code == 200
    t = client(db, host="0.0.0.0", token="s3cret")
    assert t.get("/").status_code == 401
    assert t.get("/?token=wrong").status_code == 401
    ok = t.get("/?token=s3cret")
    assert ok.status_code == 200 and "tr_token=s3cret" in ok.headers["set-cookie"]
    assert t.get("/usage").status_code == 200  # the cookie carries it from now on


def test_cli_refuses_a_public_interface_without_a_token(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    _, db = built
    r = CliRunner().invoke(
        cli, ["--db", str(db), "ui", "--host", "0.0.0.0"], env={"TOTAL_RECALL_UI_TOKEN": ""}
    )
    assert r.exit_code != 0 and "refusing to serve" in r.output
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert Settings.from_env({"TOTAL_RECALL_UI_TOKEN": "t"}).ui_token == "t"
    assert Settings.from_env({}).ui_token is None


def _csrf(html: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, "no CSRF token on the page"
    return m.group(1)


def test_memory_actions_need_the_csrf_token(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    _, db = built
    c = client(db)
    page = c.get("/memory").text
    ban = re.search(
        r'name="extraction_id" value="(\d+)">\s*<input type="hidden" name="back"[^>]*>\s*'
        r'<button type="submit" class="small forget" data-section="bans"',
        page,
    )
    assert ban, "no ban to forget on the memory page"
    form = {"extraction_id": ban.group(1), "back": "/memory"}
    assert c.post("/act/forget-item", data={**form, "csrf": "forged"}).status_code == 403
    assert "commit without signing" in c.get("/memory").text
    cross = c.post(
        "/act/forget-item", data={**form, "csrf": _csrf(page)}, headers={"origin": "http://evil.example"}
    )
    assert cross.status_code == 403
    done = c.post("/act/forget-item", data={**form, "csrf": _csrf(page)}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].startswith("/memory?done=forgot+ban")
    assert "commit without signing" not in c.get("/memory").text.split('id="bans"')[1].split("</section>")[0]


def test_forget_session_requires_confirmation_and_an_exact_id(
    built: tuple[ui_fixture.UiCorpus, Path],
) -> None:
    corpus, db = built
    c = client(db)
    token = _csrf(c.get(f"/session/{corpus.older}/forget").text)
    assert c.post("/act/forget-session", data={"csrf": token, "session_id": corpus.older}).status_code == 400
    prefix = {"csrf": token, "session_id": corpus.older[:4], "confirm": "yes"}
    assert c.post("/act/forget-session", data=prefix).status_code == 400  # a prefix is not enough
    assert c.post("/act/forget-session", data={**prefix, "session_id": ""}).status_code == 400
    ok = c.post("/act/forget-session", data={**prefix, "session_id": corpus.older}, follow_redirects=False)
    assert ok.status_code == 303
    assert c.get(f"/session/{corpus.older}").status_code == 404
    assert c.get(f"/session/{corpus.main}").status_code == 200
    evil_back = {"csrf": token, "extraction_id": "1", "back": "//evil.example/x"}
    r = c.post("/act/forget-item", data=evil_back, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/memory?")


def test_stamp_moves_when_the_index_changes(built: tuple[ui_fixture.UiCorpus, Path]) -> None:
    corpus, db = built
    c = client(db)
    first = c.get("/api/stamp").json()["stamp"]
    assert c.get("/api/stamp").json()["stamp"] == first
    token = _csrf(c.get(f"/session/{corpus.older}/forget").text)
    c.post("/act/forget-session", data={"csrf": token, "session_id": corpus.older, "confirm": "yes"})
    assert c.get("/api/stamp").json()["stamp"] != first


def test_export_html_is_self_contained_and_scriptless(
    built: tuple[ui_fixture.UiCorpus, Path], tmp_path: Path
) -> None:
    corpus, db = built
    out = tmp_path / "s.html"
    r = CliRunner().invoke(
        cli, ["--db", str(db), "export", corpus.xss, "--format", "html", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    html = out.read_text()
    assert "script-src &#39;none&#39;" in html and "<script" not in html.split("</head>")[1]
    assert 'src="/' not in html and 'href="/static' not in html  # nothing fetched from the viewer
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    md = client(db).get(f"/session/{corpus.main}/export.md")
    assert md.status_code == 200 and "# Fix the flaky login test" in md.text and "Bash" in md.text


def test_report_html_inlines_its_scripts_under_a_hash_policy(
    built: tuple[ui_fixture.UiCorpus, Path], tmp_path: Path
) -> None:
    import base64
    import hashlib

    _, db = built
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["--db", str(db), "report", "--html", "--since", "3650d", "--out", str(out)])
    assert r.exit_code == 0, r.output
    html = out.read_text()
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 2 and "Chart.js v4.5.1" in scripts[0]
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy
    for s in scripts:
        digest = base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in unescape(policy.group(1))
    assert "Fix the flaky login test" in html and "usage-data" in html
    text = CliRunner().invoke(cli, ["--db", str(db), "report", "--since", "3650d"])
    assert text.exit_code == 0 and "3 sessions" in text.output


def _items(html: str, section: str) -> list[str]:
    """The <li class="item"> blocks of one Memory section."""
    body = html.split(f'<section id="{section}">')[1].split("</section>")[0]
    return re.findall(r'<li class="item[^"]*">.*?</li>\s*(?=<li class="item|</ul>)', body, re.S)


def _id_of(item: str) -> str:
    m = re.search(r'href="/why/([0-9a-f]{8})"[^>]*>#\1</a>', item)
    assert m, f"no short id on {item[:200]!r}"
    return m.group(1)


def test_memory_items_carry_the_ids_why_accepts_and_their_stale_marks(
    built: tuple[ui_fixture.UiCorpus, Path],
) -> None:
    from index.store import save_marks
    from index.store.stale import Mark

    _, db = built
    c = client(db)
    html = c.get("/memory").text
    for section in ("decisions", "bans", "corrections"):
        assert _items(html, section), f"no item in {section}"
        for it in _items(html, section):
            key = _id_of(it)
            got = CliRunner().invoke(cli, ["--db", str(db), "why", key, "--json"])
            assert got.exit_code == 0, got.output
            content = unescape(re.search(r'<span class="content">(.*?)</span>', it).group(1))  # type: ignore[union-attr]
            assert json.loads(got.output)["content"] == content
    ban = _id_of(_items(html, "bans")[0])
    assert "badge-stale" not in html
    gone = Mark(
        ban, "f" * 40, True, "utils/retry.py::backoff", "backoff removed", "c0ffee1234abcd", "2026-02-03"
    )
    assert save_marks(db, [gone])
    item = next(it for it in _items(c.get("/memory").text, "bans") if _id_of(it) == ban)
    assert "badge-stale" in item and "utils/retry.py::backoff gone in c0ffee1234 (2026-02-03)" in item
    why = c.get(f"/why/{ban}").text
    assert "backoff removed" in why and "commit c0ffee1234 (2026-02-03)" in why
    assert c.get("/why/00000000").status_code == 404 and c.get("/why/<script>").status_code == 404


def test_feedback_needs_the_csrf_token_and_is_what_the_hooks_read(
    built: tuple[ui_fixture.UiCorpus, Path],
) -> None:
    from index.store import load, wrong_items

    _, db = built
    c = client(db)
    html = c.get("/memory").text
    decision, ban = _items(html, "decisions")[0], _items(html, "bans")[0]
    key = _id_of(decision)
    assert "badge-wrong" not in html and wrong_items(db).ids == set()
    form = {"item_id": key, "verdict": "wrong", "back": "/memory"}
    assert c.post("/act/feedback", data=form).status_code == 403
    assert c.post("/act/feedback", data={**form, "csrf": "forged"}).status_code == 403
    assert wrong_items(db).ids == set() and "badge-wrong" not in c.get("/memory").text
    done = c.post("/act/feedback", data={**form, "csrf": _csrf(html)}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].startswith("/memory?done=")
    assert key in wrong_items(db).ids
    after = c.get(done.headers["location"]).text
    item = next(it for it in _items(after, "decisions") if _id_of(it) == key)
    assert "badge-wrong" in item and 'value="wrong"' not in item  # no second "wrong" button
    assert "will not be injected again" in after
    helpful = c.post(
        "/act/feedback", data={"item_id": _id_of(ban), "verdict": "helpful", "csrf": _csrf(html)}
    )
    assert helpful.status_code == 200 and load(db).feedback[_id_of(ban)]["verdict"] == "helpful"
    assert "badge-helpful" in next(it for it in _items(helpful.text, "bans") if _id_of(it) == _id_of(ban))
    assert "wrong (" in c.get(f"/why/{key}").text  # the why page shows the verdict
    bad = c.post("/act/feedback", data={**form, "verdict": "maybe", "csrf": _csrf(html)})
    assert bad.status_code == 400 and load(db).feedback[key]["verdict"] == "wrong"


def test_the_session_page_marks_its_extractions_like_the_memory_page(
    built: tuple[ui_fixture.UiCorpus, Path],
) -> None:
    from index.store import open_reader, record_feedback

    _, db = built
    conn = open_reader(db)
    sid, kind, content, source = conn.execute(
        "SELECT session_id, kind, content, source_uuid FROM extractions WHERE kind IN ('correction', 'decision')"
        " ORDER BY id LIMIT 1"
    ).fetchone()
    c = client(db)
    page = c.get(f"/session/{sid}").text
    side = page[page.index('<ul class="extractions">') :]
    ids = re.findall(r'href="/why/([0-9a-f]{8})"', side)
    assert ids and "badge-wrong" not in side
    record_feedback(db, ids[0], "wrong", {"kind": kind, "content": content, "source_uuid": source})
    side = c.get(f"/session/{sid}").text.split('<ul class="extractions">')[1]
    assert "badge-wrong" in side  # the verdict shows beside the item it was given on
    export = CliRunner().invoke(cli, ["--db", str(db), "export", sid, "--format", "html"])
    assert export.exit_code == 0 and "/why/" not in export.output  # exports carry no viewer links
