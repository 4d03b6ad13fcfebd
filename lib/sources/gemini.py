"""Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.json`): one JSON document per session
`{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`, re-read whole when it changes.

Messages are `user` (content: a list of `{text}` parts; file contents Gemini appends after
`--- Content from referenced files ---` are not the user's words; `displayContent`, when present, is
what was typed), `gemini` (content, `toolCalls` with their results, `tokens`, `model`; `thoughts` are
never stored) and `info` / `error` / `warning` notices ("Request cancelled." is an interrupt).

The document has no cwd, only `projectHash` = sha256(project root). The root comes from the
`.project_root` file newer versions keep beside `chats/`, else from an absolute path in the session
(a tool's `[current working directory …]`, a file or folder argument) one of whose ancestors hashes
to `projectHash`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

from lib.model import Carry, FileChunk, FileInfo
from lib.sources.document import load, read_text, sibling
from lib.sources.emit import INTERRUPT, Emitter, as_dict, as_text, num

_REFERENCED = "\n--- Content from referenced files ---"
_CWD = re.compile(r"\[current working directory ([^\]]+)\]")
_PATH_ARGS = ("dir_path", "file_path", "absolute_path", "path", "directory")
_ABS = re.compile(r"(?<![\w.])(/[^\s'\"`:;,)]+|[A-Za-z]:\\[^\s'\"`;,)]+)")


def parse(path: str, start: int, carry: Carry, info: FileInfo) -> FileChunk:
    chunk = FileChunk(path=path, start=0, end=0, carry=Carry())
    em = Emitter(chunk, info)
    doc = load(path, chunk)
    if doc is None:
        return em.finish()
    msgs = [m for m in doc.get("messages") or [] if isinstance(m, dict)]
    em.set(sid=doc.get("sessionId"), cwd=_cwd(path, doc, msgs))
    for i, m in enumerate(msgs):
        _message(em, m, i)
    return em.finish()


def _message(em: Emitter, m: dict[str, Any], offset: int) -> None:
    t = m.get("type")
    uuid = str(m.get("id") or f"{em.sid}:{offset}")
    ts = m.get("timestamp")
    if t == "user":
        shown = m.get("displayContent")
        text = as_text(shown if shown else m.get("content"))
        em.user(uuid, ts, text.split(_REFERENCED, 1)[0], offset)
    elif t == "gemini":
        model = m.get("model") if isinstance(m.get("model"), str) else None
        em.text(uuid, ts, as_text(m.get("content")), offset, model=model)
        for i, call in enumerate(m.get("toolCalls") or []):
            if not isinstance(call, dict):
                continue
            cid = str(call.get("id") or f"{uuid}:{i}")
            em.tool_call(
                f"{uuid}:t{i}",
                call.get("timestamp") or ts,
                str(call.get("name") or "?"),
                call.get("args"),
                cid,
                offset,
                model=model,
            )
            error = call.get("status") not in (None, "success")
            em.tool_result(
                f"{uuid}:r{i}", call.get("timestamp") or ts, cid, _result(call), offset, error=error
            )
        tok = as_dict(m.get("tokens"))
        cached = num(tok.get("cached"))
        em.usage(
            uuid,
            ts,
            model=model,
            input_tokens=num(tok.get("input")) - cached,
            output_tokens=num(tok.get("output")) + num(tok.get("thoughts")),  # thinking is billed as output
            cache_read=cached,
        )
    elif t == "info" and as_text(m.get("content")).strip() == "Request cancelled.":
        em.user(uuid, ts, INTERRUPT, offset)
    else:
        em.chunk.skipped += 1
        em.chunk.record_types["gemini:" + str(t)] += 1


def _result(call: dict[str, Any]) -> str:
    """A tool call's output: the function response's `output` (or error), else what was displayed."""
    for r in call.get("result") or []:
        resp = as_dict(as_dict(as_dict(r).get("functionResponse")).get("response"))
        out = resp.get("output", resp.get("error"))
        if out is not None:
            return as_text(out)
    shown = call.get("resultDisplay")
    return shown if isinstance(shown, str) else as_text(shown)


def _cwd(path: str, doc: dict[str, Any], msgs: list[dict[str, Any]]) -> str | None:
    root = read_text(sibling(path, "..", ".project_root"))
    if root:
        return root
    want = doc.get("projectHash")
    if not isinstance(want, str):
        return None
    for candidate in _paths(msgs):
        p = candidate.rstrip("/\\")
        for _ in range(30):
            if hashlib.sha256(p.encode("utf-8", "replace")).hexdigest() == want:
                return p
            parent = re.sub(r"[/\\][^/\\]*$", "", p)
            if parent == p or not parent:
                break
            p = parent
    return None


def _paths(msgs: list[dict[str, Any]]) -> Iterator[str]:
    """Absolute paths the session mentions: shell working directories first, then path arguments."""
    calls = [c for m in msgs for c in m.get("toolCalls") or [] if isinstance(c, dict)]
    for c in calls:
        found = _CWD.search(str(c.get("description") or ""))
        if found:
            yield found.group(1).strip()
    for c in calls:
        args = as_dict(c.get("args"))
        for key in _PATH_ARGS:
            v = args.get(key)
            if isinstance(v, str) and (v.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", v)):
                yield v
    for c in calls:  # "Directory listing for /…", a path in an error
        yield from _ABS.findall(_result(c)[:300])
