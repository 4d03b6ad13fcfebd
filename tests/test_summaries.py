"""Away summaries (X6) from recap records and compact summaries."""

from __future__ import annotations

from extractors.summaries import extract_summary

COMPACT = """This session is being continued from a previous conversation that ran out of context.

Analysis:
1. The user asked for many things in order...

Summary:
1. Primary Request and Intent:
   The user wants the importer to accept gzip files and keep memory flat.

2. Key Technical Concepts:
   - streaming, zlib

7. Pending Tasks:
   - add a test for truncated archives

8. Current Work:
   Writing the gzip branch of read_blocks in src/importer.py.

9. Optional Next Step:
   Run the test suite.
"""


def test_away_summary_is_kept_whole_without_the_settings_note() -> None:
    [e] = extract_summary(
        "away_summary",
        "Merged round 1; round 2 in flight. (disable recaps in /config)",
        uuid="u1",
        session_id="s1",
        ts="2026-01-01T00:00:00Z",
        cwd="/x",
    )
    assert (e.kind, e.content, e.context["source"]) == (
        "away_summary",
        "Merged round 1; round 2 in flight.",
        "away_summary",
    )


def test_compact_summary_keeps_intent_pending_current_and_next() -> None:
    [e] = extract_summary("compact_summary", COMPACT, uuid="u2", session_id="s1", ts=None, cwd=None)
    assert e.content.startswith("Primary request and intent: The user wants the importer to accept gzip")
    assert "Pending tasks: - add a test for truncated archives" in e.content
    assert "Current work: Writing the gzip branch" in e.content
    assert "Optional next step: Run the test suite." in e.content
    assert "Key Technical Concepts" not in e.content and "streaming" not in e.content


def test_other_kinds_and_empty_summaries_give_nothing() -> None:
    assert (
        extract_summary(
            "prompt", "hello there, a long enough prompt", uuid="u", session_id="s", ts=None, cwd=None
        )
        == []
    )
    assert (
        extract_summary(
            "compact_summary",
            "This session is being continued… no sections here",
            uuid="u",
            session_id="s",
            ts=None,
            cwd=None,
        )
        == []
    )
    assert extract_summary("away_summary", "ok", uuid="u", session_id="s", ts=None, cwd=None) == []
