"""User-owned state: the decisions a user made about their memory, kept in a small file beside the
index so that deleting the database (`rebuild`, or by hand) never undoes them (issue 10, item 8).

`index.db` → `index.user.json` (owner-only, replaced atomically):

    {"version": 1,
     "forgotten": {"<session id>": {"at": ISO time, "reason": str, "leaves": [summary leaf uuids]}},
     "promoted": [{"kind", "content", "context", "session_id", "source_uuid", "cwd", "project_key", "ts"}],
     "demoted": [{"kind", "project_key", "norm", "content", "at"}],
     "feedback": {"<memory id>": {"verdict": "wrong"|"helpful", "at", "kind", "norm", "content", …}},
     "enforced": {"<ban id>": {"mode": "block", "at", "content", "project_key"}}}

- *forgotten* sessions are never stored again; `leaves` are the uuids that `summary` records in other
  files point at, so a summary of a forgotten session is dropped too (it has no session id of its own).
- *promoted* memories are inserted again when missing (a new database).
- *demoted* memories (mined ones the user removed) are deleted again whenever an index run brings them
  back: every extraction of that kind, project and normalised content.
- *feedback* (issue 19): the user's verdict on an injected item, by its `lib.memid` id; a `wrong` one is
  never injected again (matched by id or by normalised text, so a rebuilt index or another path to the
  same memory does not bring it back).
- *enforced* bans (issue 19): the ones `total-recall bans enforce ID` set to block at PreToolUse.

Everything in the file went through the scrubber (it holds memory text, like the index).
`sync_tombstones` runs when an index run opens the index (before anything is planned);
`index.store.memories.reapply_memories` after every index run that wrote something and after `rebuild`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from extractors.model import STANDING_KINDS
from index.store.db import IndexError_
from lib import sqlite

VERSION = 1
PROMOTABLE = ("ban", *STANDING_KINDS, "goal", "implicit_preference", "domain_fact")
LEAF = "leaf:"  # prefix of `forgotten` rows that name a summary leaf rather than a session


class UserStateError(IndexError_):
    fix = "fix the JSON by hand or move the file away (its decisions are then lost)"


@dataclass
class UserState:
    forgotten: dict[str, dict[str, Any]] = field(default_factory=dict)
    promoted: list[dict[str, Any]] = field(default_factory=list)
    demoted: list[dict[str, Any]] = field(default_factory=list)
    feedback: dict[str, dict[str, Any]] = field(default_factory=dict)
    enforced: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "forgotten": self.forgotten,
            "promoted": self.promoted,
            "demoted": self.demoted,
            "feedback": self.feedback,
            "enforced": self.enforced,
        }


def path_for(db: Path) -> Path:
    return db.with_name(db.stem + ".user.json")


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def load(db: Path) -> UserState:
    """The user's decisions for this index ({} when there are none). A damaged file is an error, never
    silently ignored: ignoring it would bring forgotten sessions back."""
    path = path_for(db)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return UserState()
    except OSError as exc:
        raise UserStateError(f"cannot read {path}: {exc.strerror or exc}", "fix its permissions") from exc
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return UserState(
            dict(data.get("forgotten") or {}),
            list(data.get("promoted") or []),
            list(data.get("demoted") or []),
            dict(data.get("feedback") or {}),
            dict(data.get("enforced") or {}),
        )
    except (ValueError, TypeError) as exc:
        raise UserStateError(f"{path} is not valid user state ({exc})") from exc


def save(db: Path, state: UserState) -> None:
    """Write atomically (temp file + rename), readable by the owner only."""
    path = path_for(db)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(orjson.dumps(state.to_json(), option=orjson.OPT_INDENT_2))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserStateError(
            f"cannot write {path}: {exc.strerror or exc}",
            "free some disk space or fix the data directory's permissions; nothing was changed",
        ) from exc


def sync_tombstones(conn: sqlite.Connection, db: Path) -> int:
    """Make the `forgotten` table hold every tombstone of the file (a new or rebuilt database)."""
    state = load(db)
    if not state.forgotten:
        return 0
    have = {r[0] for r in conn.execute("SELECT session_id FROM forgotten")}
    rows = []
    for sid, t in state.forgotten.items():
        at, reason = t.get("at"), t.get("reason") or "user request"
        rows += [
            (k, at, reason) for k in [sid, *(LEAF + leaf for leaf in t.get("leaves") or [])] if k not in have
        ]
    if rows:
        conn.executemany("INSERT OR IGNORE INTO forgotten(session_id, at, reason) VALUES(?,?,?)", rows)
    return len(rows)
