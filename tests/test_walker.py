"""Walker unit tests (W1–W9): reader, tolerant decoding, byte-exact cursor, kinds, parent tree."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fixtures import make
from fixtures.make import Fixture

from lib.model import Carry, FileChunk
from lib.reader import BLOCK, decode, iter_lines
from lib.walker import FileInfo, parse_file


def info(fx: Fixture) -> FileInfo:
    return FileInfo(fx.layout, fx.stem, fx.agent_id)


def parse(path: Path, start: int = 0, carry: Carry | None = None, fi: FileInfo | None = None) -> FileChunk:
    fi = fi or FileInfo("main", path.name[: -len(".jsonl")])
    return parse_file(str(path), start, carry or Carry(), fi)


def by_uuid(chunk: FileChunk) -> dict:
    return {m.uuid: m for m in chunk.messages}


# ---------------------------------------------------------------------------------------------------
# reader
# ---------------------------------------------------------------------------------------------------


def test_iter_lines_offsets_and_unterminated_tail(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"ab\n\ncdef\nxyz")
    lines = list(iter_lines(str(p)))
    assert lines == [
        (0, b"ab", True),
        (3, b"", True),
        (4, b"cdef", True),
        (9, b"xyz", False),
    ]
    # from a byte offset in the middle of the file
    assert [(o, d) for o, d, _ in iter_lines(str(p), 4)] == [(4, b"cdef"), (9, b"xyz")]
    assert list(iter_lines(str(p), p.stat().st_size)) == []


def test_iter_lines_across_block_boundaries(tmp_path: Path) -> None:
    p = tmp_path / "big.jsonl"
    long = b"x" * (BLOCK * 2 + 17)
    p.write_bytes(b"short\n" + long + b"\nend\n")
    lines = list(iter_lines(str(p)))
    assert [len(d) for _, d, _ in lines] == [5, len(long), 3]
    assert lines[1][0] == 6 and lines[2][0] == 6 + len(long) + 1
    assert all(t for _, _, t in lines)


def test_a_line_of_many_blocks_is_read_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each block used to be glued to the line read so far (quadratic: 200 MB line, 30 s)."""
    monkeypatch.setattr("lib.reader.BLOCK", 1024)
    p = tmp_path / "huge.jsonl"
    long = b"y" * (8 << 20)  # 8,192 blocks
    p.write_bytes(b"a\n" + long + b"\nb\n" + long)
    t0 = time.perf_counter()
    lines = list(iter_lines(str(p)))
    assert time.perf_counter() - t0 < 5  # the quadratic version copies ~64 GB here
    assert [(o, len(d), t) for o, d, t in lines] == [
        (0, 1, True),
        (2, len(long), True),
        (3 + len(long), 1, True),
        (5 + len(long), len(long), False),
    ]
    assert lines[1][1] == long


def test_decode_reasons() -> None:
    rec = make.dumps({"type": "user", "uuid": "u1"})
    assert decode(rec) == ([{"type": "user", "uuid": "u1"}], None, False)
    assert decode(b"[1, 2]") == ([], "not_object", False)
    assert decode(b'"text"') == ([], "not_object", False)
    assert decode(b"   ")[1] == "blank"
    assert decode(b'{"type":"user","message":"unterminated')[1] == "invalid_json"
    assert decode(b'{"a": "\xff\xfe never closed')[1] == "invalid_utf8"
    # two objects glued together: both recovered
    recs, bad, repaired = decode(b'{"a":1}{"b":2}')
    assert (recs, bad, repaired) == ([{"a": 1}, {"b": 2}], None, True)
    # invalid UTF-8 inside a string: the record is recovered with a replacement character
    recs, bad, repaired = decode(b'{"text":"caf\xff!"}')
    assert bad is None and repaired and recs == [{"text": "caf\ufffd!"}]
    # a valid replacement character in the input is not mistaken for damage
    assert decode('{"t":"\ufffd"}'.encode()) == ([{"t": "\ufffd"}], None, False)


def test_too_deep_lines_are_bad_not_fatal() -> None:
    """orjson refuses nesting beyond 1024 levels and the stdlib fallback recursed until RecursionError."""
    assert decode(b'{"a":' * 2000 + b"1" + b"}" * 2000) == ([], "too_deep", False)
    assert decode(b"[" * 100_000) == ([], "too_deep", False)
    # invalid UTF-8 sends a deep line to the stdlib decoder: still too deep, not a crash
    assert decode(b'{"t":"\xff","d":' + b"[" * 50_000)[1] == "too_deep"
    # a record glued to a deep tail keeps the record
    recs, bad, repaired = decode(b'{"a":1}' + b"[" * 50_000)
    assert (recs, bad, repaired) == ([{"a": 1}], None, True)
    # deep but within the limit is a record like any other
    assert decode(b'{"a":' * 500 + b"1" + b"}" * 500)[1] is None


def test_lone_surrogate_escapes_become_replacement_characters() -> None:
    """`\\ud800` alone is valid JSON for the stdlib but cannot be stored as UTF-8 text."""
    recs, bad, repaired = decode(b'{"t":"a\\ud800b","\\udfffk":["\\ud83d\\ude00","\\udc00"]}')
    assert bad is None and repaired
    assert recs == [{"t": "a\ufffdb", "\ufffdk": ["\U0001f600", "\ufffd"]}]
    assert recs[0]["t"].encode("utf-8")


# ---------------------------------------------------------------------------------------------------
# line-level quirks
# ---------------------------------------------------------------------------------------------------


def test_bad_json_line_is_counted_and_skipped(tmp_path: Path) -> None:
    fx = make.quirk_bad_json(tmp_path)
    c = parse(fx.path)
    assert c.lines == 5
    assert dict(c.bad_lines) == {"invalid_json": 1}
    assert c.records == 4
    msgs = by_uuid(c)
    assert fx.ids["damaged"] not in msgs
    assert fx.ids["first"] in msgs and fx.ids["after"] in msgs
    # the record after the damaged line points to a uuid that no longer exists: an orphan
    after = msgs[fx.ids["after"]]
    assert after.parent_uuid == fx.ids["damaged"] and after.parent_external
    assert c.end == fx.path.stat().st_size


def test_glued_objects_are_both_kept(tmp_path: Path) -> None:
    fx = make.quirk_glued(tmp_path)
    c = parse(fx.path)
    assert c.lines == 4
    assert not c.bad_lines
    assert c.repaired["glued"] == 2
    assert c.records == 6  # 4 conversation records + summary + file-history-snapshot
    assert c.record_types["summary"] == 1 and c.record_types["file-history-snapshot"] == 1
    assert c.summaries == [(fx.ids["answer"], "Config loader rename")]
    msgs = by_uuid(c)
    assert set(msgs) == {fx.ids["prompt"], fx.ids["answer"], fx.ids["prompt2"], fx.ids["answer2"]}
    assert msgs[fx.ids["prompt2"]].parent_uuid == fx.ids["answer"]


def test_invalid_utf8_inside_string_is_recovered(tmp_path: Path) -> None:
    fx = make.quirk_invalid_utf8(tmp_path)
    c = parse(fx.path)
    assert c.lines == 3
    assert dict(c.bad_lines) == {"invalid_utf8": 1}
    assert c.repaired["recovered"] == 1
    msgs = by_uuid(c)
    p = msgs[fx.ids["prompt"]]
    assert p.kind == "prompt"
    assert "broken \ufffd\ufffd bytes" in p.text and "café" in p.text
    assert msgs[fx.ids["answer"]].parent_uuid == fx.ids["prompt"]


def test_complete_last_record_without_newline_is_consumed(tmp_path: Path) -> None:
    fx = make.quirk_no_final_newline(tmp_path)
    size = fx.path.stat().st_size
    c = parse(fx.path)
    assert c.lines == 3 and c.records == 3 and not c.bad_lines
    assert c.repaired["no_final_newline"] == 1
    assert c.end == size
    assert fx.ids["last"] in by_uuid(c)
    # Claude Code appends the next record right after it (the `}{` case, split across two runs)
    s = make.Session(fx.ids["sid"], version="2.0.55", seq=500)
    s.last = fx.ids["last"]
    nxt = s.response(text="You're welcome.")[-1]
    with fx.path.open("ab") as f:
        f.write(make.dumps(nxt) + b"\n")
    c2 = parse(fx.path, c.end, c.carry)
    assert [m.uuid for m in c2.messages] == [nxt["uuid"]]
    assert c2.messages[0].parent_uuid == fx.ids["last"]
    assert not c2.bad_lines
    assert c.lines + c2.lines == parse(fx.path).lines == 3  # one glued line, counted once


def test_newline_that_completes_a_consumed_record_is_not_a_bad_line(tmp_path: Path) -> None:
    """A record read before its newline was written: the newline that arrives next is no blank line."""
    fx = make.quirk_no_final_newline(tmp_path)
    full = parse(fx.path)
    s = make.Session(fx.ids["sid"], version="2.0.55", seq=500)
    s.last = fx.ids["last"]
    nxt = s.response(text="You're welcome.")[-1]
    with fx.path.open("ab") as f:
        f.write(b"\n" + make.dumps(nxt) + b"\n")
    c2 = parse(fx.path, full.end, full.carry)
    assert [m.uuid for m in c2.messages] == [nxt["uuid"]]
    assert not c2.bad_lines
    # lines are counted once, however the file was split between runs
    assert full.lines + c2.lines == parse(fx.path).lines == 4


def test_partial_last_line_is_left_for_the_next_run(tmp_path: Path) -> None:
    fx = make.quirk_partial_last_line(tmp_path)
    size = fx.path.stat().st_size
    c = parse(fx.path)
    partial_len = len(fx.path.read_bytes().rsplit(b"\n", 1)[1])
    assert c.end == size - partial_len  # the start of the unconsumed line, byte-exact
    assert fx.path.read_bytes()[c.end - 1 : c.end] == b"\n"
    assert c.lines == 2 and not c.bad_lines and not c.repaired
    assert fx.ids["partial"] not in by_uuid(c)
    # parsing again without new bytes yields nothing and keeps the cursor
    again = parse(fx.path, c.end, c.carry)
    assert again.messages == [] and again.end == c.end and again.lines == 0
    # the writer finishes the line: the next parse from the cursor yields the record
    with fx.path.open("ab") as f:
        f.write(fx.ids["rest"])
    c2 = parse(fx.path, c.end, c.carry)
    assert [m.uuid for m in c2.messages] == [fx.ids["partial"]]
    assert c2.messages[0].parent_uuid == fx.ids["answer"]
    assert c2.end == fx.path.stat().st_size and c2.lines == 1 and not c2.bad_lines


def test_partial_glued_tail_is_not_consumed(tmp_path: Path) -> None:
    """`{complete}{partial…` at the end of the file: the partial object must be re-read later."""
    fx = make.quirk_no_final_newline(tmp_path)
    s = make.Session(fx.ids["sid"], version="2.0.55", seq=500)
    s.last = fx.ids["last"]
    nxt = make.dumps(s.response(text="You're welcome.")[-1]) + b"\n"
    with fx.path.open("ab") as f:
        f.write(nxt[:40])  # mid-append, glued to the last record (no newline between them)
    c = parse(fx.path)
    with fx.path.open("ab") as f:
        f.write(nxt[40:])
    c2 = parse(fx.path, c.end, c.carry)
    got = [m.uuid for m in c.messages + c2.messages]
    assert got == [m.uuid for m in parse(fx.path).messages]
    assert len(got) == 4 and len(set(got)) == 4
    assert not c.bad_lines and not c2.bad_lines


def test_empty_file(tmp_path: Path) -> None:
    fx = make.quirk_empty(tmp_path)
    c = parse(fx.path)
    assert (c.lines, c.records, c.end, c.messages, dict(c.bad_lines)) == (0, 0, 0, [], {})
    assert c.sessions == {}


def test_megabyte_line_with_pasted_image(tmp_path: Path) -> None:
    fx = make.quirk_big_line(tmp_path)
    first = fx.path.read_bytes().split(b"\n", 1)[0]
    assert len(first) > BLOCK  # spans more than one read block
    c = parse(fx.path)
    assert c.lines == 2 and not c.bad_lines
    msgs = by_uuid(c)
    p = msgs[fx.ids["prompt"]]
    assert p.kind == "prompt"
    assert "[image]" in p.text and "blank sidebar" in p.text
    assert fx.ids["b64_head"] not in p.text and len(p.text) < 1000  # image bytes are not text
    assert msgs[fx.ids["answer"]].parent_uuid == fx.ids["prompt"]
    assert msgs[fx.ids["answer"]].byte_offset == len(first) + 1


# ---------------------------------------------------------------------------------------------------
# records, kinds, tree
# ---------------------------------------------------------------------------------------------------


def test_split_assistant_records(tmp_path: Path) -> None:
    fx = make.quirk_split_assistant(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    msgs = by_uuid(c)
    # thinking-only records are tree nodes, never messages; their text is dropped
    assert ids["thinking"] not in msgs and ids["answer_thinking"] not in msgs
    assert all("SECRET-THINKING" not in m.text and "private reasoning" not in m.text for m in c.messages)
    assert [m.kind for m in c.messages] == ["prompt", "text", "tool_use", "tool_result", "text"]
    # the text block's parent is the thinking record: resolved through it to the prompt
    assert msgs[ids["text"]].parent_uuid == ids["prompt"]
    assert msgs[ids["tool_use"]].parent_uuid == ids["text"]
    assert msgs[ids["result"]].parent_uuid == ids["tool_use"]
    assert msgs[ids["answer"]].parent_uuid == ids["result"]
    tu = msgs[ids["tool_use"]]
    assert tu.tool_name == "Read" and tu.tool_target and tu.tool_target.endswith("tests/test_cache.py")
    assert msgs[ids["text"]].message_id == tu.message_id == ids["msg_id"]
    # usage repeats on every record with growing output_tokens; one turn row per record here,
    # the writer keeps the largest (tested in test_index)
    turns = [t for t in c.turns if t.message_id == ids["msg_id"]]
    assert [t.output_tokens for t in turns] == [40, 80, 120]
    assert {t.request_id for t in turns} == {ids["request_id"]}
    assert max(t.output_tokens for t in c.turns if t.message_id == ids["msg_id2"]) == ids["max_out2"]
    assert c.sessions[ids["sid"]].models == {"claude-opus-4-5-20251101"}


def test_parallel_tool_results(tmp_path: Path) -> None:
    fx = make.quirk_parallel_tools(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    msgs = by_uuid(c)
    assert msgs[ids["t1"]].parent_uuid == ids["text"]
    assert msgs[ids["t2"]].parent_uuid == ids["t1"]
    assert msgs[ids["r1"]].parent_uuid == ids["t1"] and msgs[ids["r1"]].tool_use_id == ids["tid1"]
    assert msgs[ids["r2"]].parent_uuid == ids["t2"] and msgs[ids["r2"]].tool_use_id == ids["tid2"]
    assert msgs[ids["answer"]].parent_uuid == ids["r2"]
    assert c.record_types["progress"] == 1
    assert not any(m.parent_external for m in c.messages[1:])


def test_progress_records_are_skipped_but_keep_the_tree(tmp_path: Path) -> None:
    fx = make.quirk_progress_chain(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    msgs = by_uuid(c)
    assert ids["pr1"] not in msgs and ids["pr2"] not in msgs and ids["hook"] not in msgs
    assert c.record_types["progress"] == 2
    assert {a.uuid for a in c.aliases} >= {ids["pr1"], ids["pr2"], ids["hook"]}
    # answer -> stop_hook_summary -> progress -> progress -> tool_use
    assert msgs[ids["answer"]].parent_uuid == ids["call"]
    assert not msgs[ids["answer"]].parent_external
    r = msgs[ids["result"]]
    assert r.kind == "tool_result" and r.is_error and r.text == "1 failed, 4 passed"
    assert msgs[ids["call"]].tool_target == "pytest -q"


def test_progress_parent_resolves_across_chunks(tmp_path: Path) -> None:
    """The progress records were consumed by an earlier run: the walker defers to the writer."""
    fx = make.quirk_progress_chain(tmp_path)
    data = fx.path.read_bytes()
    cut = data.index(fx.ids["hook"].encode())
    cut = data.rfind(b"\n", 0, cut) + 1  # start of the stop_hook_summary line
    part = tmp_path / "part" / fx.path.name
    part.parent.mkdir()
    part.write_bytes(data[:cut])
    c1 = parse(part)
    part.write_bytes(data)
    c2 = parse(part, c1.end, c1.carry)
    answer = by_uuid(c2)[fx.ids["answer"]]
    assert answer.parent_external and answer.parent_uuid == fx.ids["pr2"]
    assert {a.uuid: a.parent_uuid for a in c1.aliases}[fx.ids["pr2"]] == fx.ids["pr1"]


def test_compaction_bridge_and_dangling_logical_parent(tmp_path: Path) -> None:
    fx = make.quirk_compaction(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    msgs = by_uuid(c)
    b1, b2 = msgs[ids["b1"]], msgs[ids["b2"]]
    assert b1.kind == b2.kind == "compact_boundary" and b1.role == "system"
    assert b1.parent_uuid == ids["a1"] and not b1.parent_external  # logicalParentUuid bridges the null parent
    assert msgs[ids["cs1"]].kind == "compact_summary" and msgs[ids["cs1"]].parent_uuid == ids["b1"]
    # dangling logical parent: the writer falls back to the preceding record (turn_duration -> a2)
    assert b2.parent_external and b2.fallback_parent == ids["a2"]
    assert [(x.uuid, x.kind, x.trigger, x.pre_tokens, x.logical_parent_uuid) for x in c.compactions] == [
        (ids["b1"], "compact", "auto", 176700, ids["a1"]),
        (ids["b2"], "compact", "manual", 90000, make.uid("nowhere")),
    ]
    assert [d.duration_ms for d in c.durations] == [5321]


def test_fork_has_two_prompt_children(tmp_path: Path) -> None:
    fx = make.quirk_fork(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    msgs = by_uuid(c)
    children = [m.uuid for m in c.messages if m.parent_uuid == ids["a1"]]
    assert children == [ids["old_p"], ids["new_p"]]
    assert all(msgs[u].kind == "prompt" for u in children)


def test_resumed_session_copy_keeps_old_session_id(tmp_path: Path) -> None:
    fx = make.quirk_resumed(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    old = [m for m in c.messages if m.uuid in ids["copied"]]
    new = [m for m in c.messages if m.uuid not in ids["copied"]]
    assert len(old) == len(ids["copied"]) and {m.session_id for m in old} == {ids["parent_sid"]}
    assert {m.session_id for m in new} == {ids["sid"]} and [m.uuid for m in new] == [ids["p3"], ids["a3"]]
    assert c.sessions[ids["sid"]].resumed_from == ids["parent_sid"]
    assert c.sessions[ids["parent_sid"]].resumed_from is None
    assert by_uuid(c)[ids["p3"]].parent_uuid == ids["copied"][-1]


def test_inline_sidechain_subagent(tmp_path: Path) -> None:
    fx = make.quirk_inline_subagent(tmp_path)
    c = parse(fx.path)
    ids = fx.ids
    msgs = by_uuid(c)
    ap, aa = msgs[ids["agent_prompt"]], msgs[ids["agent_answer"]]
    assert ap.is_sidechain and aa.is_sidechain
    assert ap.kind == "agent_prompt" and ap.parent_uuid is None
    assert ap.agent_id and ap.agent_id == aa.agent_id
    assert not msgs[ids["prompt"]].is_sidechain and msgs[ids["prompt"]].agent_id is None
    assert [(a.agent_id, a.layout) for a in c.agents] == [(ap.agent_id, "inline")]
    spawn = [s for s in c.spawns if s.tool_use_id == ids["tool_use_id"]]
    assert spawn and spawn[0].prompt_key == c.agents[0].prompt_key
    assert msgs[ids["result"]].parent_uuid == ids["call"]


def test_flat_subagent_file(tmp_path: Path) -> None:
    fx = make.quirk_flat_subagent(tmp_path)
    main = parse(fx.path)
    spawn = next(s for s in main.spawns if s.tool_use_id == fx.ids["tool_use_id"])
    assert spawn.agent_id == fx.ids["agent_id"] and spawn.subagent_type == "general-purpose"
    agent_path = fx.extra[0]
    c = parse(agent_path, fi=FileInfo("flat", agent_path.name[:-6], fx.ids["agent_id"]))
    assert {m.session_id for m in c.messages} == {fx.ids["sid"]}
    assert all(m.is_sidechain and m.agent_id == fx.ids["agent_id"] for m in c.messages)
    assert c.messages[0].kind == "agent_prompt"
    assert [(a.agent_id, a.layout, a.session_id) for a in c.agents] == [
        (fx.ids["agent_id"], "flat", fx.ids["sid"])
    ]
    assert all(t.is_sidechain and t.agent_id == fx.ids["agent_id"] for t in c.turns)


def test_nested_subagent_and_compaction_helper(tmp_path: Path) -> None:
    fx = make.quirk_nested_subagent(tmp_path)
    main = parse(fx.path)
    assert main.record_types["progress"] == 1  # the agent_progress mirror is not a message
    assert not any(m.is_sidechain for m in main.messages)
    spawn = next(s for s in main.spawns if s.tool_use_id == fx.ids["tool_use_id"])
    assert spawn.agent_id == fx.ids["agent_id"] and spawn.subagent_type == "claude-code-guide"
    agent_path, compact_path = fx.extra
    c = parse(agent_path, fi=FileInfo("nested", agent_path.name[:-6], fx.ids["agent_id"]))
    assert [(a.agent_id, a.layout, a.is_compaction_helper) for a in c.agents] == [
        (fx.ids["agent_id"], "nested", False)
    ]
    h = parse(compact_path, fi=FileInfo("compaction", compact_path.name[:-6], "acompact-fffbd0"))
    kinds = {m.uuid: m.kind for m in h.messages}
    assert kinds[fx.ids["compact_reminder"]] == "system_reminder"
    assert kinds[fx.ids["compact_prompt"]] == "compact_prompt"
    # the helper's first record hangs off the main session: an orphan inside this file
    assert h.messages[0].parent_uuid == fx.ids["answer"] and h.messages[0].parent_external
    assert [(a.agent_id, a.layout, a.is_compaction_helper) for a in h.agents] == [
        ("acompact-fffbd0", "compaction", True)
    ]


def test_summary_records_are_collected(tmp_path: Path) -> None:
    fx = make.quirk_summary_other_file(tmp_path)
    c = parse(fx.path)
    assert c.summaries == [
        (fx.ids["leaf"], fx.ids["title"]),
        (make.uid("not-collected"), "A session that is not on disk"),
    ]
    assert c.record_types["summary"] == 2
    assert fx.ids["leaf"] not in by_uuid(c)


def test_user_record_kinds(tmp_path: Path) -> None:
    fx = make.quirk_user_kinds(tmp_path)
    c = parse(fx.path)
    msgs = by_uuid(c)
    for kind in (
        "meta",
        "command",
        "command_output",
        "bash_input",
        "system_reminder",
        "prompt",
        "interrupt",
        "compact_summary",
    ):
        assert msgs[fx.ids[kind]].kind == kind, kind
    assert msgs[fx.ids["command"]].text == "/model opus"
    assert msgs[fx.ids["prompt_with_reminder"]].kind == "prompt"
    assert msgs[fx.ids["prompt_with_reminder"]].text == "keep going"
    img = msgs[fx.ids["image_prompt"]]
    assert img.kind == "prompt" and "[image]" in img.text and "screenshot" in img.text
    assert c.sessions[fx.ids["sid"]].first_prompt == "fix the flaky login test"


def test_unknown_types_are_tolerated_and_counted(tmp_path: Path) -> None:
    fx = make.quirk_unknown_types(tmp_path)
    c = parse(fx.path)
    assert c.record_types["unknown:hologram-sync"] == 1
    assert (
        c.record_types["permission-mode"] == c.record_types["last-prompt"] == c.record_types["pr-link"] == 1
    )
    assert c.record_types["queue-operation"] == 1 and c.record_types["file-history-snapshot"] == 1
    assert c.record_types["attachment"] == 1
    assert dict(c.bad_lines) == {"not_object": 2}
    msgs = by_uuid(c)
    assert set(msgs) == {fx.ids["prompt"], fx.ids["answer"]}
    # the unknown system subtype and the attachment stay in the tree
    assert msgs[fx.ids["answer"]].parent_uuid == fx.ids["prompt"]
    assert c.skipped >= 7


def test_private_spans_are_never_kept(tmp_path: Path) -> None:
    fx = make.quirk_private(tmp_path)
    c = parse(fx.path)
    secret = fx.ids["secret"][:7]  # even a part of it
    for m in c.messages:
        for value in (m.text, m.tool_target or ""):
            assert secret not in value
    assert "[private]" in by_uuid(c)[fx.ids["prompt"]].text
    assert c.summaries and all(secret not in title for _, title in c.summaries)
    for d in c.sessions.values():
        assert secret not in (d.first_prompt or "")


def test_missing_ids_are_counted(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    s = make.Session("s")
    s.prompt("hello")
    s.add({"type": "user", "message": {"role": "user", "content": "no uuid"}, "sessionId": "s"})
    s.write(p)
    c = parse(p)
    assert c.bad_lines["missing_ids"] == 1 and len(c.messages) == 1


# ---------------------------------------------------------------------------------------------------
# byte-exact cursor over every fixture
# ---------------------------------------------------------------------------------------------------


def _summary(chunks: list[FileChunk]) -> dict:
    msgs = [m for c in chunks for m in c.messages]
    return {
        "uuids": [m.uuid for m in msgs],
        "records": sum(c.records for c in chunks),
        "lines": sum(c.lines for c in chunks),
        "bad": sum((c.bad_lines for c in chunks), start=type(chunks[0].bad_lines)()),
        "summaries": [s for c in chunks for s in c.summaries],
        "turns": [(t.message_id, t.output_tokens) for c in chunks for t in c.turns],
    }


@pytest.mark.parametrize("name", [n for n in make.QUIRKS if n not in ("big_line", "empty")])
def test_any_cut_point_reads_every_record_once(tmp_path: Path, name: str) -> None:
    """Cut the file at many byte positions (line starts, ends, mid-line): parsing the prefix and
    then the rest from the returned cursor equals one parse of the whole file."""
    fx = make.QUIRKS[name](tmp_path / "src")
    data = fx.path.read_bytes()
    full = parse(fx.path)
    cuts: set[int] = set()
    pos = 0
    for line in data.split(b"\n"):
        for d in (-2, -1, 0, 1, 2, 5, len(line) // 2):
            if 0 < pos + d < len(data):
                cuts.add(pos + d)
        pos += len(line) + 1
    work = tmp_path / "work" / fx.path.name
    work.parent.mkdir()
    for cut in sorted(cuts):
        work.write_bytes(data[:cut])
        c1 = parse(work)
        assert c1.end <= cut
        assert c1.end == 0 or data[c1.end - 1 : c1.end] == b"\n" or c1.end == cut
        work.write_bytes(data)
        c2 = parse(work, c1.end, c1.carry)
        assert _summary([c1, c2]) == _summary([full]), f"cut at byte {cut}"
