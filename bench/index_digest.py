"""A digest of every table of an index, to show that a speed change left the index as it was.

Usage: python bench/index_digest.py INDEX.db [OTHER.db]
Prints one line per table (rows, digest of its sorted rows); with two indexes, only the tables that
differ, and exits 1 when any does. Times of the run (`indexed_at`, `started_at`, `elapsed_s`,
`updated_at`) and the extractors' fingerprint (`extractors/version.py`) are left out; an FTS table is compared by its `fts5vocab` instance rows (every term,
row, column and offset), not by its shadow tables, whose segment layout depends on when batches
committed. Build both indexes with `index --full --jobs 1` on the same corpus.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib import sqlite  # noqa: E402  (the repo on sys.path first)

VOLATILE = frozenset(("indexed_at", "started_at", "elapsed_s", "updated_at"))


def digest(path: str) -> dict[str, tuple[int, str]]:
    db = sqlite.connect(f"file:{path}?mode=ro", uri=True)
    tables = {
        name: sql or "" for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
    }
    fts = sorted(t for t, sql in tables.items() if "USING FTS5" in sql.upper())
    shadow = {t for t in tables for f in fts if t.startswith(f + "_")}
    queries: dict[str, str] = {}
    for t in sorted(set(tables) - shadow - set(fts)):
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{t}")') if r[1] not in VOLATILE]
        queries[t] = "SELECT " + ", ".join(f'"{c}"' for c in cols) + f' FROM "{t}"'
        # the extractors' fingerprint changes with their code, not with what they found
        if t == "schema_meta":
            queries[t] += " WHERE key != 'extractors_version'"
    for f in fts:
        db.execute(f'CREATE VIRTUAL TABLE temp."vocab_{f}" USING fts5vocab(main, "{f}", instance)')
        queries[f + " (terms)"] = f'SELECT * FROM temp."vocab_{f}"'
    out: dict[str, tuple[int, str]] = {}
    for name, sql in queries.items():
        rows = sorted(repr(r) for r in db.execute(sql))
        out[name] = (len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16])
    db.close()
    return out


def main() -> None:
    first = digest(sys.argv[1])
    if len(sys.argv) < 3:
        for name, (n, h) in first.items():
            print(f"{name:40s} {n:9d} {h}")
        return
    second = digest(sys.argv[2])
    differ = sorted(t for t in first.keys() | second.keys() if first.get(t) != second.get(t))
    for t in differ:
        print(f"{t:40s} {first.get(t)} != {second.get(t)}")
    print(f"{len(first)} tables, {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
