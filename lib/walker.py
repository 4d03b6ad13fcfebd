"""Parse one transcript file from a byte offset into typed rows (W1–W9).

`parse_file` is pure and picklable: it runs in worker processes. It reads the file read-only,
decodes every line (so damaged lines are always counted), keeps records it does not store
(progress, thinking-only, hook events) as tree aliases, resolves the parent tree inside the chunk,
and leaves what it cannot resolve to the writer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from lib.content import prompt_key
from lib.discovery import key_path
from lib.model import Carry, FileChunk, FileInfo
from lib.reader import decode, iter_lines
from lib.records import RecordState

__all__ = ["FileInfo", "parse_file", "prompt_key", "read_lines"]


def parse_file(path: str, start: int, carry: Carry, info: FileInfo) -> FileChunk:
    """A Claude Code transcript (the reference source) from byte `start`."""
    chunk = FileChunk(path=path, start=start, end=start, carry=carry)
    state = RecordState(chunk, info)
    read_lines(path, start, chunk, state.record)
    state.finish()
    return chunk


def read_lines(
    path: str, start: int, chunk: FileChunk, record: Callable[[dict[str, Any], int], None]
) -> None:
    """Decode every line of an append-only JSONL file from byte `start` and hand each record to
    `record(rec, offset)`; damaged lines are counted in `chunk.bad_lines` and skipped, and
    `chunk.end` becomes the byte cursor (a final line still being written is left for next run).
    Every JSONL source (Claude Code, Codex, Copilot CLI) reads its files through here."""
    # The last run consumed a complete record that had no newline yet: what follows the cursor
    # finishes that line (its newline, or a record glued to it), it is not a new line.
    continues = start > 0 and _byte_before(path, start) != b"\n"
    loads = orjson.loads
    for offset, data, terminated in iter_lines(path, start):
        if not terminated:
            # A final segment with no newline: consume it only if it is a complete record.
            if not data.strip():
                break
            recs, bad, _ = decode(data, whole=True)
            if bad or not recs:
                break  # partial write: re-read next run
            chunk.lines += not (continues and offset == start)
            chunk.repaired["no_final_newline"] += 1
            for rec in recs:
                record(rec, offset)
            chunk.end = offset + len(data)
            break
        chunk.end = offset + len(data) + 1
        if continues and offset == start:
            if not data:
                continue  # just the newline of the record consumed last run
        else:
            chunk.lines += 1
        # The common case first: one whole JSON object. Anything else (blank, damaged, glued, not an
        # object) takes the full `decode` below, which gives the same answer for a whole object.
        try:
            obj = loads(data)
        except orjson.JSONDecodeError:
            obj = None
        if type(obj) is dict:
            record(obj, offset)
            continue
        if not data.strip():
            chunk.bad_lines["blank"] += 1
            continue
        recs, bad, repaired = decode(data)
        if bad:
            chunk.bad_lines[bad] += 1
            continue
        if repaired:
            chunk.repaired["glued" if len(recs) > 1 else "recovered"] += 1
        for rec in recs:
            record(rec, offset)


def _byte_before(path: str, offset: int) -> bytes:
    with open(key_path(path), "rb") as f:
        f.seek(offset - 1)
        return f.read(1)
