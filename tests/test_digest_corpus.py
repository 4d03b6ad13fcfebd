"""Digest accuracy on the shared corpus (issue 14): files edited, files read, commits and passing test
runs of every stored digest against a ground truth computed here, independently, from the raw
transcripts (json.loads of every line; no project code). Precision and recall ≥ 0.95 for each.
Skipped when the corpus is absent (TOTAL_RECALL_TEST_CORPUS)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from lib import sqlite

EDITS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
RUNNER = re.compile(
    r"(pytest|py\.test|\btox\b|\bnox\b|jest|vitest|mocha|rspec|phpunit|ctest|unittest"
    r"|(npm|pnpm|yarn|bun|deno) (run )?test|(cargo|go|dotnet|mvn|gradle|mix) test|make (test|check)|test\.sh)"
)
NOT_RUN = ("--collect-only", "--co ", "--markers", "--help", "--version", "--fixtures")
PASSED = re.compile(
    r"[1-9][0-9]* (passed|passing)|test result: ok|^ok\s|^PASS\b|Tests?:\s+[1-9][0-9]* passed|^OK\b|[1-9][0-9]* tests?, 0 failures",
    re.M,
)
FAILED = re.compile(r"[1-9][0-9]* (failed|errors?|failing)\b|FAILED|\bFAIL\b|no tests ran|\b0 passed")
COMMIT = re.compile(r"\bgit (-[Cc] \S+ )*commit\b")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def ground_truth(projects: Path) -> dict[str, dict[str, set[str]]]:
    """Per session: files edited and read (absolute paths), commits and passing test runs (uuids of the
    assistant records holding the Bash call)."""
    truth: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    calls: dict[str, tuple[str, str, str]] = {}
    results: dict[str, tuple[bool, str]] = {}
    for path in sorted(projects.rglob("*.jsonl")):
        with path.open("rb") as f:
            for raw in f:
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(rec, dict) or not isinstance(rec.get("message"), dict):
                    continue
                sid, uuid = rec.get("sessionId"), rec.get("uuid")
                blocks = rec["message"].get("content")
                if not isinstance(sid, str) or not isinstance(blocks, list):
                    continue
                for b in blocks:
                    if not isinstance(b, dict):
                        continue
                    inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                    if b.get("type") == "tool_use":
                        name = b.get("name")
                        target = inp.get("file_path") or inp.get("notebook_path")
                        if name in EDITS and isinstance(target, str) and target:
                            truth[sid]["edited"].add(target)
                        elif name == "Read" and isinstance(target, str) and target:
                            truth[sid]["read"].add(target)
                        elif name == "Bash" and isinstance(inp.get("command"), str):
                            calls[str(b.get("id"))] = (sid, str(uuid), inp["command"])
                    elif b.get("type") == "tool_result":
                        results[str(b.get("tool_use_id"))] = (
                            bool(b.get("is_error")),
                            _text(b.get("content")),
                        )
    for call_id, (sid, uuid, command) in calls.items():
        if call_id not in results or results[call_id][0]:
            continue  # no result, or a non-zero exit
        out = results[call_id][1]
        if COMMIT.search(command):
            truth[sid]["commits"].add(uuid)
        elif (
            RUNNER.search(command)
            and not any(x in command for x in NOT_RUN)
            and PASSED.search(out)
            and not FAILED.search(out)
        ):
            truth[sid]["tests"].add(uuid)
    return truth


def stored(db: Path) -> dict[str, dict[str, set[str]]]:
    got: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    conn = sqlite.connect(db)
    try:
        for sid, section, kind, detail, uuid in conn.execute(
            "SELECT session_id, section, kind, detail, source_uuid FROM digest_items"
        ):
            if section == "files_edited":
                got[sid]["edited"].add(detail)
            elif section == "files_read":
                got[sid]["read"].add(detail)
            elif kind == "commit":
                got[sid]["commits"].add(uuid)
            elif kind == "tests":
                got[sid]["tests"].add(uuid)
    finally:
        conn.close()
    return got


def scores(
    truth: dict[str, dict[str, set[str]]], got: dict[str, dict[str, set[str]]]
) -> dict[str, tuple[float, float, int]]:
    out = {}
    for field in ("edited", "read", "commits", "tests"):
        t = {(s, x) for s, f in truth.items() for x in f[field]}
        g = {(s, x) for s, f in got.items() for x in f[field]}
        hit = len(t & g)
        out[field] = (hit / len(g) if g else 1.0, hit / len(t) if t else 1.0, len(t))
    return out


def test_digest_accuracy_against_raw_transcripts(corpus_projects: Path, corpus_db: Path) -> None:
    result = scores(ground_truth(corpus_projects), stored(corpus_db))
    for field, (precision, recall, n) in result.items():
        assert n > 0, field
        assert precision >= 0.95 and recall >= 0.95, (field, precision, recall, n)


@pytest.mark.parametrize("field", ["edited", "read", "commits", "tests"])
def test_scores_fall_when_the_digest_is_wrong(field: str) -> None:
    """The measure itself: a missing item costs recall, an extra one precision."""
    truth = {"s": {f: {"a", "b"} for f in ("edited", "read", "commits", "tests")}}
    got = {
        "s": {f: ({"a", "x"} if f == field else {"a", "b"}) for f in ("edited", "read", "commits", "tests")}
    }
    p, r, _ = scores(truth, got)[field]  # type: ignore[arg-type]
    assert p == 0.5 and r == 0.5
