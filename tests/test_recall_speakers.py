"""Per-prompt recall names who a recalled message is from: a tool's output travels in a user turn, but
it is not the user's words, so it is never tagged "you"."""

from __future__ import annotations

from pathlib import Path

from fixtures.make import Session, slug, uid

from index.briefing.prompt_recall import gather
from index.store.db import open_reader
from index.store.ingest import run_index

CWD = "/home/a/work/engine"


def test_tool_output_is_not_tagged_as_the_users_words(tmp_path: Path) -> None:
    s = Session(uid("speakers"), cwd=CWD)
    s.prompt("where is the quuxelSegment reset in the renderer?")
    call = s.response(tools=[("Grep", {"pattern": "quuxelSegment = nil", "path": "src"})])[-1]
    s.tool_result(
        call,
        "src/render/engine.go:340: e.quuxelSegment = nil\nsrc/render/stream.go:199: e.quuxelSegment = nil",
    )
    s.response(text="It is reset in two places: the engine and the stream writer.")
    path = tmp_path / "projects" / slug(CWD) / f"{uid('speakers')}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    s.write(path)
    db = tmp_path / "data" / "index.db"
    run_index(db, [tmp_path / "projects"])
    conn = open_reader(db)
    try:
        got = gather(conn, "where do we reset quuxelSegment again?", cwd=CWD, session_id="live", idents=[])
    finally:
        conn.close()
    lines = [r.line for r in got if r.section == "messages"]
    assert any("engine.go:340" in x and x.startswith("[tool output,") for x in lines), lines
    assert not any("engine.go:340" in x and x.startswith("[you,") for x in lines), lines
    assert any(x.startswith("[you,") and "where is the quuxelSegment" in x for x in lines), lines
