"""Which extractors made an index's extractions (`extractors.version`): stamped by the first run of a new
index and by `index --full`, compared by `status` and `doctor`."""

from __future__ import annotations

from typing import Any

from extractors.version import extractors_version
from lib import sqlite

_KEY = "extractors_version"


def stamp_extractors(conn: sqlite.Connection) -> None:
    """Every extraction was just made by this version's extractors."""
    conn.execute("INSERT OR REPLACE INTO schema_meta(key, value) VALUES(?, ?)", (_KEY, extractors_version()))


def extractors_state(conn: sqlite.Connection) -> dict[str, Any]:
    """`current`: this version's fingerprint; `index`: the one the index was stamped with (None: made
    before stamps existed); `up_to_date`: they are the same."""
    row = conn.execute("SELECT value FROM schema_meta WHERE key = ?", (_KEY,)).fetchone()
    stamped = row[0] if row else None
    return {"current": extractors_version(), "index": stamped, "up_to_date": stamped == extractors_version()}
