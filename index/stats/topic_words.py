"""`metrics topics`: each busy project's distinctive words, from the sessions table alone (no usage)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Any

from lib import sqlite
from lib.text import STOPWORDS

_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}")
_DOMAIN_STOP = """add above available check claude code context continue continued conversation details edit
file files fix help it's like look need new now okay one onto per previous read ready run see session start
summary sure two want wants work working write yes"""  # words every session title has: no topic
_ENVELOPE = re.compile(
    r"<(ide_[a-z_]+|system-reminder|command-[a-z]+|local-command-[a-z]+)>.*?(?:</\1>|$)", re.S
)
_STOP = STOPWORDS | frozenset(_DOMAIN_STOP.split())


def topics(
    conn: sqlite.Connection, since: str | None = None, projects: int = 8, terms: int = 8, titles: int = 3
) -> list[dict[str, Any]]:
    """Per busy project: its most distinctive words (session titles and first prompts, tf x idf over
    projects) and its latest session titles. Cheap: reads the sessions table only."""
    rows = conn.execute(
        """SELECT coalesce(project_key, '?'), title, first_prompt, last_ts FROM sessions
           WHERE last_ts >= ? ORDER BY last_ts DESC""",
        (since or "",),
    ).fetchall()
    tf: dict[str, Counter[str]] = defaultdict(Counter)
    latest: dict[str, list[str]] = defaultdict(list)
    count: Counter[str] = Counter()
    for pkey, title, prompt, _last in rows:
        count[pkey] += 1
        title = _ENVELOPE.sub("", title or "").strip()
        text = f"{title} {_ENVELOPE.sub('', (prompt or '')[:1000])[:400]}".lower()
        tf[pkey].update(set(w.strip("-_") for w in _WORD.findall(text)) - _STOP)
        if title and len(latest[pkey]) < titles and title not in latest[pkey]:
            latest[pkey].append(title)
    df: Counter[str] = Counter()
    for c in tf.values():
        df.update(c.keys())
    n = max(len(tf), 1)
    out = []
    for pkey, sessions in count.most_common(projects):
        scored = sorted(
            ((c * (1.0 + math.log(n / df[w])), c, w) for w, c in tf[pkey].items() if len(w) > 2), reverse=True
        )
        out.append(
            {
                "project": pkey,
                "sessions": sessions,
                "terms": [{"term": w, "sessions": c} for _s, c, w in scored[:terms]],
                "recent_titles": latest[pkey],
            }
        )
    return out
