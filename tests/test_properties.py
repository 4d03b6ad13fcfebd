"""Property tests: incremental indexing equals one full index; garbage never loses a valid record."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from fixtures import make, rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index.store.ingest import run_index
from lib.model import Carry
from lib.walker import FileInfo, parse_file

# Sentences that make the extractors fire now and then (corrections, rules, decisions, goals…).
PROMPTS = [
    "fix the failing parser test",
    "no, that's wrong, don't mock the database in these tests",
    "always run ruff before you commit",
    "never use print for logging in this repo",
    "we decided to use sqlite instead of postgres",
    "the goal is to ship the incremental indexer this week",
    "why does parseConfig raise ERR_TIMEOUT?",
    "stop, you broke the build again",
    "let's go with the second option",
    "please rename load_settings to read_settings",
]
ANSWERS = [
    "Fixed: the parser now handles empty lines.",
    "You're right, I was wrong about the cache; the real cause is the shared fixture.",
    "I decided to keep the old API and add a wrapper.",
    "That approach failed because the lock is held by the writer.",
    "Done. All 42 tests pass now.",
    "Let me check the config loader first.",
]

# Modest by default so the suite stays fast; raise it for a deeper run.
SCALE = float(os.environ.get("TOTAL_RECALL_PROPERTY_SCALE", "1"))

STEP = st.tuples(
    st.sampled_from(
        [
            "prompt",
            "answer",
            "split",
            "tools",
            "commit",
            "parallel",
            "progress",
            "fork",
            "compact",
            "meta",
            "sidechain",
        ]
    ),
    st.integers(0, 1000),
)
STEPS = st.lists(STEP, min_size=1, max_size=14)


def build_transcript(steps: list[tuple[str, int]], sid: str) -> bytes:
    """A realistic 2.1.x transcript from a list of (step, seed) pairs."""
    s = make.Session(sid, version="2.1.20", cwd="/home/dev/projects/prop")
    s.prompt(PROMPTS[0])
    anchors: list[str] = []  # assistant text uuids a later prompt may fork from
    for kind, n in steps:
        prompt, answer = PROMPTS[n % len(PROMPTS)], ANSWERS[n % len(ANSWERS)]
        if kind == "prompt":
            s.prompt(prompt)
        elif kind == "answer":
            anchors.append(s.response(text=answer)[-1]["uuid"])
        elif kind == "split":
            recs = s.response(
                thinking="private chain of thought " + str(n),
                text=answer,
                tools=[("Bash", {"command": f"pytest -q -k case{n}", "description": "run tests"})],
            )
            s.tool_result(recs[-1], f"{n % 7} passed", is_error=n % 5 == 0)
            anchors.append(s.response(text=ANSWERS[(n + 1) % len(ANSWERS)])[-1]["uuid"])
        elif kind == "tools":
            call = s.response(tools=[("Read", {"file_path": f"/home/dev/projects/prop/src/m{n}.py"})])[-1]
            s.tool_result(call, f"def f{n}():\n    return {n}\n")
        elif kind == "commit":  # an edit and a commit: files edited and commits in the digest
            edit = s.response(tools=[("Edit", {"file_path": f"/home/dev/projects/prop/src/m{n}.py"})])[-1]
            s.tool_result(edit, "ok", parent=edit["uuid"])
            call = s.response(tools=[("Bash", {"command": f'git commit -am "Fix m{n}"'})])[-1]
            s.tool_result(call, f"[main {n:07x}] Fix m{n}", is_error=n % 4 == 0)
        elif kind == "parallel":
            calls = s.response(
                text="Reading both.",
                tools=[("Grep", {"pattern": f"TODO{n}"}), ("Glob", {"pattern": "**/*.py"})],
            )
            t1, t2 = calls[-2], calls[-1]
            s.progress(t1["uuid"], t1)
            s.tool_result(t1, "a.py:1", parent=t1["uuid"])
            s.tool_result(t2, "a.py\nb.py", parent=t2["uuid"])
        elif kind == "progress":
            call = s.response(tools=[("Bash", {"command": "make test", "description": "tests"})])[-1]
            pr = s.progress(
                call["uuid"],
                call,
                {
                    "type": "bash_progress",
                    "output": "..",
                    "fullOutput": "..",
                    "elapsedTimeSeconds": 1,
                    "totalLines": 1,
                },
            )
            s.tool_result(call, "ok", parent=call["uuid"])
            s.system(
                "stop_hook_summary",
                parent=pr["uuid"],
                hookCount=1,
                hookInfos=[],
                hookErrors=[],
                preventedContinuation=False,
                stopReason="",
                hasOutput=False,
                level="suggestion",
            )
        elif kind == "fork" and anchors:
            s.prompt(prompt, parent=anchors[n % len(anchors)])
        elif kind == "compact":
            logical = s.last if n % 3 else make.uid("dangling", n)
            s.system("turn_duration", durationMs=1000 + n, isMeta=False)
            s.compact(logical, trigger="auto" if n % 2 else "manual", pre_tokens=150000 + n)
        elif kind == "meta":
            s.user(
                [
                    "<local-command-stdout>ok</local-command-stdout>",
                    "<system-reminder>x</system-reminder>",
                    "[Request interrupted by user]",
                ][n % 3]
            )
        elif kind == "sidechain":  # a 1.0.x-style inline subagent in the main file
            back = s.last
            s.sidechain = True
            s.user(f"Search for TODO{n} and report", parent=None)
            s.response(thinking="grep first", text=f"Found TODO{n} in a.py")
            s.response(text="Nothing else.")
            s.sidechain = False
            s.last = back
    return b"".join(make.dumps(r) + b"\n" for r in s.records if isinstance(r, dict))


@settings(
    max_examples=int(40 * SCALE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=STEPS,
    cut_seeds=st.lists(st.floats(0, 1, exclude_min=True, exclude_max=True), max_size=7),
    tag=st.integers(0, 10**9),
    rewind=st.one_of(st.none(), st.tuples(st.integers(0, 6), st.floats(0, 1))),
)
def test_incremental_index_equals_full_index(
    steps: list[tuple[str, int]], cut_seeds: list[float], tag: int, rewind: tuple[int, float] | None
) -> None:
    """Appended in random byte chunks (cuts inside lines included), and maybe once truncated back
    and rewritten (an editor, a rewind), the file indexes to exactly what one full pass gives."""
    sid = make.uid("prop", tag)
    data = build_transcript(steps, sid)
    cuts = sorted({int(len(data) * f) for f in cut_seeds} - {0, len(data)}) + [len(data)]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        inc_root, full_root = base / "inc" / "projects", base / "full" / "projects"
        for root in (inc_root, full_root):
            (root / "-home-dev-projects-prop").mkdir(parents=True)
        inc_file = inc_root / "-home-dev-projects-prop" / f"{sid}.jsonl"
        full_file = full_root / "-home-dev-projects-prop" / f"{sid}.jsonl"
        inc_file.write_bytes(b"")
        done = 0
        for i, cut in enumerate(cuts):
            with inc_file.open("ab") as f:
                f.write(data[done:cut])
            done = cut
            if rewind and rewind[0] == i and cut < len(data):  # cut back, and rewrite the rest differently
                done = int(cut * rewind[1])
                with inc_file.open("r+b") as f:
                    f.truncate(done)
                    f.seek(done)
                    f.write(data[done:cut].replace(b"e", b"E"))
                os.utime(inc_file, ns=(0, 10**9 * (i + 1)))
                assert run_index(base / "inc.db", [inc_root]).errors == []
                with inc_file.open("r+b") as f:
                    f.truncate(done)
            assert run_index(base / "inc.db", [inc_root]).errors == []
        full_file.write_bytes(data)
        assert run_index(base / "full.db", [full_root]).errors == []
        inc = rows.snapshot(base / "inc.db", root=inc_root)
        full = rows.snapshot(base / "full.db", root=full_root)
        assert set(full) >= rows.every_table(base / "full.db") - rows.NOT_COMPARED  # every table
        for table in full:
            assert inc[table] == full[table], table
        assert len(full["messages"]) >= 1
        terms = ["parser", "todo", "passed", "chain", "thought"]
        assert rows.fts_terms(base / "inc.db", terms) == rows.fts_terms(base / "full.db", terms)


# ---------------------------------------------------------------------------------------------------
# (b) garbage never crashes the walker and never loses a valid record
# ---------------------------------------------------------------------------------------------------


def _valid_records(n: int, sid: str) -> list[dict[str, Any]]:
    s = make.Session(sid, version="2.1.9")
    for i in range(n):
        if i % 2 == 0:
            s.prompt(PROMPTS[i % len(PROMPTS)] + f" #{i}")
        else:
            s.response(text=ANSWERS[i % len(ANSWERS)] + f" #{i}")
    return [r for r in s.records if isinstance(r, dict)]


NON_OBJECTS = st.one_of(
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=4),
).map(lambda v: json.dumps(v).encode())
RANDOM_BYTES = st.binary(min_size=1, max_size=120).map(lambda b: b.replace(b"\n", b" "))


@st.composite
def garbage(draw: st.DrawFn, pool: list[bytes]) -> bytes:
    """One damaged line: random bytes, truncated JSON, non-object JSON, bad UTF-8, or `}{` glue."""
    kind = draw(st.sampled_from(["bytes", "truncated", "non_object", "glue_pair", "glue_tail", "bad_utf8"]))
    src = pool[draw(st.integers(0, len(pool) - 1))]
    if kind == "bytes":
        return draw(RANDOM_BYTES)
    if kind == "truncated":
        return src[: draw(st.integers(1, len(src) - 1))]
    if kind == "non_object":
        return draw(NON_OBJECTS)
    if kind == "bad_utf8":
        junk = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xe2\x82", b"\xf0\x9f\x98"]))
        return b'{"type":"user","message":{"content":"' + junk + b"..."
    if kind == "glue_pair":
        return src + pool[draw(st.integers(0, len(pool) - 1))]
    return src + draw(RANDOM_BYTES)


@settings(
    max_examples=int(50 * SCALE), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), n=st.integers(1, 12), final_newline=st.booleans())
def test_garbage_lines_never_lose_valid_records(data: st.DataObject, n: int, final_newline: bool) -> None:
    sid = make.uid("garbage", n)
    recs = _valid_records(n, sid)
    pool = [make.dumps(r) for r in _valid_records(4, make.uid("pool", n))]
    lines: list[bytes] = []
    for r in recs:
        for _ in range(data.draw(st.integers(0, 3))):
            lines.append(data.draw(garbage(pool)))
        lines.append(make.dumps(r))
    for _ in range(data.draw(st.integers(0, 2))):
        lines.append(data.draw(garbage(pool)))
    blob = b"\n".join(lines) + (b"\n" if final_newline else b"")
    glued_valid = set()
    # records glued at the start of a garbage line are kept too (not on an unterminated last line:
    # that one may still be being written, it is re-read once its newline arrives)
    for line in lines if final_newline else lines[:-1]:
        for r in _valid_records(4, make.uid("pool", n)):
            if line.startswith(make.dumps(r)):
                glued_valid.add(r["uuid"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{sid}.jsonl"
        path.write_bytes(blob)
        chunk = parse_file(str(path), 0, Carry(), FileInfo("main", sid))
        got = {m.uuid for m in chunk.messages}
        want = {r["uuid"] for r in recs}
        assert want <= got
        assert glued_valid <= got
        if final_newline:
            assert chunk.lines == len(lines) and chunk.end == len(blob)
        else:
            assert chunk.lines in (len(lines) - 1, len(lines))
        assert sum(chunk.bad_lines.values()) <= len(lines) - len(recs)
        # cut anywhere: prefix + rest from the cursor keeps them too
        cut = data.draw(st.integers(1, len(blob)))
        path.write_bytes(blob[:cut])
        c1 = parse_file(str(path), 0, Carry(), FileInfo("main", sid))
        assert c1.end <= cut
        path.write_bytes(blob)
        c2 = parse_file(str(path), c1.end, c1.carry, FileInfo("main", sid))
        both = [m.uuid for m in c1.messages + c2.messages]
        assert want <= set(both)
        assert sorted(both) == sorted(m.uuid for m in chunk.messages)  # nothing lost, nothing read twice
