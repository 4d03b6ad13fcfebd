"""Reading the NDJSON event log (`events.jsonl` beside the index, rotated to `events.jsonl.1`) that
hooks and background index runs append to (`hooks/events.log_event`). One reader for every surface:
`total-recall adaptive` and `metrics health`. Here in lib/ so the index layer and the delivery layer
both import it; hook processes take only the file names from it (they append, never read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

EVENTS = "events.jsonl"
ROTATED = EVENTS + ".1"
# The injection ledger (issue 19): one line per item a hook injected, by its short id (lib/memid.py),
# with what `total-recall why ID` shows. Same format and rotation as the events.
LEDGER = "injected.jsonl"


class Events(list[dict[str, Any]]):
    """The events read, oldest first, and how many non-blank lines were not a JSON object."""

    bad: int = 0


def read_events(state: Path, since: str | None = None, name: str = EVENTS) -> Events:
    """All events from the rotated file then the current one (missing files are fine), those with a
    timestamp before `since` left out; bad lines are skipped and counted."""
    import orjson  # here, not at the top: hook processes import this module for its names only

    out = Events()
    for file in (name + ".1", name):
        try:
            data = (state / file).read_bytes()
        except OSError:
            continue
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                out.bad += 1
                continue
            if not isinstance(rec, dict):
                out.bad += 1
            elif not since or str(rec.get("ts") or "") >= since:
                out.append(rec)
    return out
