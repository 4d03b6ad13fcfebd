"""OpenCode's own storage (`~/.local/share/opencode/storage/`): one session split over many files,
`session/<projectID>/<sessionID>.json` (the session), `message/<sessionID>/<messageID>.json` (one
message's header) and `part/<messageID>/<partID>.json` (its text, tool calls, tokens). Ids sort in
creation order.

A session is indexed as one whole document (like an `opencode export`): discovery gives its session
file with the summed size and the newest mtime of all its files, so a new or rewritten message or
part changes the stat and the session is re-read whole. Builds that keep sessions in SQLite
(`opencode.db`) are not read; `opencode export` gives the document form.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from lib.discovery import Found, key_path, path_key
from lib.model import FileChunk, FileInfo


def is_storage(root: Path) -> bool:
    return (root / "session").is_dir() and (root / "message").is_dir()


def discover(root: Path, info: FileInfo) -> Iterator[Found]:
    """One `Found` per session file under `root/session/`, its stat covering every file of the session."""
    sessions = root / "session"
    for project in _entries(str(sessions), dirs=True):
        for f in _entries(project.path, dirs=False):
            if not f.name.endswith(".json"):
                continue
            try:
                st = f.stat(follow_symlinks=False)
            except OSError:
                continue
            size, mtime = st.st_size, st.st_mtime_ns
            for g in _files(root, f.name[: -len(".json")]):
                size += g.st_size
                mtime = max(mtime, g.st_mtime_ns)
            stem = path_key(f.name[: -len(".json")])
            found_info = FileInfo("main", stem, None, agent=info.agent, whole=True)
            yield Found(
                path_key(f.path), path_key(root), path_key(project.path), found_info, size, mtime, st.st_ino
            )


def storage_root(path: str) -> Path | None:
    """The storage folder a session file belongs to, or None (an export document)."""
    p = Path(key_path(path))
    root = p.parent.parent.parent
    return root if p.parent.parent.name == "session" and is_storage(root) else None


def assemble(root: Path, path: str, chunk: FileChunk) -> dict[str, Any] | None:
    """The session as an export document `{info, messages: [{info, parts}]}`; unreadable files are
    counted in `chunk.bad_lines` and left out."""
    head = _load(Path(key_path(path)), chunk)
    if head is None:
        return None
    sid = str(head.get("id") or Path(key_path(path)).stem)
    messages: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for m in _entries(str(root / "message" / sid), dirs=False):
        info = _load(Path(m.path), chunk)
        if info is None:
            continue
        mid = str(info.get("id") or m.name[: -len(".json")])
        parts = [
            p
            for e in sorted(_entries(str(root / "part" / mid), dirs=False), key=lambda e: e.name)
            if (p := _load(Path(e.path), chunk))
        ]
        messages.append((info, parts))
    # creation order: the message's own time, then its id (ids sort by time too)
    messages.sort(key=lambda m: (_created(m[0]), str(m[0].get("id") or "")))
    return {"info": head, "messages": [{"info": i, "parts": p} for i, p in messages]}


def _created(info: dict[str, Any]) -> float:
    t = info.get("time")
    c = t.get("created") if isinstance(t, dict) else None
    return float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else 0.0


def _files(root: Path, sid: str) -> Iterator[os.stat_result]:
    for m in _entries(str(root / "message" / sid), dirs=False):
        try:
            yield m.stat(follow_symlinks=False)
        except OSError:
            continue
        for p in _entries(str(root / "part" / m.name[: -len(".json")]), dirs=False):
            try:
                yield p.stat(follow_symlinks=False)
            except OSError:
                continue


def _entries(d: str, *, dirs: bool) -> list[os.DirEntry[str]]:
    """Folders (`dirs`) or files of `d`, symlinks never followed; an unreadable folder has none."""
    try:
        out = []
        for e in os.scandir(d):
            try:
                if e.is_dir(follow_symlinks=False) if dirs else e.is_file(follow_symlinks=False):
                    out.append(e)
            except OSError:
                continue
        return out
    except OSError:
        return []


def _load(path: Path, chunk: FileChunk) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as f:  # read-only
            data = orjson.loads(f.read())
    except OSError:
        chunk.bad_lines["unreadable"] += 1
        return None
    except orjson.JSONDecodeError:
        chunk.bad_lines["invalid_json"] += 1
        return None
    chunk.lines += 1
    return data if isinstance(data, dict) else None
