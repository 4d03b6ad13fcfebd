"""Speed at scale (issue 18): sessions are ranked by their documents first and messages are scored
only inside the best of them; copies with the same document are searched once; snippets.

Every transcript is a small file written here (tests/fixtures/make.py); nothing comes from a corpus.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures import make

from index.retrieval import candidates, search
from index.retrieval.candidates import _rare_terms
from index.retrieval.search import search_messages, search_sessions
from index.store.db import open_reader
from index.store.filters import Filters
from index.store.fts_query import parse
from index.store.ingest import run_index
from index.store.session_docs import top_sessions
from index.store.textstore import snippet
from lib import sqlite

SHOP = "/home/dev/projects/shop"
QUERY = "invoice rounding drift"
NOISE = "\n".join(f"src/invoice/rounding/drift_{i}.py modified" for i in range(30))


def _write(root: Path, s: make.Session) -> None:
    s.write(root / make.slug(s.cwd) / f"{s.session_id}.jsonl")


def _answer(root: Path, name: str) -> str:
    s = make.Session(make.uid("speed", name), cwd=SHOP)
    s.prompt(f"The invoice shows a rounding drift again ({name}), can you check?")
    s.response(text=f"The invoice rounding drift in {name} came from rounding each line; fixed.")
    _write(root, s)
    return s.session_id


def _noisy(root: Path, name: str) -> str:
    """A session whose conversation says nothing of the query; only its tool output repeats it."""
    s = make.Session(make.uid("speed", name), cwd=SHOP)
    s.prompt("tidy the repository please")
    call = s.response(text="Listing files.", tools=[("Bash", {"command": "git status"})])
    s.tool_result(call[-1], NOISE)
    s.response(text="Tidied.")
    _write(root, s)
    return s.session_id


def _index(tmp_path: Path, answers: int, noisy: int) -> tuple[sqlite.Connection, list[str], list[str]]:
    root = tmp_path / "projects"
    a = [_answer(root, f"a{i}") for i in range(answers)]
    n = [_noisy(root, f"n{i}") for i in range(noisy)]
    run_index(tmp_path / "index.db", [root])
    return open_reader(tmp_path / "index.db"), a, n


def _message_queries(conn: sqlite.Connection) -> list[str]:
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    return seen


def test_messages_are_scored_only_inside_the_sessions_whose_documents_rank_best(tmp_path: Path) -> None:
    """Twelve sessions talk about the query, three only hold it in tool output: with enough documents
    to fill the page, the message search never scores the matches of the other sessions."""
    conn, answers, noisy = _index(tmp_path, answers=12, noisy=3)
    sql = _message_queries(conn)
    ranked = search_sessions(conn, QUERY, limit=10, hybrid=False)
    fts = [s for s in sql if "messages_fts MATCH" in s and "bm25(messages_fts" in s]
    assert len(fts) == 1 and "AND session: (" in fts[0]  # one OR query, FTS5 inside those sessions
    ids = {s.session_id for s in ranked}
    assert len(ids) == 10 and ids <= set(answers) and not ids & set(noisy)
    hits = search_messages(conn, QUERY, limit=10, hybrid=False)
    assert {h.session_id for h in hits} <= set(answers)


def test_a_page_longer_than_the_session_depth_ranks_that_many_sessions_by_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller asking for more sessions than SESSION_DEPTH (an MCP tool's limit) gets as many ranked
    by their documents, not a search of the whole index after a too-short one."""
    conn, answers, _ = _index(tmp_path, answers=12, noisy=2)
    monkeypatch.setattr(search, "SESSION_DEPTH", 5)
    sql = _message_queries(conn)
    ranked = search_sessions(conn, QUERY, limit=10, hybrid=False)
    fts = [s for s in sql if "messages_fts MATCH" in s and "bm25(messages_fts" in s]
    assert len(fts) == 1 and "AND session: (" in fts[0]
    assert len(ranked) == 10 and {s.session_id for s in ranked} <= set(answers)


def test_too_few_documented_sessions_search_every_message(tmp_path: Path) -> None:
    """Fewer matching documents than the page holds: sessions found by their tool output alone are
    still listed (after the answer)."""
    conn, answers, noisy = _index(tmp_path, answers=1, noisy=2)
    ranked = search_sessions(conn, QUERY, limit=10, hybrid=False)
    assert [s.session_id for s in ranked][:1] == answers
    assert set(noisy) <= {s.session_id for s in ranked}


def test_a_filtered_search_ranks_the_messages_of_the_whole_index(tmp_path: Path) -> None:
    conn, _, noisy = _index(tmp_path, answers=12, noisy=1)
    sql = _message_queries(conn)
    hits = search_messages(conn, QUERY, Filters(kind="tool_result"), limit=10, hybrid=False)
    assert [h.session_id for h in hits] == noisy
    assert not any("+messages_fts.rowid IN" in s for s in sql)


def test_sessions_with_the_same_document_are_searched_once_and_listed_as_copies(tmp_path: Path) -> None:
    """The same conversation in two files (fresh ids, same times and project): one entry, the other
    its copy, so copies never take the places of other sessions in the ranking by documents."""
    root = tmp_path / "projects"
    twins = []
    for name in ("twin-a", "twin-b"):
        s = make.Session(make.uid("speed", name), cwd=SHOP)
        s.prompt("The invoice shows a rounding drift again, can you check?")
        s.response(text="The invoice rounding drift came from rounding each line; fixed.")
        _write(root, s)
        twins.append(s.session_id)
    other = _answer(root, "other")
    run_index(tmp_path / "index.db", [root])
    conn = open_reader(tmp_path / "index.db")
    scores, copies = top_sessions(conn, parse(QUERY, idents=False), 1)
    (kept,) = scores
    assert kept in twins and copies == {kept: [t for t in twins if t != kept]}
    scores, copies = top_sessions(conn, parse(QUERY, idents=False), 2)
    assert set(scores) == {kept, other}
    ranked = search_sessions(conn, QUERY, limit=2, hybrid=False)
    assert {s.session_id for s in ranked} == {kept, other}
    assert next(s for s in ranked if s.session_id == kept).copies == copies[kept]


def test_snippet_of_a_long_text_finds_terms_past_its_start() -> None:
    text = "filler words here " * 3000 + "the rounding drift was fixed in the invoice" + " tail" * 10
    out = snippet(text, ["rounding", "drift"])
    assert "[rounding] [drift]" in out and out.startswith("…")
    assert snippet("Rounding fixed; the DRIFT is gone", ["rounding", "drift"]).count("[") == 2


def test_snippet_of_text_that_lowercasing_would_shift_is_still_marked() -> None:
    """Terms are looked for where the lower-cased text holds their first letters; a text whose
    lower-casing is longer (İ) or that the regex folds differently (long s, dotless i) is scanned
    whole, so what the regex matches is still marked."""
    assert snippet("the ſession log", ["session"]) == "the [ſession] log"
    assert snippet("İ then the session log", ["session"]) == "İ then the [session] log"
    assert snippet("a SESSION and a sessions", ["session"]) == "a [SESSION] and a [sessions]"
    long = "x " * 15_000 + "Session drift → fixed"
    assert snippet(long, ["session", "drift"]).endswith("[Session] [drift] → fixed")


def test_snippet_marks_identifiers_inside_words_and_words_only_where_they_start() -> None:
    """The scan skips positions inside a word unless an identifier can start there."""
    text = "use mysub-agent and resubmit, then Submit it"
    assert snippet(text, ["sub-agent", "submit"]) == "use my[sub-agent] and resubmit, then [Submit] it"
    assert snippet("re-run xre-run", ["re-run"]) == "[re-run] x[re-run]"


def test_term_rarity_is_counted_among_the_newest_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How common a term is gets counted in a window of the newest messages, so the count does not
    grow with the index: a word all over old sessions but absent from recent ones stays distinctive."""
    root = tmp_path / "projects"
    old = make.Session(make.uid("speed", "old"), cwd=SHOP)
    for i in range(200):
        old.prompt(f"legacy step {i}")
        old.response(text=f"legacy done {i}")
    _write(root, old)
    run_index(tmp_path / "index.db", [root])
    new = make.Session(make.uid("speed", "new"), cwd=SHOP)
    for i in range(150):
        new.prompt(f"widget step {i}")
        new.response(text=f"widget done {i}")
    _write(root, new)
    run_index(tmp_path / "index.db", [root])
    conn = open_reader(tmp_path / "index.db")
    q = parse("legacy widget")
    assert _rare_terms(conn, q.terms) == q.terms  # over all 700 messages both are common: both kept
    monkeypatch.setattr(candidates, "RARITY_WINDOW", 300)
    assert _rare_terms(conn, q.terms) == ['"legacy"']  # the newest 300 hold only `widget`
