"""Away summaries (X6): Claude Code's own recaps of where a session stands.

Two sources, both written by Claude Code rather than typed: `system/away_summary` records (a short
recap shown when the user comes back) and the compact summary that opens a session after
compaction. The first is kept whole; from the second we keep the parts that say what the work is
and where it stopped (intent, pending tasks, current work, next step), because the chronological
middle is already in the index as messages.
"""

from __future__ import annotations

import re

from extractors.model import SUMMARY_KIND, Extraction

# Linear on any input: no two adjacent runs of the same spaces, and headings do not span lines
# ([^\S\n] is a space other than a newline).
_NOTE = re.compile(r"(?<!\s)\s*\(disable recaps in /config\)\s*$")
_SECTION = re.compile(
    r"(?im)^[^\S\n]*(?:\d+\.[^\S\n]*)?(?:\*+[^\S\n]*)?(primary request and intent|pending tasks|"
    r"current work|optional next step|next step)s?[^\S\n]*(?:\*+[^\S\n]*)?(?::[^\S\n]*)?$"
)
_ANY_HEADING = re.compile(r"(?m)^[^\S\n]*(?:\d+\.[^\S\n]*)?\**[A-Z][A-Za-z /&-]{3,60}\**[^\S\n]*:[^\S\n]*$")
CAP = 700


def _sections(text: str) -> list[str]:
    """The wanted sections of a compact summary, in order, each up to the next heading."""
    out = []
    for m in _SECTION.finditer(text):
        start = m.end()
        nxt = _ANY_HEADING.search(text, start)
        body = " ".join(text[start : nxt.start() if nxt else len(text)].split())
        if body:
            out.append(f"{m.group(1).capitalize()}: {body[:300]}")
    return out


def extract_summary(
    kind: str, text: str, *, uuid: str, session_id: str, ts: str | None, cwd: str | None
) -> list[Extraction]:
    """`kind` is the message kind: `away_summary` or `compact_summary`."""
    if kind == "away_summary":
        content = _NOTE.sub("", text).strip()
        source = "away_summary"
    elif kind == "compact_summary":
        parts = _sections(text)
        if not parts:
            return []
        content = " | ".join(parts)
        source = "compact_summary"
    else:
        return []
    if len(content) < 20:
        return []
    return [
        Extraction(
            kind=SUMMARY_KIND,
            content=content[:CAP],
            source_uuid=uuid,
            session_id=session_id,
            score=0.7,
            context={"source": source},
            ts=ts,
            cwd=cwd,
        )
    ]
