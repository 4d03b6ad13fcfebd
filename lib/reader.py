"""Streaming, byte-exact line reader and tolerant record decoding (W1–W3).

The reader never loads a whole file: it reads fixed-size blocks and yields complete lines with
their byte offsets. A final segment with no newline is returned separately so the caller can
decide whether it is a complete record (consume it) or a partial write (re-read it next run).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

BLOCK = 1 << 20
_decoder = json.JSONDecoder()


@dataclass(slots=True)
class Line:
    offset: int  # byte offset of the first byte of the line
    data: bytes  # without the trailing newline
    terminated: bool  # False only for a final segment with no newline


def iter_lines(path: str, start: int = 0) -> Iterator[Line]:
    """Yield every line from byte `start`; the last one may be unterminated."""
    with open(path, "rb") as f:  # read-only, always
        f.seek(start)
        pos = start
        rest = b""
        while True:
            block = f.read(BLOCK)
            if not block:
                break
            buf = rest + block if rest else block
            parts = buf.split(b"\n")
            rest = parts.pop()
            for part in parts:
                yield Line(pos, part, True)
                pos += len(part) + 1
        if rest:
            yield Line(pos, rest, False)


def decode(data: bytes, whole: bool = False) -> tuple[list[dict[str, Any]], str | None, bool]:
    """Decode one line into records.

    Returns (records, bad_reason, repaired). `bad_reason` is set when nothing usable was found;
    `repaired` is True when records were recovered from invalid UTF-8 or `}{`-glued objects.
    With `whole`, objects followed by undecodable bytes count as invalid (for an unterminated
    last line, that tail is a record still being written: it must be re-read, not dropped).
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _decode_slow(data, whole)
    if isinstance(obj, dict):
        return [obj], None, False
    return [], "not_object", False


def _decode_slow(data: bytes, whole: bool = False) -> tuple[list[dict[str, Any]], str | None, bool]:
    text = data.decode("utf-8", errors="replace")
    bad_utf8 = "\ufffd" in text and b"\xef\xbf\xbd" not in data
    stripped = text.strip()
    if not stripped:
        return [], "blank", False
    objs: list[dict[str, Any]] = []
    idx = 0
    n = len(stripped)
    while idx < n:
        try:
            obj, end = _decoder.raw_decode(stripped, idx)
        except json.JSONDecodeError:
            break
        if isinstance(obj, dict):
            objs.append(obj)
        idx = end
        while idx < n and stripped[idx] in " \t\r":
            idx += 1
    if objs and idx >= n:
        return objs, None, True
    if objs and whole:
        return [], "invalid_json", False
    if objs:
        # Valid objects followed by garbage: keep what parsed, still count the line as damaged.
        return objs, None, True
    if bad_utf8:
        return [], "invalid_utf8", False
    return [], "invalid_json", False
