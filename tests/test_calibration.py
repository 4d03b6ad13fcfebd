"""What may be injected (issue 19): the user's verdicts calibrate the injection thresholds (once enough
items of a kind are judged, the kind's cut rises to where the judged items above it were right often
enough), and recall keeps the copy of a memory that may be injected."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from extractors.confidence import bundle_threshold
from index.briefing import operator_context
from index.briefing.gate import Gate
from index.store.schema import migrate
from index.store.userstate import load, save
from index.store.verdicts import MAX_FLOOR, MIN_JUDGED, Wrong, calibrate, wrong_items
from lib import sqlite
from total_recall.cli import cli


def verdicts(kind: str, judged: list[tuple[float, str]]) -> list[dict[str, object]]:
    return [{"kind": kind, "confidence": c, "verdict": v} for c, v in judged]


def test_too_few_verdicts_move_nothing() -> None:
    few = verdicts("correction", [(0.8, "wrong")] * (MIN_JUDGED - 1))
    assert calibrate(few) == {}


def test_the_cut_rises_to_where_the_judged_items_are_right() -> None:
    judged = [(0.78, "wrong"), (0.80, "wrong"), (0.82, "wrong"), (0.85, "helpful"), (0.9, "helpful")]
    judged += [(0.92, "helpful"), (0.95, "helpful")]
    # at 0.82, 4 of the 5 judged items at or above it were helpful (0.8); at 0.80 only 4 of 6
    assert calibrate(verdicts("correction", judged)) == {"correction": 0.82}


def test_right_often_enough_keeps_the_models_cut() -> None:
    judged = [(0.78, "helpful"), (0.8, "helpful"), (0.82, "wrong"), (0.85, "helpful"), (0.9, "helpful")]
    assert calibrate(verdicts("goal", judged)) == {}


def test_all_wrong_shuts_the_kind_up_to_the_cap() -> None:
    judged = [(0.9, "wrong"), (0.95, "wrong"), (0.97, "wrong"), (0.98, "wrong"), (0.99, "wrong")]
    assert calibrate(verdicts("decision", judged)) == {"decision": MAX_FLOOR}


def test_verdicts_without_confidence_or_of_other_kinds_do_not_count() -> None:
    mixed = verdicts("correction", [(0.8, "wrong")] * 3) + [
        {"kind": "correction", "verdict": "wrong"},  # a ban quoted by PreToolUse: no confidence
        {"kind": "goal", "confidence": 0.8, "verdict": "wrong"},
    ]
    assert calibrate(mixed) == {}


def test_the_gate_takes_the_higher_of_the_model_and_the_verdicts() -> None:
    model = bundle_threshold("correction")
    assert Gate().cut("correction") == model
    assert Gate(wrong=Wrong(floors={"correction": 0.99})).cut("correction") == 0.99
    assert Gate(wrong=Wrong(floors={"correction": 0.01})).cut("correction") == model


def _index_with_corrections(tmp_path: Path, scores: list[float]) -> Path:
    db = tmp_path / "index.db"
    conn = sqlite.connect(db)
    migrate(conn)
    with conn:
        for i, score in enumerate(scores):
            conn.execute(
                """INSERT INTO extractions(kind, content, score, session_id, source_uuid, cwd, project_key, ts)
                   VALUES('correction', ?, ?, 's1', ?, '/w/app', '/w/app', ?)""",
                (
                    f"no, use the staging bucket number {i} instead",
                    score,
                    f"u{i}",
                    f"2026-11-0{i + 1}T10:00:00Z",
                ),
            )
    conn.close()
    return db


def test_a_raised_cut_keeps_a_correction_out_of_the_bundle(tmp_path: Path) -> None:
    model = bundle_threshold("correction")
    assert model < 0.9
    db = _index_with_corrections(tmp_path, [0.9, 0.99])
    conn = sqlite.connect(db)
    before = operator_context(conn, "/w/app").text
    assert "bucket number 0" in before and "bucket number 1" in before
    state = load(db)  # the user judged enough corrections: those below 0.95 were wrong
    for i, (conf, verdict) in enumerate([(0.8, "wrong"), (0.85, "wrong"), (0.9, "wrong"), (0.95, "helpful")]):
        state.feedback[f"id{i}"] = {"kind": "correction", "confidence": conf, "verdict": verdict}
    state.feedback["id9"] = {"kind": "correction", "confidence": 0.99, "verdict": "helpful"}
    save(db, state)
    wrong = wrong_items(db)
    assert wrong.floors == {"correction": pytest.approx(0.95)}
    after = operator_context(conn, "/w/app", wrong=wrong).text
    assert "bucket number 0" not in after and "bucket number 1" in after
    out = CliRunner().invoke(cli, ["--db", str(db), "adaptive"])
    assert out.exit_code == 0 and "correction ≥ 0.95" in out.output


def test_recall_keeps_the_copy_that_may_be_injected(tmp_path: Path) -> None:
    """A memory mined with low confidence and promoted by hand (confidence 1.0) is one recall hit: the
    promoted copy, even when the mined one ranks first (newer), so prompt recall can inject it."""
    from index.retrieval.recall import recall

    db = tmp_path / "index.db"
    conn = sqlite.connect(db)
    migrate(conn)
    text = "we deploy the webhook worker with blue green switches only"
    with conn:
        for uuid, score, ts in (
            ("mined", 0.2, "2026-11-20T10:00:00Z"),
            ("manual:1", 1.0, "2026-01-01T10:00:00Z"),
        ):
            conn.execute(
                """INSERT INTO extractions(kind, content, score, session_id, source_uuid, cwd, project_key, ts)
                   VALUES('decision', ?, ?, 's1', ?, '/w/app', '/w/app', ?)""",
                (text, score, uuid, ts),
            )
            conn.execute(
                "INSERT INTO extractions_fts(rowid, content) VALUES(last_insert_rowid(), ?)", (text,)
            )
    hits = recall(conn, "webhook worker deploy", kind="decision", hybrid=False).hits
    assert [(h.source_uuid, h.confidence) for h in hits] == [("manual:1", 1.0)]


def test_what_the_user_marked_wrong_never_reaches_the_team(tmp_path: Path) -> None:
    from index.briefing import shareable
    from lib.memid import norm_text

    db = _index_with_corrections(tmp_path, [0.9, 0.99])
    conn = sqlite.connect(db)

    def shared(wrong: Wrong | None = None) -> set[str]:
        return {s.content for s in shareable(conn, "/w/app", wrong=wrong) if s.kind == "correction"}

    first, second = (f"no, use the staging bucket number {i} instead" for i in (0, 1))
    assert shared() == {first, second}
    assert shared(Wrong(texts={norm_text(first)})) == {second}  # marked wrong: stays on this machine
    assert shared(Wrong(floors={"correction": 0.95})) == {second}  # below the calibrated cut
