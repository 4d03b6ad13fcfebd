"""Ranking failure families (issue 11): answers beat volume, copies count once, session documents.

Every transcript is a small file written here (tests/fixtures/make.py); nothing comes from a corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fixtures import make

from index.retrieval.retrieval_eval import abstention, evaluate, run_questions
from index.retrieval.search import search_messages, search_sessions
from index.store.db import open_reader, open_writer
from index.store.ingest import run_index
from index.store.manage import forget
from index.store.session_docs import DOC_CLIP
from lib import sqlite

REPO = Path(__file__).resolve().parent.parent
SHOP = "/home/dev/projects/shop"

ANSWER_PROMPT = "Checkout totals are sometimes a cent off for carts with many items, can you look into it?"
ANSWER_TEXT = (
    "Found it: rounding happened on every line item instead of once on the invoice total, so the "
    "cent drift grew with the number of items. The invoice total is now rounded once with Decimal "
    "quantize and the drift is gone."
)
QUERY = "why was the invoice total a cent off, rounding per line item"

# Tool output of other sessions that repeats the query's words without answering it.
MERGE_CONFLICT = "\n".join(
    f"<<<<<<< HEAD\n    total_{i} = invoice.total  # rounding per line item, cent {i}\n=======\n"
    f"    total_{i} = round(invoice.total, 2)  # cent rounding of the line item\n>>>>>>> feature/invoice-{i}"
    for i in range(12)
)
DIFF = "\n".join(
    f"-    cent_{i} = line.item.total * 100  # invoice rounding\n"
    f"+    cent_{i} = round(line.item.total * 100)  # invoice total rounding per item"
    for i in range(15)
)
TEST_LOG = "\n".join(
    f"tests/test_invoice.py::test_total_rounding_line_item_cent_{i} PASSED" for i in range(40)
)
LISTING = "\n".join(f"src/invoice/line_item/total_rounding_cent_{i}.py" for i in range(40))


def _write(root: Path, s: make.Session) -> Path:
    return s.write(root / make.slug(s.cwd) / f"{s.session_id}.jsonl")


def _answer_session(root: Path) -> str:
    s = make.Session(make.uid("rank", "answer"), cwd=SHOP)
    s.prompt(ANSWER_PROMPT)
    call = s.response(
        text="Let me look at the checkout code.", tools=[("Read", {"file_path": "/src/checkout.py"})]
    )
    s.tool_result(call[-1], "def checkout(cart):\n    return sum(price(i) for i in cart.items)\n")
    s.response(text=ANSWER_TEXT)
    _write(root, s)
    return s.session_id


def _noisy_session(root: Path, name: str, outputs: list[str], turns: int = 6) -> str:
    """A long session of chores whose tool output (not its conversation) is full of the query's words."""
    s = make.Session(make.uid("rank", name), cwd=SHOP, t0=make.T0 + timedelta(days=3))
    for t in range(turns):
        s.prompt(f"next chore {t}: keep going with the branch cleanup")
        for out in outputs:
            call = s.response(
                text="Running it.", tools=[("Bash", {"command": f"git status && git diff {t}"})]
            )
            s.tool_result(call[-1], out)
        s.response(text=f"Chore {t} done, moving on.")
    _write(root, s)
    return s.session_id


@pytest.fixture
def noisy(tmp_path: Path) -> tuple[Path, str, list[str]]:
    root = tmp_path / "projects"
    answer = _answer_session(root)
    others = [
        _noisy_session(root, "merge", [MERGE_CONFLICT, DIFF]),
        _noisy_session(root, "tests", [TEST_LOG]),
        _noisy_session(root, "files", [LISTING, DIFF]),
    ]
    db = tmp_path / "index.db"
    run_index(db, [root])
    return db, answer, others


# --- family 1: long sessions whose tool output repeats the query's words ---------------------------


def test_answer_session_beats_sessions_whose_tool_output_repeats_the_query(
    noisy: tuple[Path, str, list[str]],
) -> None:
    db, answer, others = noisy
    conn = open_reader(db)
    ranked = search_sessions(conn, QUERY, hybrid=False)
    assert [s.session_id for s in ranked][:1] == [answer]
    assert set(others) <= {s.session_id for s in ranked}  # they match, they just rank lower


def test_answer_record_beats_merge_conflicts_diffs_logs_and_listings(
    noisy: tuple[Path, str, list[str]],
) -> None:
    db, answer, _ = noisy
    hits = search_messages(open_reader(db), QUERY, limit=3, hybrid=False)
    assert hits[0].session_id == answer and hits[0].kind in ("text", "prompt")


def test_repeating_the_query_in_more_messages_does_not_raise_a_session(tmp_path: Path) -> None:
    """Volume is not relevance: 3x the same tool chores scores no higher than 1x."""
    root = tmp_path / "projects"
    _answer_session(root)
    short = _noisy_session(root, "short", [MERGE_CONFLICT], turns=1)
    long = _noisy_session(root, "long", [MERGE_CONFLICT], turns=3)
    run_index(tmp_path / "index.db", [root])
    scores = {
        s.session_id: s.score
        for s in search_sessions(open_reader(tmp_path / "index.db"), QUERY, hybrid=False)
    }
    assert scores[long] <= scores[short]


# --- family 2: resumed / continued copies count once ----------------------------------------------


def _session(root: Path, name: str, turns: list[tuple[str, str]], **kw: Any) -> make.Session:
    s = make.Session(make.uid("rank", name), cwd=SHOP, **kw)
    for p, a in turns:
        s.prompt(p)
        s.response(text=a)
    _write(root, s)
    return s


def test_a_copy_of_a_session_under_another_id_is_listed_once(tmp_path: Path) -> None:
    """The same conversation written twice (a re-written or duplicated file: fresh uuids, new session
    id) is one result, naming the copy, and does not push other sessions off the page."""
    root = tmp_path / "projects"
    turns = [(ANSWER_PROMPT, ANSWER_TEXT)]
    first = _session(root, "orig", turns)
    copy = _session(root, "copy", turns, t0=make.T0 + timedelta(hours=5))
    other = _session(
        root, "other", [("Line item rounding in the cart preview?", "Preview shows unrounded cents.")]
    )
    run_index(tmp_path / "index.db", [root])
    ranked = search_sessions(open_reader(tmp_path / "index.db"), QUERY, limit=2, hybrid=False)
    ids = [s.session_id for s in ranked]
    assert len(ids) == 2 and other.session_id in ids
    assert len({first.session_id, copy.session_id} & set(ids)) == 1
    kept = next(s for s in ranked if s.session_id != other.session_id)
    assert kept.copies == [({first.session_id, copy.session_id} - {kept.session_id}).pop()]
    hits = search_messages(open_reader(tmp_path / "index.db"), QUERY, limit=10, hybrid=False)
    assert sum(h.snippet.startswith("Found it") or "Found it" in h.snippet for h in hits) == 1


def test_a_copy_that_adds_its_own_answer_is_not_folded(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    _session(root, "orig", [(ANSWER_PROMPT, ANSWER_TEXT)])
    more = _session(
        root,
        "rerun",
        [
            (
                ANSWER_PROMPT,
                "Invoice rounding per line item: this run kept the cent "
                "drift and added a regression test for the invoice total.",
            )
        ],
    )
    ranked = search_sessions(_indexed(tmp_path), QUERY, hybrid=False)
    assert more.session_id in {s.session_id for s in ranked}


def test_resumed_session_copy_counts_once(tmp_path: Path) -> None:
    """Claude Code's resume copies the parent's records (same uuids) into the new file: they are stored
    once, under the parent, and the new session ranks by what it added."""
    root = tmp_path / "projects"
    parent = _session(root, "parent", [(ANSWER_PROMPT, ANSWER_TEXT)])
    child = make.Session(make.uid("rank", "child"), cwd=SHOP, t0=parent.clock + timedelta(hours=1))
    child.records = list(parent.records)
    child.last = parent.last
    child.prompt("now add a changelog entry")
    child.response(text="Added the changelog entry.")
    _write(root, child)
    conn = _indexed(tmp_path)
    ranked = search_sessions(conn, QUERY, hybrid=False)
    assert [s.session_id for s in ranked] == [parent.session_id]
    hits = search_messages(conn, QUERY, hybrid=False)
    assert len({h.uuid for h in hits}) == len(hits) and {h.session_id for h in hits} == {parent.session_id}


def test_continued_session_summary_does_not_outrank_the_original(tmp_path: Path) -> None:
    """A continuation opens with a compaction summary repeating the earlier session: the original,
    where the work happened, ranks first; the summary is not part of the continuation's document."""
    root = tmp_path / "projects"
    orig = _session(root, "orig", [(ANSWER_PROMPT, ANSWER_TEXT)])
    cont = make.Session(make.uid("rank", "cont"), cwd=SHOP, t0=orig.clock + timedelta(hours=2))
    cont.compact(
        orig.last,
        summary=ANSWER_PROMPT
        + " "
        + ANSWER_TEXT
        + " Invoice total rounding per line item, cent drift, invoice total.",
    )
    cont.prompt("ok, now update the docs")
    cont.response(text="Docs updated.")
    _write(root, cont)
    conn = _indexed(tmp_path)
    ranked = search_sessions(conn, QUERY, hybrid=False)
    assert ranked[0].session_id == orig.session_id
    doc = conn.execute(
        "SELECT prompts || answers FROM session_docs WHERE session_id=?", (cont.session_id,)
    ).fetchone()
    assert "cent drift" not in doc[0]


def _indexed(tmp_path: Path) -> sqlite.Connection:
    run_index(tmp_path / "index.db", [tmp_path / "projects"])
    return open_reader(tmp_path / "index.db")


# --- session documents -----------------------------------------------------------------------------


def test_session_document_holds_prompts_and_answers_not_tool_output(
    noisy: tuple[Path, str, list[str]],
) -> None:
    db, answer, others = noisy
    conn = open_reader(db)
    title, prompts, answers = conn.execute(
        "SELECT title, prompts, answers FROM session_docs WHERE session_id=?", (answer,)
    ).fetchone()
    assert ANSWER_PROMPT in prompts and ANSWER_TEXT in answers and title
    assert "def checkout" not in prompts + answers  # the Read result
    merge = conn.execute(
        "SELECT prompts || answers FROM session_docs WHERE session_id=?", (others[0],)
    ).fetchone()[0]
    assert "<<<<<<<" not in merge and "next chore 0" in merge


def test_session_document_is_rebuilt_when_the_session_grows(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    s = _session(root, "grow", [("start the parser work", "Parser skeleton in place.")])
    conn = _indexed(tmp_path)
    assert (
        conn.execute("SELECT count(*) FROM session_fts WHERE session_fts MATCH 'zeppelin'").fetchone()[0] == 0
    )
    s.prompt("rename the parser to zeppelin")
    s.response(text="Renamed to zeppelin.")
    _write(root, s)
    run_index(tmp_path / "index.db", [root])
    assert (
        conn.execute("SELECT count(*) FROM session_fts WHERE session_fts MATCH 'zeppelin'").fetchone()[0] == 1
    )
    assert conn.execute("SELECT count(*) FROM session_docs").fetchone()[0] == 1


def test_long_messages_enter_the_document_clipped(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    _session(root, "paste", [("here is the log:\n" + "noise " * 2000 + " tailword", "Read it.")])
    conn = _indexed(tmp_path)
    prompts = conn.execute("SELECT prompts FROM session_docs").fetchone()[0]
    assert len(prompts) == DOC_CLIP and "tailword" not in prompts


def test_forget_deletes_the_session_document(noisy: tuple[Path, str, list[str]]) -> None:
    db, answer, _ = noisy
    w = open_writer(db)
    forget(w, db, [answer])
    assert w.execute("SELECT count(*) FROM session_docs WHERE session_id=?", (answer,)).fetchone()[0] == 0
    assert w.execute("SELECT count(*) FROM session_fts WHERE session_fts MATCH 'quantize'").fetchone()[0] == 0
    w.execute(
        "INSERT INTO session_fts(session_fts) VALUES('integrity-check')"
    )  # the FTS index stays consistent
    assert all(s.session_id != answer for s in search_sessions(open_reader(db), QUERY, hybrid=False))


def test_index_from_before_session_documents_gets_them_on_the_next_run(
    noisy: tuple[Path, str, list[str]],
) -> None:
    db, answer, _ = noisy
    w = open_writer(db)
    w.execute("DELETE FROM session_fts")
    w.execute("DELETE FROM session_docs")
    assert search_sessions(open_reader(db), QUERY, hybrid=False)  # no documents: messages alone still rank
    report = run_index(db, [db.parent / "projects"])
    assert report.files_unchanged == report.files  # nothing new to read ...
    assert w.execute("SELECT count(*) FROM session_docs").fetchone()[0] == 4  # ... documents built anyway


# --- retrieval eval: several gold files, per source, abstention -----------------------------------


def _gold(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_reports_per_source_and_abstention(noisy: tuple[Path, str, list[str]]) -> None:
    db, answer, _ = noisy
    rows = [
        {
            "id": "a",
            "query": QUERY,
            "type": "bugfix",
            "gold_sessions": [answer],
            "gold_uuids": [],
            "evidence_file": "x/a.jsonl",
        },
        {
            "id": "n",
            "query": "kubernetes helm chart upgrade",
            "type": "negative",
            "gold_sessions": [],
            "gold_uuids": [],
        },
    ]
    res = evaluate(open_reader(db), rows, hybrid=False, provenance={"x/a.jsonl": "acme/shop"})
    assert res["session_hit@1"] == 1.0 and res["by_source"] == {"acme/shop": res["by_source"]["acme/shop"]}
    assert res["worst_source"] == "acme/shop" and res["abstention"]["negatives"] == 1
    assert res["abstention"]["auc"] == 1.0  # the negative matches nothing: it scores below the answerable one
    # without provenance the source is the gold session's project
    assert list(evaluate(open_reader(db), rows, hybrid=False)["by_source"]) == ["shop"]


def test_abstention_auc_orders_scores() -> None:
    outs = run_questions(sqlite.connect(":memory:"), [], hybrid=False)
    assert abstention(outs) == {"negatives": 0}
    from index.retrieval.retrieval_eval import Outcome

    mk = [
        Outcome(i, "q", "s", "t", neg, top_score=sc)
        for i, (neg, sc) in enumerate([(False, 9.0), (False, 7.0), (True, 8.0), (True, 1.0)])
    ]
    got = abstention(mk)
    assert got["auc"] == 0.75 and got["negatives"] == 2


def test_cli_eval_retrieval_several_gold_files_on_their_own_indexes(
    noisy: tuple[Path, str, list[str]], tmp_path: Path
) -> None:
    db, answer, _ = noisy
    root2 = tmp_path / "p2" / "projects"
    other = _session(root2, "far", [("Set up the kubernetes helm chart", "Helm chart deployed to staging.")])
    db2 = tmp_path / "p2" / "index.db"
    run_index(db2, [root2])
    g1 = _gold(
        tmp_path / "g1.jsonl",
        [
            {
                "id": "a",
                "query": QUERY,
                "gold_sessions": [answer],
                "gold_uuids": [],
                "evidence_file": "shop/a.jsonl",
            }
        ],
    )
    g2 = _gold(
        tmp_path / "g2.jsonl",
        [
            {
                "id": "b",
                "query": "helm chart staging",
                "gold_sessions": [other.session_id],
                "gold_uuids": [],
                "evidence_file": "k8s/b.jsonl",
            }
        ],
    )
    prov = tmp_path / "PROVENANCE.tsv"
    prov.write_text("path\trepo\nprojects/shop/a.jsonl\tacme/shop\nprojects/k8s/b.jsonl\tacme/infra\n")
    args = [
        sys.executable,
        "-m",
        "total_recall",
        "--db",
        str(db),
        "eval",
        "retrieval",
        "--gold",
        str(g1),
        "--gold",
        str(g2),
        "--index",
        str(db),
        "--index",
        str(db2),
        "--provenance",
        str(prov),
        "--mode",
        "fts",
    ]
    p = subprocess.run([*args, "--json"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["session_hit@1"] == 1.0 and res["questions"] == 2
    assert set(res["by_source"]) == {"acme/shop", "acme/infra"} and set(res["sets"]) == {
        "g1.jsonl",
        "g2.jsonl",
    }
    text = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=120).stdout
    assert "acme/infra" in text and "overall" in text and "abstention" in text
    bad = subprocess.run(
        [*args[:-4], "--index", str(db)], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert bad.returncode != 0 and "one --index per --gold" in bad.stderr
