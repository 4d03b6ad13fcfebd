"""Push and pull for one project. `prepare` turns the index's shareable rows into exactly what would
leave the machine: `<private>` spans cut and every field through the one scrubber, each with a
relevance score 0-10, a visibility (`private` items never leave) and a client key (so a re-push sends
nothing new and the server stores nothing twice)."""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from extractors.model import STANDING_KINDS
from extractors.scrubber import scrub_obj, scrub_text
from index.briefing import Shareable
from lib.content import strip_private
from lib.text import clip
from total_recall.team.config import TeamConfig, project_file, read_json, write_json
from total_recall.team.http import call

TITLE_CHARS = 140
SUMMARY_CHARS = 4000  # well under the server's limit: one long memory must not block a push
# Base relevance of each kind: what a teammate most needs first (bans and decisions), least (recaps).
BASE = {
    "ban": 7.0,
    **dict.fromkeys(STANDING_KINDS, 7.0),
    "failed_attempt": 6.0,
    "goal": 5.5,
    "correction": 5.0,
    "session": 3.5,
}
PULL_LIMIT = 30


@dataclass
class Outgoing:
    source_key: str
    client_key: str
    title: str
    dense_summary: str
    context_type: str
    relevance_score: float
    metadata: dict[str, Any]
    visibility: str  # team | private

    def body(self, project_id: str) -> dict[str, Any]:
        return {
            "project_id": project_id,
            "title": self.title,
            "dense_summary": self.dense_summary,
            "context_type": self.context_type,
            "relevance_score": self.relevance_score,
            "metadata": self.metadata,
            "client_key": self.client_key,
        }


def clean(text: str) -> str:
    """What of a text may leave the machine: no `<private>` span, no secret."""
    return scrub_text(strip_private(text or ""))


def relevance(s: Shareable) -> float:
    """0-10: the kind's base, plus the extractor's confidence and how often it was said."""
    score = (
        BASE.get(s.kind, 4.0)
        + 2.0 * max(0.0, min(1.0, s.confidence))
        + min(1.0, math.log2(max(1, s.mentions)) / 3)
    )
    return round(max(0.0, min(10.0, score)), 2)


def prepare(project_id: str, rows: Iterable[Shareable], private: set[str]) -> list[Outgoing]:
    out = []
    seen: set[str] = set()
    for s in rows:
        summary = clip(clean(s.content).strip(), SUMMARY_CHARS)
        if not summary or s.key in seen:  # e.g. one prompt read as a correction by two extractors
            continue
        seen.add(s.key)
        title = clip(f"{s.title}: {summary}", TITLE_CHARS)
        meta = scrub_obj({"kind": s.kind, "ts": s.ts, "session": s.session_id, "mentions": s.mentions})
        digest = hashlib.sha256(f"{project_id}\0{s.key}\0{summary}".encode()).hexdigest()[:40]
        out.append(
            Outgoing(
                s.key,
                digest,
                title,
                summary,
                s.kind,
                relevance(s),
                meta,
                "private" if s.key in private else "team",
            )
        )
    return out


class Ledger:
    """The project's client state: keys sent (with the server's ids) and keys kept private."""

    def __init__(self, state: Path, project_id: str) -> None:
        self.path = project_file(state, project_id)
        data = read_json(self.path)
        sent = data.get("sent")
        self.sent: dict[str, int] = dict(sent) if isinstance(sent, dict) else {}
        self.private: set[str] = {k for k in data.get("private") or [] if isinstance(k, str)}

    def save(self) -> None:
        write_json(self.path, {"sent": self.sent, "private": sorted(self.private)})


def cache_path(state: Path, project_id: str) -> Path:
    """The last pulled items (a file of its own: the hooks write it while a push may run)."""
    return project_file(state, project_id).with_suffix(".cache.json")


def read_cache(state: Path, project_id: str) -> list[dict[str, Any]]:
    items = read_json(cache_path(state, project_id)).get("items")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def pending(items: list[Outgoing], ledger: Ledger) -> list[Outgoing]:
    """What a push would send: team items not sent before."""
    return [i for i in items if i.visibility == "team" and i.client_key not in ledger.sent]


def push(
    cfg: TeamConfig, project_id: str, items: list[Outgoing], ledger: Ledger, timeout: float = 10.0
) -> int:
    """Send `items`; each one acknowledged is recorded at once, so an interrupted push resumes."""
    n = 0
    for item in items:
        row = call(
            cfg.url,
            cfg.token,
            "POST",
            "/api/conversation-contexts",
            body=item.body(project_id),
            timeout=timeout,
        )
        ledger.sent[item.client_key] = int(row["id"])
        ledger.save()
        n += 1
    return n


def pull(
    cfg: TeamConfig, project_id: str, ledger: Ledger, q: str = "", timeout: float = 10.0
) -> list[dict[str, Any]]:
    """Teammates' contexts for the project, best first (this machine's own pushes left out); cached."""
    rows = call(
        cfg.url,
        cfg.token,
        "GET",
        "/api/conversation-contexts/recall",
        params={"project_id": project_id, "q": q or None, "limit": PULL_LIMIT},
        timeout=timeout,
    )
    mine = set(ledger.sent.values())
    keep = ("id", "title", "dense_summary", "context_type", "relevance_score", "created_by", "created_at")
    items = [
        {k: r.get(k) for k in keep} for r in rows or [] if isinstance(r, dict) and r.get("id") not in mine
    ]
    if not q:
        write_json(cache_path(cfg.state, project_id), {"fetched": time.time(), "items": items})
    return items


def as_dicts(items: list[Outgoing]) -> list[dict[str, Any]]:
    return [asdict(i) for i in items]
