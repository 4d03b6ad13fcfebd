"""The vector store, in the index DB file (V2, V4): tables owned by vec/, the identity stamp,
backfill state and nearest-neighbour queries.

Tables (created here, never by index/store/schema.py, so an FTS-only install never sees them):
- `vec_meta(key, value)`: the stamp (`model`, `dim`, `metric`) and backfill state
  (`last_message_id`, `last_extraction_id`).
- `vec_items(id, ref_kind, ref_id, chunk, sig, vec_id, hash)`: what each vector stands for. `ref_kind`
  is 'message' | 'extraction' | 'session'; `ref_id` is messages.id / extractions.id / sessions.session_id;
  `sig` is a hash of the source row (used to notice changed rows); `hash` is a hash of the chunk's
  text and `vec_id` the vector it uses.
- `vec_floats(id, embedding)`: each vector (float32 blob); `vec_items.vec_id` points here. Identical
  chunks of one kind share one vector (resumed and continued sessions repeat their text): it is
  embedded and scanned once, and goes when its last item goes.
- `vec_bits`: sqlite-vec `vec0` table of the same vectors quantised to one bit per dimension (rowid =
  vec_floats.id), with `ref_kind` as a metadata column so a query can ask for one kind during the
  scan. A query scans the bits (1/32 of the bytes; this build of sqlite-vec has no SIMD, so a float
  scan costs ~50 ms per 67 k vectors) for its nearest candidates, then re-ranks them by the exact
  distance read from `vec_floats`.

Stores written by older versions keep their float32 vectors in a `vec0` table `vec_index` (no
`vec_floats`, no `vec_bits`): before sharing, rowid = vec_items.id and `vec_items` has no `vec_id`;
with sharing but before the one-bit scan, rowid = vec_items.vec_id. `old_layout` tells them apart on
open (plain tables, any driver): they are searched exactly as they are (a full float scan: slower,
same answers), `describe` says so with the fix (`vec status`, hybrid search logs it once), and
`Store.upgrade()` (run by the next backfill, and before any write) moves them to this layout in
place, each item keeping its vector: nothing is re-embedded.

`vec_meta` and `vec_items` are plain tables: a stdlib connection (no extension) can read the stamp.
The main tables (messages, extractions, sessions) are read only through index/store/embeddable.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from index.store import embeddable as rows_of
from index.store import transaction
from vec.embed import MESSAGE_KINDS
from vec.errors import VecError

REBUILD = "total-recall vec rebuild"
KINDS = ("message", "extraction", "session")
OLD_LAYOUT = (
    "the vector store is in the float32 layout of an older total-recall (searched by a slower full scan)"
)
UPGRADE = "run `total-recall vec backfill` to move it to the current layout in place (nothing is re-embedded)"


def old_layout(conn: Any) -> bool:
    """Are the vectors still in an older version's float32 `vec0` table `vec_index`? (any driver)"""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_index'").fetchone() is not None


class VectorsUnavailable(VecError):
    fix = "pip install 'total-recall[vec]'"


class NoStore(VecError):
    fix = "run `total-recall vec backfill` to create it"


class StampMismatch(VecError):
    fix = f"run `{REBUILD}` to re-embed with the configured model"


@dataclass(frozen=True, slots=True)
class Stamp:
    model: str
    dim: int
    metric: str

    def describe(self) -> str:
        return f"{self.model} ({self.dim}-d, {self.metric})"


def read_stamp(conn: Any) -> Stamp | None:
    """The stamp of the store in this DB, or None when there is no store (works on any driver)."""
    try:
        rows = dict(conn.execute("SELECT key, value FROM vec_meta WHERE key IN ('model','dim','metric')"))
    except Exception:  # no vec_meta table (any driver's OperationalError)
        return None
    if not {"model", "dim", "metric"} <= rows.keys():
        return None
    return Stamp(rows["model"], int(rows["dim"]), rows["metric"])


def check_stamp(stamp: Stamp | None, model: str) -> Stamp:
    """Refuse to use a missing store, or one embedded by another model than the configured one."""
    if stamp is None:
        raise NoStore("no vector store in this index")
    if stamp.model != model:
        raise StampMismatch(
            f"the vector store was embedded with {stamp.describe()} but the configured model is {model}, "
            f"so its vectors cannot be compared; run `{REBUILD}` to re-embed",
            f"or set TOTAL_RECALL_EMBED_MODEL={stamp.model} to use the store as it is",
        )
    return stamp


class Store:
    """Vector tables on a connection that has sqlite-vec loaded (see vec.driver.connect)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    # --- lifecycle ------------------------------------------------------------------------------
    def exists(self) -> bool:
        return read_stamp(self.conn) is not None

    def stamp(self) -> Stamp | None:
        return read_stamp(self.conn)

    def create(self, stamp: Stamp) -> None:
        with transaction(self.conn):
            self.conn.execute("CREATE TABLE IF NOT EXISTS vec_meta(key TEXT PRIMARY KEY, value TEXT)")
            self.conn.execute(
                """CREATE TABLE IF NOT EXISTS vec_items(id INTEGER PRIMARY KEY, ref_kind TEXT NOT NULL,
                   ref_id NOT NULL, chunk INTEGER NOT NULL DEFAULT 0, sig TEXT, vec_id INTEGER, hash TEXT)"""
            )
            self._indexes()
            self._vector_tables(stamp.dim)
            self.conn.executemany(
                "INSERT OR REPLACE INTO vec_meta(key, value) VALUES(?, ?)",
                [
                    ("model", stamp.model),
                    ("dim", str(stamp.dim)),
                    ("metric", stamp.metric),
                    ("last_message_id", "0"),
                    ("last_extraction_id", "0"),
                ],
            )

    def _indexes(self) -> None:
        self.conn.execute("CREATE INDEX IF NOT EXISTS vec_items_ref ON vec_items(ref_kind, ref_id)")
        self.conn.execute("CREATE INDEX IF NOT EXISTS vec_items_vec ON vec_items(vec_id)")
        self.conn.execute("CREATE INDEX IF NOT EXISTS vec_items_hash ON vec_items(ref_kind, hash)")

    def _vector_tables(self, dim: int) -> None:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS vec_floats(id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)"
        )
        self.conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_bits USING vec0(embedding bit[{int(dim)}], ref_kind text)"
        )

    def shares_vectors(self) -> bool:
        """Is this store in the current layout (vec_items.vec_id -> vec_floats, vec_bits)?"""
        return any(r[1] == "vec_id" for r in self.conn.execute("PRAGMA table_info(vec_items)"))

    def upgrade(self) -> bool:
        """Move a store from an older version's layout (`old_layout`) to this one, in place and in one
        transaction; returns whether there was anything to move. Items made before sharing get their
        own vector (vec_id = id); every float32 vector is copied to `vec_floats` and `vec_bits`."""
        stamp = self.stamp()
        if stamp is None or not old_layout(self.conn):
            return False
        with transaction(self.conn):
            if not self.shares_vectors():
                self.conn.execute("ALTER TABLE vec_items ADD COLUMN vec_id INTEGER")
                self.conn.execute("ALTER TABLE vec_items ADD COLUMN hash TEXT")
                self.conn.execute("UPDATE vec_items SET vec_id = id")
            self._indexes()
            self._vector_tables(stamp.dim)
            self.conn.execute("INSERT INTO vec_floats(id, embedding) SELECT rowid, embedding FROM vec_index")
            self.conn.execute(
                """INSERT INTO vec_bits(rowid, embedding, ref_kind)
                   SELECT rowid, vec_quantize_binary(embedding), ref_kind FROM vec_index"""
            )
            self.conn.execute("DROP TABLE vec_index")
        return True

    def drop(self) -> None:
        """Remove every vec table (the rest of the index is untouched)."""
        with transaction(self.conn):
            for stmt in (
                "DROP TABLE IF EXISTS vec_index",
                "DROP TABLE IF EXISTS vec_bits",
                "DROP TABLE IF EXISTS vec_floats",
                "DROP TABLE IF EXISTS vec_items",
                "DROP TABLE IF EXISTS vec_meta",
            ):
                self.conn.execute(stmt)

    # --- state ----------------------------------------------------------------------------------
    def get(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM vec_meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set(self, key: str, value: object) -> None:
        """Inside the caller's transaction."""
        self.conn.execute("INSERT OR REPLACE INTO vec_meta(key, value) VALUES(?, ?)", (key, str(value)))

    # --- writes (inside the caller's transaction) -----------------------------------------------
    def vector_of(self, kind: str, text_hash: str) -> int | None:
        """The vector already stored for a chunk of this kind and text, if any."""
        row = self.conn.execute(
            "SELECT vec_id FROM vec_items WHERE ref_kind=? AND hash=? LIMIT 1", (kind, text_hash)
        ).fetchone()
        return None if row is None else int(row[0])

    def add_vectors(self, kinds: Sequence[str], vectors: Any) -> list[int]:
        """Store vectors (float32 arrays of the stamped dim), one per kind; returns their ids."""
        top = self.conn.execute("SELECT coalesce(max(id), 0) FROM vec_floats").fetchone()[0]
        ids = list(range(int(top) + 1, int(top) + 1 + len(kinds)))
        blobs = [vec.tobytes() for vec in vectors]
        self.conn.executemany("INSERT INTO vec_floats(id, embedding) VALUES(?,?)", list(zip(ids, blobs)))
        self.conn.executemany(
            "INSERT INTO vec_bits(rowid, embedding, ref_kind) VALUES(?, vec_quantize_binary(?), ?)",
            list(zip(ids, blobs, kinds)),
        )
        return ids

    def add_items(self, items: Sequence[tuple[str, object, int, str | None, int, str]]) -> None:
        """items[i] = (ref_kind, ref_id, chunk, sig, vec_id, hash of the chunk's text)."""
        self.conn.executemany(
            "INSERT INTO vec_items(ref_kind, ref_id, chunk, sig, vec_id, hash) VALUES(?,?,?,?,?,?)", items
        )

    def drop_items(self, ids: Sequence[int]) -> None:
        """Delete items, and each vector no item uses any more."""
        vids: set[int] = set()
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ",".join("?" * len(part))
            vids.update(
                r[0] for r in self.conn.execute(f"SELECT vec_id FROM vec_items WHERE id IN ({marks})", part)
            )
            self.conn.execute(f"DELETE FROM vec_items WHERE id IN ({marks})", part)
        unused = [
            (v,)
            for v in vids
            if self.conn.execute("SELECT 1 FROM vec_items WHERE vec_id=?", (v,)).fetchone() is None
        ]
        self.conn.executemany("DELETE FROM vec_bits WHERE rowid=?", unused)
        self.conn.executemany("DELETE FROM vec_floats WHERE id=?", unused)

    def remove(self, kind: str, refs: Iterable[object]) -> int:
        ids: list[int] = []
        for ref in refs:
            ids += [
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM vec_items WHERE ref_kind=? AND ref_id=?", (kind, ref)
                )
            ]
        self.drop_items(ids)
        return len(ids)

    def prune(self) -> int:
        """Drop vectors whose message/extraction/session is gone (files re-read from the start)."""
        orphans: list[int] = []
        for kind in KINDS:
            items = self.conn.execute("SELECT id, ref_id FROM vec_items WHERE ref_kind=?", (kind,)).fetchall()
            alive = rows_of.existing(self.conn, kind, sorted({ref for _, ref in items}))
            orphans += [vid for vid, ref in items if ref not in alive]
        self.drop_items(orphans)
        return len(orphans)

    # --- reads ----------------------------------------------------------------------------------
    def knn(self, query: Any, k: int, kinds: Sequence[str] = KINDS) -> list[tuple[str, object, int, float]]:
        """(ref_kind, ref_id, chunk, cosine distance) of the k nearest items, nearest first (a vector
        shared by identical chunks stands for each of them, oldest first). The k candidate vectors come
        from the one-bit scan and are ordered by their exact distance; fusion gets k rows, as before
        vectors were shared, not k per copy of a text."""
        kinds = [kd for kd in kinds if kd in KINDS]
        marks = ",".join("?" * len(kinds))
        k, blob = min(k, 4096), query.tobytes()
        if old_layout(self.conn):  # an older version's store, not yet upgraded: exact float scan
            key = "vec_id" if self.shares_vectors() else "id"
            sql = f"""WITH nn AS (SELECT rowid, distance FROM vec_index
                                  WHERE embedding MATCH ? AND k = ? AND ref_kind IN ({marks}))
                      SELECT i.ref_kind, i.ref_id, i.chunk, nn.distance FROM nn JOIN vec_items i ON i.{key} = nn.rowid
                      ORDER BY nn.distance, i.id LIMIT ?"""
            return [(r[0], r[1], r[2], r[3]) for r in self.conn.execute(sql, [blob, k, *kinds, k])]
        sql = f"""WITH cand AS (SELECT rowid FROM vec_bits
                                WHERE embedding MATCH vec_quantize_binary(?) AND k = ? AND ref_kind IN ({marks})),
                       nn AS (SELECT f.id, vec_distance_cosine(f.embedding, ?) AS distance
                              FROM cand JOIN vec_floats f ON f.id = cand.rowid)
                  SELECT i.ref_kind, i.ref_id, i.chunk, nn.distance FROM nn JOIN vec_items i ON i.vec_id = nn.id
                  ORDER BY nn.distance, i.id LIMIT ?"""
        return [(r[0], r[1], r[2], r[3]) for r in self.conn.execute(sql, [blob, k, *kinds, blob, k])]

    def sigs(self, kind: str, refs: Sequence[object]) -> dict[object, list[str]]:
        """The signatures stored for each of `refs` (of one kind) that has vectors."""
        out: dict[object, list[str]] = {}
        for i in range(0, len(refs), 500):
            part = list(refs[i : i + 500])
            for ref, sig in self.conn.execute(
                f"SELECT ref_id, sig FROM vec_items WHERE ref_kind=? AND ref_id IN ({','.join('?' * len(part))})",
                [kind, *part],
            ):
                out.setdefault(ref, []).append(sig)
        return out

    def session_sigs(self) -> dict[str, str]:
        """Signature of each embedded session title."""
        return {
            r[0]: r[1]
            for r in self.conn.execute("SELECT ref_id, sig FROM vec_items WHERE ref_kind='session'")
        }

    def counts(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT ref_kind, count(*), count(DISTINCT ref_id) FROM vec_items GROUP BY ref_kind"
        ).fetchall()
        out = {f"{kind}_vectors": n for kind, n, _ in rows}
        out.update({f"{kind}s": d for kind, _, d in rows})
        return out


def describe(conn: Any) -> dict[str, Any]:
    """Store stamp, counts and backlog, read with any driver (plain tables only)."""
    stamp = read_stamp(conn)
    if stamp is None:
        return {"exists": False}
    meta = dict(conn.execute("SELECT key, value FROM vec_meta").fetchall())
    last_m, last_e = int(meta.get("last_message_id") or 0), int(meta.get("last_extraction_id") or 0)
    counts = dict(conn.execute("SELECT ref_kind, count(*) FROM vec_items GROUP BY ref_kind").fetchall())
    pending_m, pending_e = rows_of.count_after(conn, last_m, last_e, MESSAGE_KINDS)
    shared = Store(conn).shares_vectors()
    distinct = conn.execute("SELECT count(DISTINCT vec_id) FROM vec_items").fetchone()[0] if shared else None
    old = old_layout(conn)
    return {
        "exists": True,
        "layout": "old float32" if old else "current",
        **({"problem": OLD_LAYOUT, "fix": UPGRADE} if old else {}),
        "model": stamp.model,
        "dim": stamp.dim,
        "metric": stamp.metric,
        "vectors": sum(counts.values()),
        "vectors_by_kind": counts,
        "distinct_vectors": sum(counts.values()) if distinct is None else int(distinct),
        "pending_messages": pending_m,
        "pending_extractions": pending_e,
    }
