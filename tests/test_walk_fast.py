"""The walker's fast paths equal the slow ones they replaced (speed pass, branch wt-walk).

- `iter_lines` finds newlines with `bytes.find` instead of `bytes.split`: same lines, offsets and
  unterminated tail as splitting the whole file, for any bytes, block size and start offset.
- `read_lines` tries `orjson.loads` on a line before the full `decode`: same records, offsets and
  counts as decoding every line the full way.
- `turn_of` takes exact ints as they are (`as_int(v) or 0` is v for them): same rows for any usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lib.reader
from lib.model import FileChunk, FileInfo, Turn
from lib.reader import decode, iter_lines
from lib.turns import as_dict, as_int, turn_of
from lib.walker import read_lines


def split_lines(data: bytes, start: int) -> list[tuple[int, bytes, bool]]:
    """The reference: the file's bytes from `start` split at every newline."""
    parts = data[start:].split(b"\n")
    out, pos = [], start
    for p in parts[:-1]:
        out.append((pos, p, True))
        pos += len(p) + 1
    if parts[-1]:
        out.append((pos, parts[-1], False))
    return out


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"\n", b"a", b"{}", b"xyz", b"\n\n", b"0123456789"]), max_size=60).map(
        b"".join
    ),
    block=st.integers(1, 12),
    start=st.integers(0, 80),
)
def test_iter_lines_equals_split(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block: int, start: int
) -> None:
    p = tmp_path_factory.mktemp("lines") / "f.jsonl"
    p.write_bytes(data)
    start = min(start, len(data))
    saved = lib.reader.BLOCK
    lib.reader.BLOCK = block
    try:
        got = list(iter_lines(str(p), start))
    finally:
        lib.reader.BLOCK = saved
    assert got == split_lines(data, start)


LINES = [
    b'{"type":"user","uuid":"u1"}',
    b'  {"type":"x"}  ',
    b"",
    b"   ",
    b"[1, 2]",
    b'"text"',
    b'{"a":1}{"b":2}',
    b'{"a":1} trailing',
    b'{"a":"\\ud800"}',
    b'{"bad": \xff\xfe}',
    b'{"cut": "ha',
    b"[" * 2000 + b"]" * 2000,
    b'{"deep":' + b"[" * 600 + b"]" * 600 + b"}",
]


def slow_read(path: str, chunk: FileChunk, record: Any) -> None:
    """`read_lines` as it was (from the start of a file): every line through the full `decode`."""
    for offset, data, terminated in iter_lines(path, 0):
        recs, bad, repaired = decode(data, whole=not terminated) if data.strip() else ([], "blank", False)
        if not terminated:
            if bad or not recs:
                break  # a partial write: left for the next run
            chunk.repaired["no_final_newline"] += 1
        elif bad:
            chunk.bad_lines[bad] += 1
        elif repaired:
            chunk.repaired["glued" if len(recs) > 1 else "recovered"] += 1
        chunk.lines += 1
        chunk.end = offset + len(data) + terminated
        for rec in recs:
            record(rec, offset)


def _run(reader: Any, path: Path) -> tuple[Any, ...]:
    chunk = FileChunk(path=str(path), start=0, end=0)
    seen: list[tuple[Any, int]] = []
    reader(str(path), chunk, lambda rec, off: seen.append((rec, off)))
    return seen, chunk.lines, chunk.end, dict(chunk.bad_lines), dict(chunk.repaired)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES), max_size=12), tail=st.sampled_from([b"\n", b""]))
def test_read_lines_equals_full_decode(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], tail: bytes
) -> None:
    p = tmp_path_factory.mktemp("read") / "f.jsonl"
    p.write_bytes(b"\n".join(lines) + tail)

    def fast(path: str, chunk: FileChunk, record: Any) -> None:
        read_lines(path, 0, chunk, record)

    assert _run(fast, p) == _run(slow_read, p)


def old_turn_of(rec: dict[str, Any], msg: dict[str, Any], info: FileInfo) -> Turn | None:
    """`turn_of` as it was: every count through `as_int(v) or 0`."""
    usage, mid = msg.get("usage"), msg.get("id")
    if not isinstance(usage, dict) or not isinstance(mid, str):
        return None
    cc, stu = as_dict(usage.get("cache_creation")), as_dict(usage.get("server_tool_use"))
    n = [as_int(d.get(k)) or 0 for d, k in zip((usage,) * 3 + (cc,) * 2 + (usage, stu), COUNT_KEYS)]
    side = bool(rec.get("isSidechain")) or info.layout != "main"
    aid = rec.get("agentId") if isinstance(rec.get("agentId"), str) else info.agent_id
    head = (mid, str(rec.get("requestId") or ""), "s", "u", rec.get("timestamp"), "m")
    return Turn(*head, *n[:6], side, aid, n[6])


COUNT_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "ephemeral_5m_input_tokens",
    "ephemeral_1h_input_tokens",
    "cache_read_input_tokens",
    "web_search_requests",
)
COUNTS = st.one_of(
    st.integers(-5, 10**12), st.booleans(), st.floats(-1e3, 1e9), st.none(), st.text(max_size=3)
)
USAGE = st.dictionaries(st.sampled_from(COUNT_KEYS), COUNTS).flatmap(
    lambda d: st.fixed_dictionaries(
        {},
        optional={
            "cache_creation": st.one_of(st.dictionaries(st.sampled_from(COUNT_KEYS), COUNTS), st.none()),
            "server_tool_use": st.one_of(st.dictionaries(st.sampled_from(COUNT_KEYS), COUNTS), st.just([])),
        },
    ).map(lambda extra: {**d, **extra})
)


@settings(max_examples=400, deadline=None)
@given(
    usage=st.one_of(USAGE, st.none()),
    mid=st.one_of(st.just("msg_1"), st.none()),
    layout=st.sampled_from(["main", "flat"]),
    side=st.booleans(),
)
def test_turn_of_equals_every_count_through_as_int(usage: Any, mid: Any, layout: str, side: bool) -> None:
    msg = {"usage": usage, "id": mid}
    rec = {"requestId": "req_1", "timestamp": "t", "isSidechain": side, "agentId": "a" if side else None}
    info = FileInfo(layout, "stem", "agent-x")
    assert turn_of(rec, msg, "u", "s", "m", info) == old_turn_of(rec, msg, info)
