"""Indexing tests (I1–I7, W6–W9 end to end): run_index on a temporary projects tree."""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fixtures import make, rows
from fixtures.make import Fixture

from index.briefing.continuation import indexed_offset
from index.retrieval.operator_queries import list_failed_attempts, list_goals
from index.retrieval.search import search_messages, search_sessions
from index.stats.queries import doctor
from index.store import schema
from index.store.db import open_existing_writer, open_reader, open_writer
from index.store.ingest import IndexReport, run_index
from index.store.schema import current_version
from index.store.textstore import unpack
from lib import sqlite
from lib.discovery import key_path, path_key


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "projects"
        self.root.mkdir(parents=True, exist_ok=True)
        self.db = tmp_path / "index.db"

    def index(self, **kw: Any) -> IndexReport:
        report = run_index(self.db, [self.root], **kw)
        assert report.errors == []
        return report

    def conn(self) -> sqlite.Connection:
        return sqlite.connect(self.db)

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self.conn() as c:
            return c.execute(sql, args).fetchall()

    def one(self, sql: str, *args: Any) -> Any:
        return self.rows(sql, *args)[0][0]

    def messages(self) -> dict[str, dict[str, Any]]:
        cols = (
            "uuid",
            "session_id",
            "parent_uuid",
            "role",
            "kind",
            "on_main",
            "is_sidechain",
            "agent_id",
            "body",
        )
        out = {}
        for r in self.rows(f"SELECT {', '.join(cols)} FROM messages"):
            d = dict(zip(cols, r))
            d["text"] = unpack(d.pop("body"))
            out[d["uuid"]] = d
        return out

    def fts_count(self, term: str) -> int:
        return int(self.one("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", f'"{term}"'))


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def place(env: Env, name: str, project: str | None = None) -> Fixture:
    return make.QUIRKS[name](env.root / make.slug(project or f"/home/dev/projects/{name}"))


def append(path: Path, recs: list[Any]) -> None:
    with path.open("ab") as f:
        for r in recs:
            f.write((make.dumps(r) if isinstance(r, dict) else r) + b"\n")


def continue_session(fx: Fixture, last: str, prompt: str, answer: str, **kw: Any) -> list[dict[str, Any]]:
    s = make.Session(fx.ids["sid"], t0=make.T0.replace(hour=15), seq=1000, **kw)
    s.last = last
    p = s.prompt(prompt)
    a = s.response(text=answer)
    return [p, *a]


def snapshot(env: Env) -> dict[str, list[tuple[Any, ...]]]:
    return rows.snapshot(env.db, root=env.root)


# ---------------------------------------------------------------------------------------------------
# incremental ingest (I4, I5)
# ---------------------------------------------------------------------------------------------------


def test_full_corpus_counts_and_bad_lines(env: Env) -> None:
    fixtures = make.build_corpus(env.root)
    r = env.index()
    assert r.files == 27 and r.files_unchanged == 0
    assert dict(r.bad_lines) == {"invalid_json": 1, "invalid_utf8": 1, "not_object": 2}
    assert r.messages_added == env.one("SELECT count(*) FROM messages") > 90
    partial_tail = len(fixtures["partial_last_line"].path.read_bytes().rsplit(b"\n", 1)[1])
    assert r.bytes_read == sum(p.stat().st_size for p in env.root.rglob("*.jsonl")) - partial_tail
    assert env.one("SELECT sum(bad_lines) FROM ingest_state") == 4
    # the message count is what the walker built: uuids are unique, resume copies stored once
    assert env.one("SELECT count(DISTINCT uuid) FROM messages") == env.one("SELECT count(*) FROM messages")


def test_second_run_adds_nothing(env: Env) -> None:
    make.build_corpus(env.root)
    env.index()
    before = snapshot(env)
    r = env.index()
    assert r.files_unchanged == r.files == 27
    assert (r.records, r.messages_added, r.extractions_added, r.bytes_read) == (0, 0, 0, 0)
    assert snapshot(env) == before
    # touching a file without writing to it is not a change either
    fx = next(env.root.rglob(f"{make.uid('fork')}.jsonl"))
    os.utime(fx, None)
    r = env.index()
    assert r.messages_added == 0 and r.records == 0 and snapshot(env) == before


def test_appending_a_turn_adds_exactly_it(env: Env) -> None:
    make.build_corpus(env.root)
    fx = make.quirk_identifiers(env.root / make.slug("/home/dev/projects/identifiers"))  # same bytes again
    env.index()
    before = env.messages()
    new = continue_session(
        fx, fx.ids["answer"], "now add a retry to parseConfig", "Added a retry loop.", cwd=make.CWD_B
    )
    append(fx.path, new)
    r = env.index()
    assert r.files_unchanged == r.files - 1
    assert r.records == 2 and r.messages_added == 2
    after = env.messages()
    assert set(after) - set(before) == {new[0]["uuid"], new[1]["uuid"]}
    assert {k: v for k, v in after.items() if k in before} == before
    assert after[new[0]["uuid"]]["parent_uuid"] == fx.ids["answer"]
    assert after[new[1]["uuid"]]["parent_uuid"] == new[0]["uuid"]
    assert env.one("SELECT n_messages FROM sessions WHERE session_id=?", fx.ids["sid"]) == 4
    assert env.one("SELECT n_prompts FROM sessions WHERE session_id=?", fx.ids["sid"]) == 2
    assert env.one("SELECT offset FROM ingest_state WHERE path=?", str(fx.path)) == fx.path.stat().st_size


def test_partial_line_is_indexed_when_completed(env: Env) -> None:
    fx = place(env, "partial_last_line")
    env.index()
    assert fx.ids["partial"] not in env.messages()
    offset = env.one("SELECT offset FROM ingest_state")
    assert offset == len(fx.path.read_bytes().rsplit(b"\n", 1)[0]) + 1
    r = env.index()  # nothing new yet: the partial line stays unconsumed
    assert r.messages_added == 0 and env.one("SELECT offset FROM ingest_state") == offset
    with fx.path.open("ab") as f:
        f.write(fx.ids["rest"])
    r = env.index()
    assert r.messages_added == 1 and r.bad_lines == {}
    m = env.messages()[fx.ids["partial"]]
    assert m["parent_uuid"] == fx.ids["answer"] and m["kind"] == "prompt"
    assert env.one("SELECT offset FROM ingest_state") == fx.path.stat().st_size


def test_record_without_newline_then_its_newline(env: Env) -> None:
    fx = place(env, "no_final_newline")
    env.index()
    assert fx.ids["last"] in env.messages()
    new = continue_session(
        fx, fx.ids["last"], "one more thing: bump the version", "Bumped to 1.4.0.", version="2.0.55"
    )
    with fx.path.open("ab") as f:
        f.write(b"\n")
    env.index()
    append(fx.path, new)
    r = env.index()
    assert r.messages_added == 2 and r.bad_lines == {}
    assert env.rows("SELECT lines, bad_lines FROM ingest_state") == [(5, 0)]
    assert env.messages()[new[0]["uuid"]]["parent_uuid"] == fx.ids["last"]


def test_truncated_file_is_reindexed_without_duplicates(env: Env, tmp_path: Path) -> None:
    fx = place(env, "fork")
    env.index()
    lines = fx.path.read_bytes().splitlines()
    # drop the live branch's last record (the file shrinks below the cursor)
    fx.path.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    r = env.index()
    assert r.files_unchanged == 0
    msgs = env.messages()
    assert fx.ids["new_p"] in msgs and fx.ids["new_a"] not in msgs
    assert env.one("SELECT count(*) FROM messages") == len(lines) - 1
    assert env.fts_count("fixed") == 1  # "make it use a fixed delay instead": once, not twice
    assert env.fts_count("500") == 0  # the removed answer left no terms behind
    # and the result equals indexing the truncated file from scratch
    fresh = Env(tmp_path / "fresh")
    copy = fresh.root / fx.path.relative_to(env.root)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(fx.path.read_bytes())
    fresh.index()
    assert snapshot(fresh)["messages"] == snapshot(env)["messages"]


def test_rewritten_file_same_size_is_reindexed(env: Env) -> None:
    fx = place(env, "identifiers")
    env.index()
    data = fx.path.read_bytes()
    changed = data.replace(b"parseConfig throws", b"loadSchema crashes")
    assert len(changed) == len(data)
    st = fx.path.stat()
    fx.path.write_bytes(changed)
    os.utime(fx.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    env.index()
    assert env.one("SELECT count(*) FROM messages") == 2
    text = env.messages()[fx.ids["prompt"]]["text"]
    assert text.startswith("loadSchema crashes")
    assert env.fts_count("crashes") == 1 and env.fts_count("throws") == 0


def test_rotated_file_new_inode_is_reindexed(env: Env) -> None:
    fx = place(env, "split_assistant")
    env.index()
    before = snapshot(env)
    n = env.one("SELECT count(*) FROM messages")
    tmp = fx.path.with_name("rotating.tmp")
    tmp.write_bytes(fx.path.read_bytes())
    old_inode = fx.path.stat().st_ino
    os.replace(tmp, fx.path)
    if fx.path.stat().st_ino == old_inode:
        pytest.skip("filesystem reused the inode")
    r = env.index()
    assert r.files_unchanged == 0 and r.messages_added == n
    assert env.one("SELECT count(*) FROM messages") == n
    assert env.fts_count("flaky") == 1
    after = snapshot(env)
    assert after["messages"] == before["messages"] and after["turns"] == before["turns"]
    assert after["extractions"] == before["extractions"]


def test_deleted_transcript_keeps_memory_and_is_marked_missing(env: Env) -> None:
    make.build_corpus(env.root)
    env.index()
    fx = next(env.root.rglob(f"{make.uid('fork')}.jsonl"))
    sid = make.uid("fork")
    n = env.one("SELECT count(*) FROM messages WHERE session_id=?", sid)
    data = fx.read_bytes()
    fx.unlink()
    r = env.index()
    assert r.files_missing == 1
    assert env.one("SELECT count(*) FROM messages WHERE session_id=?", sid) == n == 6
    assert env.rows("SELECT missing FROM ingest_state WHERE path=?", str(fx)) == [(1,)]
    assert env.one("SELECT source_state FROM sessions WHERE session_id=?", sid) == "missing"
    assert env.one("SELECT count(*) FROM sessions WHERE source_state='missing'") == 1
    with open_reader(env.db) as conn:
        assert {h.session_id for h in search_messages(conn, "jitter")} == {sid}
    # it comes back (e.g. restored from a backup): present again, nothing duplicated
    fx.write_bytes(data)
    env.index()
    assert env.rows("SELECT missing FROM ingest_state WHERE path=?", str(fx)) == [(0,)]
    assert env.one("SELECT source_state FROM sessions WHERE session_id=?", sid) == "present"
    assert env.one("SELECT count(*) FROM messages WHERE session_id=?", sid) == n


def test_deleted_parent_of_resumed_session_marks_the_parent(env: Env) -> None:
    fx = place(env, "resumed")
    env.index()
    fx.extra[0].unlink()  # the parent session's own file
    env.index()
    states = dict(env.rows("SELECT session_id, source_state FROM sessions"))
    assert states == {fx.ids["parent_sid"]: "missing", fx.ids["sid"]: "present"}


# ---------------------------------------------------------------------------------------------------
# the session tree (W6–W8)
# ---------------------------------------------------------------------------------------------------


def test_fork_main_branch(env: Env) -> None:
    fx = place(env, "fork")
    env.index()
    on_main = {u: m["on_main"] for u, m in env.messages().items()}
    ids = fx.ids
    assert on_main == {
        ids["p1"]: 1,
        ids["a1"]: 1,
        ids["old_p"]: 0,
        ids["old_a"]: 0,
        ids["new_p"]: 1,
        ids["new_a"]: 1,
    }
    assert env.one("SELECT main_leaf FROM sessions") == ids["new_a"]
    # continuing the abandoned branch makes it the live one again
    new = continue_session(fx, ids["old_a"], "actually keep the jitter", "Restored jitter.", version="1.0.43")
    append(fx.path, new)
    env.index()
    on_main = {u: m["on_main"] for u, m in env.messages().items()}
    assert on_main[ids["old_p"]] == on_main[ids["old_a"]] == on_main[new[0]["uuid"]] == 1
    assert on_main[ids["new_p"]] == on_main[ids["new_a"]] == 0


def test_parallel_results_and_progress_stay_on_main(env: Env) -> None:
    fx = place(env, "parallel_tools")
    place(env, "progress_chain")
    env.index()
    msgs = env.messages()
    assert all(m["on_main"] == 1 for m in msgs.values())
    assert msgs[fx.ids["r1"]]["parent_uuid"] == fx.ids["t1"]
    assert msgs[fx.ids["answer"]]["parent_uuid"] == fx.ids["r2"]


def test_compactions(env: Env) -> None:
    fx = place(env, "compaction")
    env.index()
    ids = fx.ids
    assert env.rows(
        "SELECT uuid, session_id, kind, trigger, pre_tokens, logical_parent_uuid FROM compactions ORDER BY ts"
    ) == [
        (ids["b1"], ids["sid"], "compact", "auto", 176700, ids["a1"]),
        (ids["b2"], ids["sid"], "compact", "manual", 90000, make.uid("nowhere")),
    ]
    assert env.one("SELECT n_compactions FROM sessions") == 2
    msgs = env.messages()
    assert msgs[ids["b1"]]["parent_uuid"] == ids["a1"]
    assert msgs[ids["b2"]]["parent_uuid"] == ids["a2"]  # dangling: the preceding record (via turn_duration)
    assert msgs[ids["cs1"]]["kind"] == msgs[ids["cs2"]]["kind"] == "compact_summary"
    # the bridges keep the whole conversation on the main branch
    assert all(m["on_main"] == 1 for m in msgs.values())
    assert env.rows("SELECT duration_ms FROM turn_durations") == [(5321,)]


def test_dangling_bridge_resolves_across_runs(env: Env) -> None:
    """The record before a dangling compact_boundary was indexed by an earlier run."""
    fx = place(env, "compaction")
    data = fx.path.read_bytes()
    cut = data.rfind(b"\n", 0, data.index(fx.ids["b2"].encode())) + 1
    fx.path.write_bytes(data[:cut])
    env.index()
    fx.path.write_bytes(data)
    env.index()
    assert env.messages()[fx.ids["b2"]]["parent_uuid"] == fx.ids["a2"]


def test_resumed_session_is_stored_once(env: Env, tmp_path: Path) -> None:
    fx = place(env, "resumed")
    env.index()
    msgs = env.messages()
    ids = fx.ids
    assert len(msgs) == len(ids["copied"]) + 2
    assert {msgs[u]["session_id"] for u in ids["copied"]} == {ids["parent_sid"]}
    assert env.one("SELECT resumed_from FROM sessions WHERE session_id=?", ids["sid"]) == ids["parent_sid"]
    assert env.one("SELECT resumed_from FROM sessions WHERE session_id=?", ids["parent_sid"]) is None
    counts = dict(env.rows("SELECT session_id, n_messages FROM sessions"))
    assert counts == {ids["parent_sid"]: 4, ids["sid"]: 2}
    assert msgs[ids["p3"]]["parent_uuid"] == ids["copied"][-1]
    # the copies are attributed to the parent session's own file, not to the resume copy
    sources = dict(env.rows("SELECT m.uuid, f.path FROM messages m JOIN ingest_state f ON f.id = m.file_id"))
    assert {sources[u] for u in ids["copied"]} == {str(fx.extra[0])}
    assert {sources[ids["p3"]], sources[ids["a3"]]} == {str(fx.path)}
    # the same rows whichever file is indexed first
    other = Env(tmp_path / "other")
    fx2 = place(other, "resumed")
    moved = fx2.path.with_suffix(".hold")
    fx2.path.rename(moved)
    other.index()  # parent session file alone
    moved.rename(fx2.path)
    other.index()
    assert snapshot(other)["messages"] == snapshot(env)["messages"]
    assert snapshot(other)["sessions"] == snapshot(env)["sessions"]


def test_take_over_inside_one_batch_leaves_the_fts_tables_consistent(env: Env) -> None:
    """The resume copy (the bigger file, parsed first) stores the parent's records, then the parent's
    own file takes them over in the same transaction: the FTS entries of rows written earlier in that
    batch (added only before it commits) are in place before they are deleted."""
    fx = place(env, "resumed")
    env.index()
    with env.conn() as c:
        for fts in ("messages_fts", "extractions_fts"):
            c.execute(f"INSERT INTO {fts}({fts}, rank) VALUES('integrity-check', 1)")
    with_term = [m for m in env.messages().values() if "pagination" in m["text"].lower()]
    assert len(with_term) >= 3 and env.fts_count("pagination") == len(with_term)
    copied = set(fx.ids["copied"])
    extracted = [
        (i, t) for i, t, u in env.rows("SELECT id, content, source_uuid FROM extractions") if u in copied
    ]
    assert extracted
    for rid, content in extracted:
        word = max(content.split(), key=len)
        hits = env.rows("SELECT rowid FROM extractions_fts WHERE extractions_fts MATCH ?", f'"{word}"')
        assert (rid,) in hits


def test_extractions_taken_over_from_a_resume_copy_are_not_counted_again(env: Env) -> None:
    """The resume copy (parsed first) stores the parent's extractions, then the parent's own file takes
    them over and writes them again: the run reports the rows it added, not the rows it wrote, so the
    figure does not depend on the order the files reach the writer (which varies with --jobs)."""
    place(env, "resumed")
    r = env.index()
    assert env.one("SELECT count(*) FROM extractions") > 0
    assert r.extractions_added == env.one("SELECT count(*) FROM extractions")
    assert r.messages_added == env.one("SELECT count(*) FROM messages")


def test_vocabulary_names_every_project_whose_operator_typed_the_term(env: Env) -> None:
    """A mixed-case name typed in prompts of two projects is listed with both (the sessions of each
    file name its project; the query joins them to the file's vocabulary counters)."""
    for name in ("alpha", "beta"):
        s = make.Session(make.uid("vocab", name), cwd=f"/home/dev/projects/{name}")
        for _ in range(2):
            s.prompt("the parseConfig loader fails on empty files, fix parseConfig")
            s.response(text="Fixed.")
        s.write(env.root / make.slug(s.cwd) / f"{s.session_id}.jsonl")
    env.index()
    assert env.rows("SELECT projects FROM vocabulary WHERE term = 'parseConfig'") == [("alpha,beta",)]


def test_subagents_are_linked_in_all_layouts(env: Env) -> None:
    inline = place(env, "inline_subagent")
    flat = place(env, "flat_subagent")
    nested = place(env, "nested_subagent")
    env.index()
    agents = {
        r[0]: r[1:]
        for r in env.rows(
            "SELECT agent_id, session_id, layout, spawn_tool_use_id, subagent_type, is_compaction_helper FROM agents"
        )
    }
    inline_id = next(a for a in agents if a.startswith("inline-"))
    assert agents[inline_id] == (inline.ids["sid"], "inline", inline.ids["tool_use_id"], None, 0)
    assert agents[flat.ids["agent_id"]] == (
        flat.ids["sid"],
        "flat",
        flat.ids["tool_use_id"],
        "general-purpose",
        0,
    )
    assert agents["9f8e7d6c"][:3] == (flat.ids["sid"], "flat", None)  # a Warmup agent: nobody spawned it
    assert agents[nested.ids["agent_id"]] == (
        nested.ids["sid"],
        "nested",
        nested.ids["tool_use_id"],
        "claude-code-guide",
        0,
    )
    assert agents["acompact-fffbd0"][:2] == (nested.ids["sid"], "compaction")
    assert agents["acompact-fffbd0"][4] == 1
    assert len(agents) == 5
    # models of the session and its subagents, each once
    assert (
        env.one("SELECT models FROM sessions WHERE session_id=?", nested.ids["sid"])
        == "claude-opus-4-5-20251101,claude-sonnet-4-5-20250929"
    )
    msgs = env.messages()
    # subagent messages belong to the parent session, flagged and attributed
    for fx in (flat, nested):
        agent_msgs = [m for m in msgs.values() if m["agent_id"] == fx.ids["agent_id"]]
        assert len(agent_msgs) == 2 and all(m["is_sidechain"] == 1 for m in agent_msgs)
        assert {m["session_id"] for m in agent_msgs} == {fx.ids["sid"]}
    assert msgs[nested.ids["compact_prompt"]]["kind"] == "compact_prompt"
    assert msgs[inline.ids["agent_prompt"]]["kind"] == "agent_prompt"
    assert (
        msgs[inline.ids["agent_prompt"]]["agent_id"]
        == msgs[inline.ids["agent_answer"]]["agent_id"]
        == inline_id
    )
    # sidechains do not count as the session's prompts
    assert env.one("SELECT n_prompts FROM sessions WHERE session_id=?", flat.ids["sid"]) == 1
    # agent turns are attributed to the agent
    assert (
        env.one("SELECT count(*) FROM turns WHERE agent_id=? AND is_sidechain=1", nested.ids["agent_id"]) == 1
    )


def test_subagent_files_first_seen_mid_write(env: Env) -> None:
    """Agent files caught while their first prompt line was still being written."""
    fx = place(env, "nested_subagent")
    agent_path, compact_path = fx.extra
    data, cdata = agent_path.read_bytes(), compact_path.read_bytes()
    agent_path.write_bytes(data[:60])
    # the helper's leading system-reminder is complete, its summarisation prompt is not
    cut = cdata.index(fx.ids["compact_prompt"].encode())
    compact_path.write_bytes(cdata[:cut])
    env.index()
    assert env.rows("SELECT agent_id FROM agents") == []
    assert env.one("SELECT count(*) FROM messages WHERE uuid=?", fx.ids["compact_reminder"]) == 1
    agent_path.write_bytes(data)
    compact_path.write_bytes(cdata)
    env.index()
    assert env.rows(
        "SELECT session_id, layout, spawn_tool_use_id FROM agents WHERE agent_id=?", fx.ids["agent_id"]
    ) == [(fx.ids["sid"], "nested", fx.ids["tool_use_id"])]
    assert env.rows(
        "SELECT session_id, layout, is_compaction_helper FROM agents WHERE agent_id=?",
        fx.ids["compact_agent"],
    ) == [(fx.ids["sid"], "compaction", 1)]


def test_summary_title_resolves_across_files(env: Env, tmp_path: Path) -> None:
    fx = place(env, "summary_other_file")
    env.index()
    titles = {r[0]: r[1:] for r in env.rows("SELECT session_id, title, title_source FROM sessions")}
    assert titles[fx.ids["titled_sid"]] == (fx.ids["title"], "summary")
    assert titles[fx.ids["sid"]] == ("start on the release notes", "first_prompt")
    # the titled session's file arrives after the file holding the summary
    other = Env(tmp_path / "other")
    fx2 = place(other, "summary_other_file")
    titled = fx2.extra[0]
    held = titled.with_suffix(".hold")
    titled.rename(held)
    other.index()
    held.rename(titled)
    other.index()
    assert other.one("SELECT title FROM sessions WHERE session_id=?", fx.ids["titled_sid"]) == fx.ids["title"]


def test_turns_one_row_per_response_with_largest_usage(env: Env) -> None:
    fx = place(env, "split_assistant")
    env.index()
    rows = env.rows(
        "SELECT message_id, request_id, output_tokens, input_tokens, cache_read_tokens, "
        "cache_1h_tokens FROM turns ORDER BY ts"
    )
    assert rows == [
        (fx.ids["msg_id"], fx.ids["request_id"], fx.ids["max_out"], 3, 12000, 250),
        (fx.ids["msg_id2"], rows[1][1], fx.ids["max_out2"], 3, 12000, 250),
    ]


def test_turns_dedupe_across_runs(env: Env) -> None:
    fx = place(env, "split_assistant")
    data = fx.path.read_bytes()
    cut = data.rfind(b"\n", 0, data.index(fx.ids["tool_use"].encode())) + 1  # before the last split record
    fx.path.write_bytes(data[:cut])
    env.index()
    assert env.rows("SELECT output_tokens FROM turns") == [(80,)]
    fx.path.write_bytes(data)
    env.index()
    assert env.rows("SELECT message_id, output_tokens FROM turns ORDER BY ts") == [
        (fx.ids["msg_id"], fx.ids["max_out"]),
        (fx.ids["msg_id2"], fx.ids["max_out2"]),
    ]


def test_user_kinds_and_counts(env: Env) -> None:
    fx = place(env, "user_kinds")
    env.index()
    msgs = env.messages()
    for kind in (
        "meta",
        "command",
        "command_output",
        "bash_input",
        "system_reminder",
        "interrupt",
        "compact_summary",
    ):
        assert msgs[fx.ids[kind]]["kind"] == kind
    assert env.one("SELECT n_prompts FROM sessions") == 3  # prompt, prompt_with_reminder, image_prompt
    assert env.one("SELECT first_prompt FROM sessions") == "fix the flaky login test"


def test_private_and_thinking_text_are_never_stored(env: Env) -> None:
    make.build_corpus(env.root)
    env.index()
    needles = [make.PRIVATE_SECRET[:7], "SECRET-THINKING", "private reasoning"]
    conn = env.conn()
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        for row in conn.execute(f"SELECT * FROM {t}"):
            for v in row:
                text = unpack(v) if t == "messages" and isinstance(v, bytes) else str(v)
                for n in needles:
                    assert n not in text, (t, n)
    # and the contentless FTS holds none of their terms
    for term in ("hunter2", "lying", "reasoning"):
        assert env.fts_count(term) == 0, term
    assert env.fts_count("dashboard") >= 1


def test_unknown_types_do_not_break_the_file(env: Env) -> None:
    fx = place(env, "unknown_types")
    r = env.index()
    assert r.bad_lines == {"not_object": 2}
    assert set(env.messages()) == {fx.ids["prompt"], fx.ids["answer"]}
    assert env.messages()[fx.ids["answer"]]["parent_uuid"] == fx.ids["prompt"]


def test_empty_file_is_tracked(env: Env) -> None:
    place(env, "empty")
    r = env.index()
    assert r.files == 1 and r.records == 0
    assert env.rows("SELECT size, offset, missing FROM ingest_state") == [(0, 0, 0)]
    assert env.index().files_unchanged == 1


# ---------------------------------------------------------------------------------------------------
# search (I2, I7)
# ---------------------------------------------------------------------------------------------------


@pytest.fixture
def ident_env(env: Env) -> tuple[Env, Fixture]:
    make.build_corpus(env.root)
    fx = make.quirk_identifiers(env.root / make.slug("/home/dev/projects/identifiers"))
    env.index()
    return env, fx


@pytest.mark.parametrize(
    "query",
    [
        "config",
        "parseConfig",
        "ERR_TIMEOUT",
        "err_timeout",
        "db.py",
        "src/index/db.py",
        "TIMEOUT",
        "parse config",
    ],
)
def test_search_finds_identifiers(ident_env: tuple[Env, Fixture], query: str) -> None:
    env, fx = ident_env
    with open_reader(env.db) as conn:
        hits = search_messages(conn, query, limit=5)
    assert fx.ids["prompt"] in [h.uuid for h in hits], query


@pytest.mark.parametrize("query", ["load_user_settings", "settings", "user settings", "user_settings"])
def test_search_finds_snake_case(ident_env: tuple[Env, Fixture], query: str) -> None:
    env, fx = ident_env
    with open_reader(env.db) as conn:
        hits = search_messages(conn, query, limit=5)
    assert fx.ids["answer"] in [h.uuid for h in hits], query


@pytest.mark.parametrize("query,target", [("parse_config", "prompt"), ("loadUserSettings", "answer")])
def test_search_identifier_across_naming_styles(
    ident_env: tuple[Env, Fixture], query: str, target: str
) -> None:
    env, fx = ident_env
    with open_reader(env.db) as conn:
        hits = search_messages(conn, query, limit=5)
    assert fx.ids[target] in [h.uuid for h in hits]


def test_search_results_and_sessions(ident_env: tuple[Env, Fixture]) -> None:
    env, fx = ident_env
    with open_reader(env.db) as conn:
        hits = search_messages(conn, "ERR_TIMEOUT", limit=5)
        h = hits[0]
        assert (h.session_id, h.role, h.kind, h.cwd) == (fx.ids["sid"], "user", "prompt", make.CWD_B)
        assert h.source_file == str(fx.path) and "ERR" in h.snippet
        sessions = search_sessions(conn, "parseConfig ERR_TIMEOUT", limit=3)
        assert sessions[0].session_id == fx.ids["sid"]
        assert sessions[0].title and sessions[0].title.startswith("parseConfig throws")
        # nothing that is not there, and FTS syntax is not an error
        assert search_messages(conn, "zzyzx_nonexistent_token") == []
        for q in ('"unbalanced', "a AND OR", "NEAR(", "*", "col:umn", "-x", "^start"):
            search_messages(conn, q)


# ---------------------------------------------------------------------------------------------------
# parallel parse (I6)
# ---------------------------------------------------------------------------------------------------


def test_jobs_two_equals_jobs_one(tmp_path: Path) -> None:
    one, two = Env(tmp_path / "one"), Env(tmp_path / "two")
    make.build_corpus(one.root)
    make.build_corpus(two.root)
    r1 = one.index(jobs=1)
    r2 = two.index(jobs=2)
    assert (r1.files, r1.records, r1.messages_added, r1.extractions_added, r1.bad_lines) == (
        r2.files,
        r2.records,
        r2.messages_added,
        r2.extractions_added,
        r2.bad_lines,
    )
    s1, s2 = snapshot(one), snapshot(two)
    assert set(s1) >= rows.every_table(one.db) - rows.NOT_COMPARED
    for table in s1:
        assert s1[table] == s2[table], table


# ---------------------------------------------------------------------------------------------------
# issue 10: re-reads, keys and detection give what one clean full index gives
# ---------------------------------------------------------------------------------------------------


def operator_session(project_dir: Path, tag: str, goal_last: bool = True) -> Path:
    """A session with a goal, a failed attempt and a ban, then a second goal on its last line."""
    sid = make.uid("operator", tag)
    s = make.Session(sid, cwd="/home/dev/projects/ops")
    s.prompt("the goal is to ship the incremental indexer this week")
    call = s.response(tools=[("Bash", {"command": "pytest -q"})])[-1]
    s.tool_result(call, "3 failed", is_error=True)
    s.response(text="That approach failed because the lock is held by the writer.")
    s.prompt("never use print for logging in this repo")
    if goal_last:
        s.prompt("the goal is now to add vectors to the search")
    return make.write(project_dir / f"{sid}.jsonl", s.records)


def clean(tmp_path: Path, like: Env, name: str = "clean") -> dict[str, list[tuple[Any, ...]]]:
    """A full index from scratch of a copy of `like`'s tree."""
    other = Env(tmp_path / name)
    shutil.copytree(like.root, other.root, dirs_exist_ok=True, symlinks=True)
    other.index()
    return snapshot(other)


def assert_same(a: dict[str, list[tuple[Any, ...]]], b: dict[str, list[tuple[Any, ...]]]) -> None:
    for table in b:
        assert a[table] == b[table], table


def test_full_reindex_and_truncation_keep_goals_and_failures_once(env: Env, tmp_path: Path) -> None:
    path = operator_session(env.root / "-ops", "dup")
    other = make.Session(
        make.uid("operator", "other"), cwd="/home/dev/projects/other", t0=make.T0.replace(hour=20)
    )
    other.prompt("never commit generated files")
    make.write(env.root / "-other" / f"{other.session_id}.jsonl", other.records)
    env.index()
    counts = {t: env.one(f"SELECT count(*) FROM {t}") for t in ("goal_stack", "failed_attempts", "bans")}
    assert counts == {"goal_stack": 2, "failed_attempts": 1, "bans": 2}
    env.index(full=True)  # (freed extraction ids come back in the other project: no clash either)
    env.index(full=True)
    assert {t: env.one(f"SELECT count(*) FROM {t}") for t in counts} == counts
    with env.conn() as conn:
        goals = list_goals(
            conn, status=None, scope="global", cwd=None, since=None, limit=50, now=make.T0 + timedelta(days=1)
        ).items
        failed = list_failed_attempts(conn, scope="global", cwd=None, since=None, limit=50).items
    assert len(goals) == 2 and len(failed) == 1
    assert [g["status"] for g in goals] == ["active", "paused"]  # the newer goal paused the first
    # drop the last line (the second goal): its goal goes, and the first one is active again
    path.write_bytes(b"\n".join(path.read_bytes().splitlines()[:-1]) + b"\n")
    env.index()
    assert env.rows("SELECT content, status FROM goal_stack") == [
        ("the goal is to ship the incremental indexer this week", "active")
    ]
    assert_same(snapshot(env), clean(tmp_path, env))


def test_non_utf8_folder_and_file_names_are_indexed_losslessly(env: Env) -> None:
    raw_dir = os.fsencode(env.root) + b"/-home-dev-caf\xe9"
    os.mkdir(raw_dir)
    s = make.Session(make.uid("odd-name"), cwd="/home/dev/cafe")
    s.prompt("a prompt in an oddly named file")
    real = os.fsdecode(raw_dir + b"/se\xffssion.jsonl")
    make.write(Path(real), s.records)
    r = env.index()
    assert r.messages_added == 1
    (key,) = [p for (p,) in env.rows("SELECT path FROM ingest_state")]
    assert key_path(key) == real and path_key(real) == key
    assert env.index().files_unchanged == 1  # the stored key matches the disk again
    os.unlink(real)
    assert env.index().files_missing == 1


def test_readers_find_files_by_the_names_users_give(env: Env, tmp_path: Path) -> None:
    """Keys are canonical: a hook's transcript_path through a symlink, and an odd file name on disk,
    still find their rows."""
    link = tmp_path / "link"
    link.symlink_to(env.root, target_is_directory=True)
    path = operator_session(env.root / "-ops", "reader")
    odd = Path(os.fsdecode(os.fsencode(env.root) + b"/-ops/\xff.jsonl"))
    odd.write_bytes(path.read_bytes().replace(b"the goal is", b"the aim is"))
    run_index(env.db, [link])
    with env.conn() as conn:
        assert indexed_offset(conn, str(link / "-ops" / path.name)) == path.stat().st_size
        assert dict((k, ok) for k, ok, _ in doctor(conn))["sources on disk"]


def test_relative_absolute_and_symlinked_roots_are_one_root(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator_session(env.root / "-ops", "roots")
    make.quirk_split_assistant(env.root / "-split")
    monkeypatch.chdir(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(env.root, target_is_directory=True)
    for roots in (
        [Path("projects")],
        [env.root],
        [link],
        [env.root, Path("projects"), link / ".." / "projects"],
    ):
        assert run_index(env.db, roots).errors == []
    assert env.one("SELECT count(*) FROM ingest_state") == 2
    assert_same(snapshot(env), clean(tmp_path, env))


def test_an_index_holding_a_file_under_two_names_is_repaired(env: Env, tmp_path: Path) -> None:
    """Indexes made before roots were canonical hold the same file under a second (symlinked) name."""
    operator_session(env.root / "-ops", "legacy")
    link = tmp_path / "link"
    link.symlink_to(env.root, target_is_directory=True)
    env.index()
    with env.conn() as conn:  # what an old run through the symlink left: a second copy of every file
        conn.execute(
            """INSERT INTO ingest_state(path, root, project_dir, layout, size, mtime_ns, inode, offset,
                        head_hash, carry, records, lines, bad_lines)
                        SELECT replace(path, ?1, ?2), ?2, project_dir, layout, size, mtime_ns, inode, offset,
                        head_hash, carry, records, lines, bad_lines FROM ingest_state""",
            (str(env.root), str(link)),
        )
        conn.execute("""INSERT INTO profile_counters(file_id, profile, key, value)
                        SELECT (SELECT max(id) FROM ingest_state), profile, key, value FROM profile_counters""")
    env.index()
    assert env.one("SELECT count(*) FROM ingest_state") == 1
    assert_same(snapshot(env), clean(tmp_path, env))


def test_quirk_corpus_read_in_three_increments_equals_one_pass(env: Env, tmp_path: Path) -> None:
    """Every file cut at a third and two thirds (inside lines): Task results named across chunks,
    subagents linked by id after a link by prompt, a session's cwd changing along it, resume copies."""
    make.build_corpus(env.root)
    whole = {p: p.read_bytes() for p in env.root.rglob("*.jsonl")}
    for frac in (1 / 3, 2 / 3, 1):
        for p, data in whole.items():
            p.write_bytes(data[: int(len(data) * frac)])
        env.index(jobs=2)
    assert_same(snapshot(env), clean(tmp_path, env))


def test_increments_count_each_session_once(env: Env, tmp_path: Path) -> None:
    path = operator_session(env.root / "-ops", "inc")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    env.index()
    path.write_bytes(data)
    env.index()
    assert_same(snapshot(env), clean(tmp_path, env))


@pytest.mark.parametrize("order", ["abc", "cba", "bca", "bac", "bc", "cb"])
def test_copies_of_a_record_give_the_same_index_in_any_order(tmp_path: Path, order: str) -> None:
    """A parent session's records copied into two resumed sessions: the parent's own file keeps them,
    and without it the first path does, whichever file is indexed first."""
    env = Env(tmp_path / "run")
    fx = make.quirk_resumed(env.root / "-resume")
    c2 = make.Session(make.uid("resume-child-2"), t0=make.T0.replace(hour=18))
    c2.last = fx.ids["copied"][-1]
    c2.prompt("document the cursor format")
    c2.response(text="Documented it in the API guide.")
    second = fx.path.with_name(f"{c2.session_id}.jsonl")
    second.write_bytes(fx.extra[0].read_bytes() + b"".join(make.dumps(r) + b"\n" for r in c2.records))
    files = {"a": fx.extra[0], "b": fx.path, "c": second}
    held = {k: p.with_suffix(".held") for k, p in files.items()}
    for k in files:
        files[k].rename(held[k])
    for k in order:  # indexed one at a time, in this order ("a", the parent's own file, maybe never)
        held[k].rename(files[k])
        env.index()
    want = clean(tmp_path, env)
    assert_same(snapshot(env), want)
    # and with the file that holds them gone from disk after all that, the records stay
    for k in order:
        files[k].unlink()
    env.index()
    assert len(snapshot(env)["messages"]) == len(want["messages"])


def long_session(path: Path, last: str) -> Path:
    s = make.Session(make.uid("long", path.name), cwd="/home/dev/projects/long")
    for i in range(30):
        s.prompt(f"step {i}: refactor module number {i} and keep its tests green")
        s.response(text=f"Done with step {i}; all tests pass.")
    s.prompt(last)
    return make.write(path / f"{s.session_id}.jsonl", s.records)


def test_editing_the_last_indexed_lines_is_detected(env: Env, tmp_path: Path) -> None:
    path = long_session(env.root / "-long", "finally raise the timeout to thirty seconds")
    env.index()
    data = path.read_bytes()
    edited = data.replace(b"raise the timeout", b"raise the deadlin")
    assert len(edited) == len(data) > 2 * 4096 and edited[:-4096] == data[:-4096] and edited != data
    path.write_bytes(edited)  # an editor saving in place: same size, same head, a new mtime
    env.index()
    assert env.fts_count("deadlin") == 1 and env.fts_count("timeout") == 0
    assert_same(snapshot(env), clean(tmp_path, env, "clean1"))
    # an edit before the cursor of a file that also grew: re-read from the start, not appended to
    more = make.Session(make.uid("long", "-long"), seq=900).prompt("and log it")
    path.write_bytes(edited.replace(b"deadlin", b"interva") + make.dumps(more) + b"\n")
    env.index()
    assert env.fts_count("interva") == 1 and env.fts_count("deadlin") == 0
    assert_same(snapshot(env), clean(tmp_path, env, "clean2"))


def test_a_rewrite_that_keeps_size_mtime_and_inode_is_read_only_by_full(env: Env) -> None:
    """The documented rule (docs/architecture.md): a file whose stat is unchanged is not opened."""
    path = long_session(env.root / "-long", "finally raise the timeout to thirty seconds")
    env.index()
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"raise the timeout", b"raise the deadlin"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    env.index()
    assert env.fts_count("deadlin") == 0
    env.index(full=True)
    assert env.fts_count("deadlin") == 1 and env.fts_count("timeout") == 0


def test_v3_index_migrates_without_drop_column(tmp_path: Path) -> None:
    """v4 rebuilds extractions instead of ALTER TABLE … DROP COLUMN (SQLite 3.35+); rows and FTS survive."""
    db = tmp_path / "old.db"
    conn = sqlite.connect(db, isolation_level=None)
    v1 = schema._V1.replace(
        "ts TEXT, file_id INTEGER,\n  UNIQUE(kind",
        "ts TEXT, scope TEXT DEFAULT 'project', file_id INTEGER,\n  UNIQUE(kind",
    )
    assert v1 != schema._V1
    conn.executescript(v1 + schema._V3 + "INSERT INTO schema_meta VALUES('schema_version', '3');")
    conn.execute("""INSERT INTO extractions(id, kind, content, source_uuid, project_key, scope)
                    VALUES(7, 'ban', 'never force-push to main', 'u1', '/p', 'project')""")
    conn.execute(
        "INSERT INTO extractions_fts(rowid, content, context) SELECT id, content, context FROM extractions"
    )
    conn.close()
    with open_existing_writer(db) as w:
        cols = [r[1] for r in w.execute("PRAGMA table_info(extractions)")]
        assert "scope" not in cols and "file_id" in cols
        assert w.execute("""SELECT e.id, e.content FROM extractions_fts f JOIN extractions e ON e.id = f.rowid
                            WHERE extractions_fts MATCH 'force'""").fetchall() == [
            (7, "never force-push to main")
        ]
        assert {r[1] for r in w.execute("PRAGMA index_list(extractions)")} >= {
            "extractions_kind",
            "extractions_file",
        }
        assert current_version(w) == schema.SCHEMA_VERSION
    assert "DROP COLUMN" not in " ".join(m for m in schema.MIGRATIONS.values() if isinstance(m, str)).upper()


def test_writers_name_their_columns(env: Env) -> None:
    """An index whose tables gained a column (a newer schema, a local tool) is still written correctly."""
    make.build_corpus(env.root)
    with open_writer(env.db) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND sql NOT LIKE "
                "'%VIRTUAL%' AND name NOT LIKE '%fts%' AND name != 'schema_meta'"
            )
        ]
        for t in tables:
            conn.execute(f"ALTER TABLE {t} ADD COLUMN zz_extra TEXT")
    operator_session(env.root / "-ops", "columns")
    env.index()
    assert env.one("SELECT count(*) FROM goal_stack") == env.one(
        "SELECT count(*) FROM extractions WHERE kind='goal'"
    )
    assert env.one("SELECT count(*) FROM projects") > 0 and env.one("SELECT count(*) FROM machines") > 0
