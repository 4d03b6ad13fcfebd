"""What the team client would send (total_recall/team/sync.py `prepare`), without a server: scrubbed,
`<private>` spans cut, bounded, keyed stably, scored 0-10, private items marked and never pending."""

from __future__ import annotations

from pathlib import Path

from index.briefing import Shareable
from total_recall.team.sync import SUMMARY_CHARS, Ledger, pending, prepare, relevance

GH = "ghp_" + "Zq9x" * 9


def row(
    kind: str = "standing_decision", content: str = "use tomllib for config", key: str = "k1", **kw: object
) -> Shareable:
    base: dict[str, object] = {
        "title": "Standing decision",
        "ts": "2026-11-01T00:00:00Z",
        "session_id": "s1",
        "confidence": 0.8,
    }
    base.update(kw)
    return Shareable(kind, key, content=content, **base)  # type: ignore[arg-type]


def test_prepare_scrubs_cuts_private_spans_and_bounds_the_text() -> None:
    items = prepare(
        "p1",
        [
            row(content=f"deploy with {GH} <private>hunter2-velvet</private> ok", key="a"),
            row(content="x" * 50_000, key="b"),
            row(content="<private>only this</private>", key="c"),
        ],
        set(),
    )
    text = repr(items)
    assert GH not in text and "hunter2-velvet" not in text and "[REDACTED:github_token]" in text
    assert len(items[1].dense_summary) <= SUMMARY_CHARS and len(items[1].title) <= 140
    assert items[2].dense_summary == "[private]"


def test_keys_are_stable_and_change_with_the_text_or_project() -> None:
    one = prepare("p1", [row()], set())[0].client_key
    assert prepare("p1", [row()], set())[0].client_key == one
    assert prepare("p1", [row(content="use tomllib everywhere")], set())[0].client_key != one
    assert prepare("p2", [row()], set())[0].client_key != one
    assert len(prepare("p1", [row(), row()], set())) == 1  # one memory read twice is sent once


def test_private_items_are_never_pending_and_sent_ones_are_not_sent_again(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, "p1")
    items = prepare("p1", [row(key="a"), row(key="b", content="never force-push main")], {"b"})
    assert [i.visibility for i in items] == ["team", "private"]
    assert [i.source_key for i in pending(items, ledger)] == ["a"]
    ledger.sent[items[0].client_key] = 7
    ledger.save()
    assert pending(items, Ledger(tmp_path, "p1")) == []


def test_relevance_is_0_to_10_and_ranks_rules_above_recaps() -> None:
    scores = {
        k: relevance(row(kind=k, confidence=c, mentions=m))
        for k, c, m in (("ban", 1.0, 50), ("session", 0.0, 1))
    }
    assert all(0 <= s <= 10 for s in scores.values()) and scores["ban"] > scores["session"]
    assert relevance(row(confidence=5.0, mentions=10**6)) <= 10
