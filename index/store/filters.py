"""Shared filters and scopes (I7, I8): one meaning of project/cwd/since/role/kind everywhere."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache

from index.store.scope import stored_cwd

# Longer than any id, path or project key, so a longer filter value matches nothing; and short enough
# for a LIKE pattern (SQLite refuses patterns over 50 KB: "LIKE or GLOB pattern too complex").
MAX_KEY_CHARS = 4096
_REL = re.compile(r"^\s*(\d{1,9})\s*([a-z]+)\s*$", re.I)
# Clock units are seconds; calendar units (months, years) go through dateutil's relativedelta.
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_CALENDAR = {"mo": "months", "y": "years"}
_ALIASES = {
    "sec": "s", "second": "s", "mins": "min", "minute": "min", "hr": "h", "hour": "h", "day": "d",
    "wk": "w", "week": "w", "mon": "mo", "month": "mo", "yr": "y", "year": "y",
}  # fmt: skip
SINCE_HELP = "a duration like 7d, 12h, 2w, 3mo or 1y; today; yesterday; or an ISO date like 2026-10-01."


def parse_ts(ts: str | None) -> datetime | None:
    """A transcript timestamp (ISO-8601, `Z` or offset) as an aware datetime; None if absent or bad."""
    if not ts:
        return None
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def recency(ts: str | None, now: datetime, floor: float, half_life_days: float) -> float:
    """A ranking factor from `floor` (old) to 1 (now); unknown dates count as mid-aged (0.9).
    Days are whole (a search ranks hundreds of rows from a few days: each day is computed once)."""
    return _recency(ts[:10] if ts else None, now.toordinal(), floor, half_life_days)


@lru_cache(maxsize=4096)
def _recency(day: str | None, today: int, floor: float, half_life_days: float) -> float:
    try:
        days = max(today - date.fromisoformat(day).toordinal(), 0) if day else None
    except ValueError:
        days = None
    if days is None:
        return 0.9
    return floor + (1.0 - floor) * math.exp(-days / half_life_days)


class BadFilter(ValueError):
    """An invalid filter value; the message says what is accepted."""


def zone(name: str | None) -> tzinfo:
    """A `--timezone` value: None or `local` is this machine's zone (DST-aware), `UTC`, or an IANA name."""
    if name and name.upper() in ("UTC", "Z"):
        return timezone.utc
    from dateutil import tz

    if not name or name.lower() == "local":
        local: tzinfo = tz.tzlocal()
        return local
    found: tzinfo | None = tz.gettz(name)
    if found is None:
        raise BadFilter(
            f"--timezone {name!r} is not a known zone: use local, UTC or a name like Europe/Paris"
        )
    return found


def _unit(word: str) -> str | None:
    """`mo`, `month`, `months` -> `mo`; None for a word that is no unit."""
    for w in (word, word[:-1] if word.endswith("s") else ""):
        w = _ALIASES.get(w, w)
        if w in _UNITS or w in _CALENDAR:
            return w
    return None


def parse_since(value: str | None, now: datetime | None = None, tz: tzinfo | None = None) -> str | None:
    """`7d`, `12h`, `2w`, `3mo`, `1y`, `today`, `yesterday` or an ISO date/time -> ISO timestamp string
    comparable with stored `ts`. `today`, `yesterday` and dates without an offset are days of `tz`
    (default UTC; the CLI passes its `--timezone`)."""
    from dateutil.relativedelta import relativedelta

    if not value:
        return None
    tz = tz or timezone.utc
    now = (now or datetime.now(timezone.utc)).astimezone(tz)
    word = value.strip().lower()
    m = _REL.match(word)
    unit = _unit(m.group(2)) if m else None
    try:
        if word in ("today", "yesterday"):
            dt = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=word == "yesterday")
        elif m and unit in _CALENDAR:
            dt = now - relativedelta(**{_CALENDAR[unit]: int(m.group(1))})
        elif m and unit:  # a duration too long for a date is as bad as a malformed one
            dt = now - timedelta(seconds=int(m.group(1)) * _UNITS[unit])
        else:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (ValueError, OverflowError) as exc:
        raise BadFilter(f"--since {value!r}: use {SINCE_HELP}") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def since_day(ts: str, tz: tzinfo) -> str:
    """The day (YYYY-MM-DD) of a stored UTC timestamp in zone `tz`."""
    dt = parse_ts(ts)
    return dt.astimezone(tz).date().isoformat() if dt else ts[:10]


@dataclass(slots=True)
class Filters:
    project: str | None = None  # project key, or a substring of it
    cwd: str | None = None
    since: str | None = None  # already-parsed ISO timestamp
    role: str | None = None
    kind: str | None = None
    session: str | None = None
    include_sidechains: bool = True
    agent: str | None = None  # claude | codex | gemini | copilot | opencode (lib.sources.AGENTS)

    def sql(self, m: str = "m", s: str = "s") -> tuple[str, list[object]]:
        """WHERE fragments over messages alias `m` joined to sessions alias `s`."""
        where: list[str] = []
        args: list[object] = []
        if max(len(self.project or ""), len(self.session or "")) > MAX_KEY_CHARS:
            return "0", []  # no key is that long
        if self.project:
            where.append(f"({s}.project_key = ? OR {s}.project_key LIKE ?)")
            args += [self.project, f"%{self.project}%"]
        if self.cwd:
            where.append(f"{s}.cwd = ?")
            args.append(stored_cwd(self.cwd))
        if self.since:
            where.append(f"{m}.ts >= ?")
            args.append(self.since)
        if self.role:
            where.append(f"{m}.role = ?")
            args.append(self.role)
        if self.kind:
            where.append(f"{m}.kind = ?")
            args.append(self.kind)
        if self.session:
            where.append(f"{m}.session_id LIKE ?")
            args.append(self.session + "%")
        if not self.include_sidechains:
            where.append(f"{m}.is_sidechain = 0")
        if self.agent:
            where.append(f"{m}.agent = ?")
            args.append(self.agent)
        return (" AND ".join(where), args)
