"""Standing orders apart from standing decisions: an order ("always run the tests before committing")
settles no choice, a standing decision ("we use pnpm instead of npm") does, and a hedge ("maybe we
should always ...") is neither. Each from small exchanges the test writes; the order is carried where
standing decisions are (operator table, SessionStart bundle, MCP) with its own kind, and the evaluation
counts it as a rule only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.make import Session, slug, uid

from extractors.evaluation import predicted_classes, score_labelled
from extractors.model import STANDING_KINDS, Utterance
from extractors.pipeline import extract
from index.briefing.bundle import operator_context
from index.store.db import open_reader
from index.store.ingest import run_index
from lib.settings import Settings
from mcp_server import tools_operator, tools_recall
from mcp_server.envelope import Runtime

ASKED = "Done: the parser now reads the config once. Anything else?"
ORDERS = [
    "From now on, always run the tests before committing.",
    "Keep the commits small, as a rule.",
    "Going forward, reply in British English.",
]
CHOICES = [
    "From now on we use pnpm instead of npm.",
    "Going forward, let's go with Postgres for every new service.",
    "As a rule, prefer small functions over long ones.",
]
HEDGES = [
    "Maybe we should always run the linter before pushing.",
    "I think it might be good to always squash the commits from now on.",
]


def _kinds(text: str) -> set[str]:
    u = Utterance(uuid=uid(text), session_id="s1", role="user", text=text, prev_assistant_text=ASKED)
    return {e.kind for e in extract(u)}


@pytest.mark.parametrize("text", ORDERS)
def test_an_order_is_a_standing_order(text: str) -> None:
    assert "standing_order" in _kinds(text)
    assert "standing_decision" not in _kinds(text)


@pytest.mark.parametrize("text", CHOICES)
def test_a_choice_is_a_standing_decision(text: str) -> None:
    assert "standing_decision" in _kinds(text)
    assert "standing_order" not in _kinds(text)


@pytest.mark.parametrize("text", HEDGES)
def test_a_hedge_is_not_standing(text: str) -> None:
    assert not _kinds(text) & set(STANDING_KINDS)


def test_evaluation_counts_an_order_as_a_rule_only() -> None:
    assert predicted_classes(["standing_order"]) == {"rule"}
    items = [{"uuid": "r1", "labels": ["rule"]}]
    order = score_labelled(items, {"r1": ["standing_order"]})
    assert order["rule"]["tp"] == 1 and order["decision"]["fp"] == 0
    choice = score_labelled(items, {"r1": ["standing_decision"]})
    assert choice["rule"]["tp"] == 1 and choice["decision"]["fp"] == 1


def _index(tmp_path: Path) -> tuple[Path, str]:
    cwd = str(tmp_path / "work" / "alpha")
    s = Session(uid("orders"), cwd=cwd)
    s.prompt("Please add a cache for the parsed config files in the loader.")
    for text in (ORDERS[0], CHOICES[0]):
        s.response(text=ASKED)
        s.prompt(text)
    path = tmp_path / "projects" / slug(cwd) / f"{uid('orders')}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    s.write(path)
    db = tmp_path / "data" / "index.db"
    run_index(db, [tmp_path / "projects"])
    return db, cwd


def test_an_order_reaches_the_bundle_and_mcp_with_its_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import index.briefing.gate

    monkeypatch.setattr(index.briefing.gate, "bundle_threshold", lambda kind: 0.0)  # the kind is tested here
    db, cwd = _index(tmp_path)
    conn = open_reader(db)
    try:
        rows = conn.execute(
            """SELECT e.kind, t.content FROM standing_decisions t JOIN extractions e ON e.id = t.extraction_id
               ORDER BY e.kind"""
        ).fetchall()
        ctx = operator_context(conn, cwd)
    finally:
        conn.close()
    assert [k for k, _ in rows] == ["standing_decision", "standing_order"]  # one table for both
    assert "Standing decisions and orders" in ctx.text
    kinds = {it.extra["kind"]: it.content for it in ctx.sections["decisions"]}
    assert "tests before committing" in kinds["standing_order"] and "pnpm" in kinds["standing_decision"]

    rt = Runtime(db, cwd, Settings.from_env())
    listed = json.loads(tools_operator.list_standing_decisions(rt).content[0].text)  # type: ignore[union-attr]
    by_kind = {i["kind"]: i["content"] for i in listed["items"]}
    assert set(by_kind) == set(STANDING_KINDS) and "tests before committing" in by_kind["standing_order"]
    prefs = json.loads(tools_recall.find_user_preferences(rt).content[0].text)  # type: ignore[union-attr]
    assert "standing_order" in {i["kind"] for i in prefs["items"]}
