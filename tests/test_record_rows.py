"""Turns folded in the worker (`record_rows.fold_turns`) store what the writer's upsert stores when
every repeat of an API response reaches it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.record_rows import fold_turns, write_record_rows
from index.store.schema import migrate
from lib import sqlite
from lib.model import FileChunk


def _row(i: int, key: int, tokens: tuple[int, int, int, int], side: bool) -> tuple[Any, ...]:
    inp, out, read, create = tokens
    return (
        f"msg{key}",
        "req",
        f"s{key}",
        f"u{i}",
        f"t{i}",
        f"m{i}",
        inp,
        out,
        create,
        i,
        2 * i,
        read,
        i % 3,
        int(side),
        f"a{i}" if side else None,
    )


def _stored(batches: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    conn = sqlite.connect(":memory:", isolation_level=None)
    migrate(conn)
    for rows in batches:
        write_record_rows(conn, FileChunk(path="f", start=0, end=0), rows, 1)
    return conn.execute("SELECT * FROM turns ORDER BY rowid").fetchall()


_tokens = st.tuples(*[st.integers(0, 3)] * 4)


@settings(max_examples=60, deadline=None)
@given(
    earlier=st.lists(st.tuples(st.integers(0, 2), _tokens, st.booleans()), max_size=4),
    chunk=st.lists(st.tuples(st.integers(0, 2), _tokens, st.booleans()), max_size=12),
)
def test_folded_turns_store_what_every_repeat_stores(
    earlier: list[tuple[int, tuple[int, int, int, int], bool]],
    chunk: list[tuple[int, tuple[int, int, int, int], bool]],
) -> None:
    before = [_row(i, *r) for i, r in enumerate(earlier)]
    rows = [_row(100 + i, *r) for i, r in enumerate(chunk)]
    assert _stored([before, fold_turns(rows)]) == _stored([before, rows])
