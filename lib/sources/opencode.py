"""OpenCode sessions: exports (`opencode export <session>`), one JSON document `{info, messages}`,
or the same assembled from OpenCode's own storage (`lib.sources.opencode_storage`); re-read whole
when they change.

`info` holds the session (`ses_…` id, `directory`, `title`, `version`); each message is `{info,
parts}`: `info.role` user or assistant (`modelID`, `path.cwd`, times in epoch ms); parts are `text`
(a user's `synthetic` / `ignored` parts are what OpenCode added, not typed), `tool` (`state.input`,
`output`, `status`), `step-finish` (that API call's tokens), `reasoning` (never stored), `step-start`,
`patch`, `file`, `snapshot`.
"""

from __future__ import annotations

import os
from typing import Any

from lib.discovery import key_path
from lib.model import Carry, FileChunk, FileInfo
from lib.sources.document import load
from lib.sources.emit import Emitter, as_dict, as_text, iso, num
from lib.sources.opencode_storage import assemble, storage_root

_DEFAULT_TITLE = ("New session - ", "Child session - ")


def parse(path: str, start: int, carry: Carry, info: FileInfo) -> FileChunk:
    chunk = FileChunk(path=path, start=0, end=0, carry=Carry())
    em = Emitter(chunk, info)
    storage = storage_root(path)
    if storage is not None:  # OpenCode's own storage: the session's files, assembled
        doc = assemble(storage, path, chunk)
        chunk.end = os.stat(key_path(path)).st_size
    else:
        doc = load(path, chunk)
    if doc is None:
        return em.finish()
    head = as_dict(doc.get("info"))
    em.set(sid=head.get("id"), cwd=head.get("directory"), version=head.get("version"))
    title = head.get("title")
    if isinstance(title, str) and not title.startswith(_DEFAULT_TITLE):
        em.title(title)
    for i, m in enumerate(doc.get("messages") or []):
        if isinstance(m, dict):
            _message(em, as_dict(m.get("info")), [p for p in m.get("parts") or [] if isinstance(p, dict)], i)
    return em.finish()


def _message(em: Emitter, info: dict[str, Any], parts: list[dict[str, Any]], offset: int) -> None:
    mid = str(info.get("id") or f"{em.sid}:{offset}")
    times = as_dict(info.get("time"))
    ts = iso(times.get("created"))
    if info.get("role") == "user":
        typed = [
            as_text(p.get("text"))
            for p in parts
            if p.get("type") == "text" and not p.get("synthetic") and not p.get("ignored")
        ]
        added = [
            as_text(p.get("text"))
            for p in parts
            if p.get("type") == "text" and (p.get("synthetic") or p.get("ignored"))
        ]
        em.user(mid, ts, "\n".join(typed), offset)
        em.user(mid + ":context", ts, "\n".join(added), offset, meta=True)
        return
    em.set(cwd=as_dict(info.get("path")).get("cwd"))
    model = info.get("modelID") if isinstance(info.get("modelID"), str) else None
    for n, p in enumerate(parts):
        kind = p.get("type")
        uuid = str(p.get("id") or f"{mid}:{n}")
        pts = iso(as_dict(p.get("time")).get("start")) or ts
        if kind == "text" and not p.get("synthetic"):
            em.text(uuid, pts, as_text(p.get("text")), offset, model=model)
        elif kind == "tool":
            state = as_dict(p.get("state"))
            st = iso(as_dict(state.get("time")).get("start")) or pts
            call = str(p.get("callID") or uuid)
            em.tool_call(uuid, st, str(p.get("tool") or "?"), state.get("input"), call, offset, model=model)
            error = state.get("status") == "error"
            out = state.get("error") if error else state.get("output")
            em.tool_result(uuid + ":result", st, call, as_text(out), offset, error=error)
        elif kind == "step-finish":
            tok = as_dict(p.get("tokens"))
            cache = as_dict(tok.get("cache"))
            em.usage(
                uuid,
                pts,
                model=model,
                input_tokens=num(tok.get("input")),
                output_tokens=num(tok.get("output")) + num(tok.get("reasoning")),
                cache_read=num(cache.get("read")),
                cache_write=num(cache.get("write")),
            )
        else:
            em.chunk.skipped += 1
            em.chunk.record_types["opencode:" + str(kind)] += 1  # reasoning: never stored
