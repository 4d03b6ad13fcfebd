"""One SQLite library per process (issue 11/18): lib/sqlite.py chooses the stdlib `sqlite3` or the
extension-capable `pysqlite3` once, and every connection, error class and row type comes from it — two
libraries on one WAL file drop each other's locks and reset the -shm the other reads (a bus error)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_vec import TOPICS, model_dir, write_session  # noqa: F401 - the session's test model

from lib import sqlite

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (
    "lib",
    "index",
    "hooks",
    "mcp_server",
    "total_recall",
    "detector",
    "vec",
    "extractors",
    "bench",
    "tests",
)


def test_the_rule() -> None:
    for vectors in ("auto", "on"):
        assert sqlite.choose(vectors, False, True) == sqlite.EXTENSIBLE
        assert sqlite.choose(vectors, True, True) == sqlite.STDLIB  # the stdlib loads sqlite-vec itself
        assert sqlite.choose(vectors, False, False) == sqlite.STDLIB  # no vectors possible: stdlib
    assert sqlite.choose("off", False, True) == sqlite.STDLIB  # vectors off: never the second library


def test_nothing_but_the_facade_imports_an_sqlite_library() -> None:
    """Exceptions and rows must come from the module the connection came from: no module names
    `sqlite3` or `pysqlite3` itself (scripts run in a child process, inside strings, are their own
    processes and are not scanned)."""
    found = []
    for pkg in SCANNED:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path == ROOT / "lib" / "sqlite.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                if any(n.split(".")[0] in ("sqlite3", "pysqlite3", "_sqlite3") for n in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_errors_and_rows_come_from_the_connections_library(tmp_path: Path) -> None:
    conn = sqlite.connect(str(tmp_path / "x.db"))
    assert type(conn) is sqlite.Connection is sqlite.module().Connection
    conn.row_factory = sqlite.Row
    row = conn.execute("SELECT 1 AS one").fetchone()
    assert isinstance(row, sqlite.Row) and row["one"] == 1
    with pytest.raises(sqlite.OperationalError) as err:
        conn.execute("SELECT * FROM missing")
    assert isinstance(err.value, sqlite.Error) and isinstance(err.value, sqlite.DatabaseError)
    assert sqlite.complete_statement("SELECT 1;") and not sqlite.complete_statement("SELECT (")
    with pytest.raises(AttributeError):
        sqlite.no_such_name  # noqa: B018 - only the DB-API names are forwarded


# The child records which library each connection came from. Both libraries' connect functions are
# wrapped before any product code is imported (importing is harmless; connecting is the hazard).
_CHILD = r"""
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
import importlib, importlib.util
used = []
for name in ("sqlite3", "pysqlite3.dbapi2"):
    if name == "pysqlite3.dbapi2" and importlib.util.find_spec("pysqlite3") is None:
        continue
    mod = importlib.import_module(name)
    def wrap(real, name=name):
        def connect(*a, **k):
            used.append(name)
            return real(*a, **k)
        return connect
    mod.connect = wrap(mod.connect)
import time
from pathlib import Path
import vec
from hooks.context import Ctx, open_db
from mcp_server.envelope import Runtime
from mcp_server.tools_recall import search_messages as mcp_search
from index.retrieval.search import search_messages, search_sessions
from index.store.db import open_reader
from index.store.ingest import run_index
from lib.settings import Settings
from vec.backfill import backfill
from vec.driver import unavailable_reason
from vec.embed import model_config
db, root = Path(sys.argv[2]), Path(sys.argv[3])
settings = Settings.from_env()
vec.register(settings)
run_index(db, [root])
if unavailable_reason() is None:
    backfill(db, model_config(settings))
conn = open_reader(db)
hits = search_messages(conn, "my engine will not turn over in winter")
search_sessions(conn, "frozen motor")
open_db(Ctx("user-prompt-submit", {}, db, db.parent, time.monotonic() + 30, settings)).close()
mcp_search(Runtime(db, "/", settings), query="cold battery", mode="snippets", scope="global")
print(json.dumps({"used": sorted(set(used)), "hits": len(hits)}))
"""


def _run_child(tmp_path: Path, env: dict[str, str]) -> dict[str, list[str]]:
    root = tmp_path / "projects"
    for name, cwd, turns in TOPICS:
        write_session(root, name, cwd, turns)
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), str(tmp_path / "index.db"), str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "TOTAL_RECALL_HOME": str(tmp_path / "home"), **env},
    )
    assert p.returncode == 0, p.stderr
    out: dict[str, list[str]] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def test_a_process_with_vectors_opens_the_index_through_one_library(model_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    """Index, embed, hybrid search, a hook's reader and an MCP tool in one process: every connection
    from one library (pysqlite3 on a stdlib without extension loading, as on this project's CI image)."""
    got = _run_child(tmp_path, {"TOTAL_RECALL_VECTORS": "1", "TOTAL_RECALL_EMBED_MODEL_PATH": str(model_dir)})
    assert got["hits"] and len(got["used"]) == 1, got
    assert got["used"] == [sqlite.choose("on", sqlite.stdlib_loads_extensions(), True)]


def test_a_process_with_vectors_off_uses_the_stdlib_alone(tmp_path: Path) -> None:
    got = _run_child(tmp_path, {"TOTAL_RECALL_VECTORS": "0"})
    assert got["hits"] and got["used"] == ["sqlite3"], got


def test_vectors_off_says_so_rather_than_a_missing_package(tmp_path: Path) -> None:
    if sqlite.stdlib_loads_extensions():
        pytest.skip("the stdlib loads sqlite-vec itself: its driver never depends on the setting")
    p = subprocess.run(
        [sys.executable, "-m", "total_recall", "--db", str(tmp_path / "none.db"), "vec", "status", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "TOTAL_RECALL_HOME": str(tmp_path / "home"),
            "TOTAL_RECALL_VECTORS": "0",
        },
    )
    status = json.loads(p.stdout)
    assert status["available"] is False and status["reason"] == "vectors are off (TOTAL_RECALL_VECTORS=0)"


@pytest.mark.parametrize("name", [sqlite.STDLIB, sqlite.EXTENSIBLE])
def test_bytes_none_and_bools_bind_as_before(name: str) -> None:
    """The adapters of `bind_plainly` change how bytes, None and bools reach SQLite, not what is
    stored: a blob, a NULL and an integer 0 or 1, the same values back; other types keep their usual binding, and a value
    of a subclass of bytes still goes through the protocol (it is not an exact type)."""
    mod = pytest.importorskip(name)  # in-memory only: no file is shared with the process's library
    sqlite.bind_plainly(mod)
    assert mod.adapters[(bytes, mod.PrepareProtocol)](b"\x00x") == b"\x00x"
    assert mod.adapters[(type(None), mod.PrepareProtocol)](None) is None
    assert type(mod.adapters[(bool, mod.PrepareProtocol)](True)) is int
    conn = mod.connect(":memory:")
    conn.execute("CREATE TABLE t(v)")
    values = [b"", b"\x00\xffpacked", None, "text", 7, 2.5, bytearray(b"ba"), memoryview(b"mv"), True, False]
    conn.executemany("INSERT INTO t VALUES(?)", [(v,) for v in values])
    got = conn.execute("SELECT v, typeof(v) FROM t ORDER BY rowid").fetchall()
    assert got == [
        (b"", "blob"),
        (b"\x00\xffpacked", "blob"),
        (None, "null"),
        ("text", "text"),
        (7, "integer"),
        (2.5, "real"),
        (b"ba", "blob"),
        (b"mv", "blob"),
        (1, "integer"),
        (0, "integer"),
    ]

    class Tagged(bytes):
        def __conform__(self, protocol: object) -> str:
            return "conformed"

    assert conn.execute("SELECT ?", (Tagged(b"raw"),)).fetchone() == ("conformed",)


def test_the_process_library_binds_plainly() -> None:
    mod = sqlite.module()
    assert (bytes, mod.PrepareProtocol) in mod.adapters
    assert (type(None), mod.PrepareProtocol) in mod.adapters
