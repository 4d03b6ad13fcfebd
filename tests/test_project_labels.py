"""Every surface names a project by its unique short label among the index's projects
(`index.store.project_labeller`): two projects whose folders are both called `api` are `work/api` and
`home/api` in the SessionStart bundle, the prompt recall, `why`, the project memory, the project graph,
the profiles and the viewer — never two `api`s a reader cannot tell apart."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fixtures.make import Session, slug, uid
from starlette.testclient import TestClient

from index.briefing.bundle import operator_context
from index.briefing.explain import explain
from index.briefing.prompt_recall import gather
from index.retrieval.memory_md import master_markdown
from index.retrieval.ontology_queries import profile, project_graph
from index.store.db import open_reader
from index.store.ingest import run_index
from lib import sqlite
from total_recall.ui.app import Config, create_app

WORK, HOME = "/home/a/work/api", "/home/a/home/api"
LABELS = {WORK: "work/api", HOME: "home/api"}
NOW = datetime.now(timezone.utc)


def _write(root: Path, cwd: str, word: str) -> str:
    sid = uid("labels", cwd)
    s = Session(sid, cwd=cwd, t0=NOW - timedelta(days=1))
    for prompt, reply in (
        (f"from now on we always run the {word} tests with pytest -x before committing", "Understood."),
        (f"no, that's wrong, use the {word} parser instead of the regex", f"Switching to the {word} parser."),
        (f"never commit without the {word} tests", "Noted."),
        (f"goal: ship the {word} loader by friday", "Let me start."),
    ):
        s.prompt(prompt)
        s.response(text=reply)
    s.write(root / slug(cwd) / f"{sid}.jsonl")
    return sid


@pytest.fixture
def index(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root, db = tmp_path / "projects", tmp_path / "index.db"
    sids = {_write(root, WORK, "zorblax"): WORK, _write(root, HOME, "quuxel"): HOME}
    assert run_index(db, [root], jobs=1).errors == []
    return db, sids


def _conn(db: Path) -> sqlite.Connection:
    return open_reader(db)


def test_bundle_names_each_project_by_its_label(index: tuple[Path, dict[str, str]]) -> None:
    db, _ = index
    conn = _conn(db)
    for key, want in LABELS.items():
        doc = operator_context(conn, key, now=NOW).to_json()
        assert doc["project"] == want
        named = {i["project"] for items in doc["sections"].values() for i in items if i.get("project")}
        assert want in named and "api" not in named, named
        assert {i["project"] for i in doc["sections"]["sessions"]} == {want}


def test_prompt_recall_tags_memories_with_the_label(index: tuple[Path, dict[str, str]]) -> None:
    db, _ = index
    got = gather(
        _conn(db),
        "what did we decide about the zorblax and quuxel tests?",
        cwd=None,
        session_id="live",
        idents=[],
        now=NOW,
    )
    lines = [r.line for r in got if r.section == "memory"]
    assert any(", work/api, " in x for x in lines) and any(", home/api, " in x for x in lines), lines
    assert not any(", api, " in x for x in lines), lines


def test_why_names_the_project_by_its_label(index: tuple[Path, dict[str, str]]) -> None:
    db, _ = index
    conn = _conn(db)
    for key, want in LABELS.items():
        entry = {"event": "injected", "id": "1" * 8, "kind": "ban", "content": "x", "project_key": key}
        out = explain(conn, "1" * 8, [entry], None)
        assert out is not None and out["project"] == want and out["project_key"] == key


def test_memory_md_graph_and_profiles_use_the_labels(index: tuple[Path, dict[str, str]]) -> None:
    db, _ = index
    conn = _conn(db)
    for key, want in LABELS.items():
        assert master_markdown(conn, key).startswith(f"# Project memory: {want}\n")
        graph = project_graph(conn, focus=want, limit=10)
        assert graph["focus_key"] == key and graph["focus"] == want
    assert {n["project"] for n in project_graph(conn, focus=None, limit=10)["nodes"]} == set(LABELS.values())
    # A bare `api` fits both: no focus rather than an answer about the wrong one.
    bare = project_graph(conn, focus="api", limit=10)
    assert bare["focus_key"] is None and bare["focus_ambiguous"] == ["home/api", "work/api"]
    names = dict(conn.execute("SELECT project_key, name FROM projects").fetchall())
    assert names == LABELS
    top = profile(conn, "operator_profile")[0]["top_projects"]
    assert {p for p, _ in top} == set(LABELS.values())


def test_viewer_pages_tell_the_projects_apart(index: tuple[Path, dict[str, str]]) -> None:
    db, sids = index
    ui = TestClient(create_app(Config(db=db)), base_url="http://127.0.0.1:8765")
    for path in ("/", "/search?q=tests", "/memory"):
        html = ui.get(path).text
        assert ">work/api<" in html and ">home/api<" in html, path
        assert ">api<" not in html, path
    for sid, key in sids.items():
        html = ui.get(f"/session/{sid}").text
        assert f"<dd>{LABELS[key]}</dd>" in html
