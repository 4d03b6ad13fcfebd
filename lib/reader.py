"""Streaming, byte-exact line reader and tolerant record decoding (W1–W3).

The reader never loads a whole file: it reads fixed-size blocks and yields complete lines with
their byte offsets. A final segment with no newline is returned separately so the caller can
decide whether it is a complete record (consume it) or a partial write (re-read it next run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import orjson

from lib.discovery import key_path

BLOCK = 1 << 20
_decoder = json.JSONDecoder()
_LONE = re.compile("[\ud800-\udfff]")  # only lone ones survive decoding: pairs are joined


# (offset of the line's first byte, its bytes without the newline, terminated: False only for a final
# segment with no newline). A plain tuple: one is made per line of every file read.
Line = tuple[int, bytes, bool]


def iter_lines(path: str, start: int = 0) -> Iterator[Line]:
    """Yield every line from byte `start`; the last one may be unterminated. `path` may be an
    index key (`lib.discovery.path_key`).

    Newlines are found with `bytes.find` (memchr) rather than `bytes.split`, whose one-byte
    separator loop costs ~5 instructions per byte: a tenth of parsing went there."""
    with open(key_path(path), "rb") as f:  # read-only, always
        f.seek(start)
        pos = start
        pending: list[bytes] = []  # pieces of a line longer than a block, joined once (not per block)
        while True:
            block = f.read(BLOCK)
            if not block:
                break
            j = block.find(b"\n")
            if j < 0:
                pending.append(block)
                continue
            if pending:
                first = b"".join((*pending, block[:j]))
                pending = []
            else:
                first = block[:j]
            yield pos, first, True
            pos += len(first) + 1
            i = j + 1
            j = block.find(b"\n", i)
            while j >= 0:
                yield pos, block[i:j], True
                pos += j - i + 1
                i = j + 1
                j = block.find(b"\n", i)
            if i < len(block):
                pending.append(block[i:])
        if pending:
            yield pos, b"".join(pending), False


def decode(data: bytes, whole: bool = False) -> tuple[list[dict[str, Any]], str | None, bool]:
    """Decode one line into records.

    Returns (records, bad_reason, repaired). `bad_reason` is set when nothing usable was found;
    `repaired` is True when records were recovered from invalid UTF-8 or `}{`-glued objects.
    With `whole`, objects followed by undecodable bytes count as invalid (for an unterminated
    last line, that tail is a record still being written: it must be re-read, not dropped).
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if exc.msg.startswith("depth limit"):
            return [], "too_deep", False  # valid JSON nested beyond any real record: skip it, go on
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
    too_deep = False
    while idx < n:
        try:
            obj, end = _decoder.raw_decode(stripped, idx)
        except json.JSONDecodeError:
            break
        except RecursionError:  # the stdlib decoder recurses per level: a deep line must not stop the run
            too_deep = True
            break
        if isinstance(obj, dict):
            objs.append(_without_lone_surrogates(obj) if b"\\u" in data else obj)
        idx = end
        while idx < n and stripped[idx] in " \t\r":
            idx += 1
    if too_deep and not objs:
        return [], "too_deep", False
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


def _without_lone_surrogates(obj: dict[str, Any]) -> dict[str, Any]:
    """The stdlib decoder accepts `\\ud800` escapes that orjson refuses; such a string cannot be
    stored as UTF-8, so each lone surrogate becomes U+FFFD. Iterative: the object may be deep."""
    stack: list[Any] = [obj]
    while stack:
        node = stack.pop()
        for k, v in list(node.items()) if isinstance(node, dict) else enumerate(node):
            if isinstance(v, str):
                if _LONE.search(v):
                    node[k] = _LONE.sub("\ufffd", v)
            elif isinstance(v, (dict, list)):
                stack.append(v)
            if isinstance(k, str) and _LONE.search(k):
                node[_LONE.sub("\ufffd", k)] = node.pop(k)
    return obj
