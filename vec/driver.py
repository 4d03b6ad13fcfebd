"""The one place that picks the SQLite driver for vectors (V1).

sqlite-vec is a loadable extension. Python's stdlib `sqlite3` can load it only when it was built with
extension loading; many distributions (and this project's CI image) ship without it. Then the
drop-in `pysqlite3` (from `pysqlite3-binary`, part of the `[vec]` extra) is used for vector work.
The main index keeps using stdlib `sqlite3`; both open the same WAL database file.

Capability checks only (no import-and-catch fallbacks), and nothing heavy is imported here, so
`import vec` stays cheap on the hook hot path.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sqlite3
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

ENABLE_HINT = "pip install 'total-recall[vec]'"


def choose(stdlib_loads_extensions: bool, pysqlite3_installed: bool) -> str | None:
    """The rule, on its own so it can be tested: stdlib when it can load extensions, else pysqlite3."""
    if stdlib_loads_extensions:
        return "sqlite3"
    if pysqlite3_installed:
        return "pysqlite3.dbapi2"
    return None


@lru_cache(maxsize=1)
def driver() -> ModuleType | None:
    """The DB-API module that can load extensions on this machine (None: vectors unavailable)."""
    name = choose(
        hasattr(sqlite3.Connection, "enable_load_extension"),
        importlib.util.find_spec("pysqlite3") is not None,
    )
    return importlib.import_module(name) if name else None


@lru_cache(maxsize=1)
def extension_path() -> str | None:
    """Path of the sqlite-vec loadable library, found without importing `sqlite_vec` (it pulls numpy)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.origin:
        return None
    return os.path.join(os.path.dirname(spec.origin), "vec0")


@lru_cache(maxsize=1)
def has_embedder() -> bool:
    """fastembed runs the model; onnx is what onnxruntime's quantizer needs for the int8 copy (vec/quantize.py)."""
    return all(importlib.util.find_spec(m) is not None for m in ("fastembed", "onnx"))


def unavailable_reason() -> str | None:
    """None when vectors can work here; else one line saying what is missing and how to enable them."""
    missing = []
    if driver() is None:
        missing.append("an SQLite driver that can load extensions (pysqlite3-binary)")
    if extension_path() is None:
        missing.append("sqlite-vec")
    if not has_embedder():
        missing.append("fastembed and onnx")
    if not missing:
        return None
    return f"vectors are off: missing {', '.join(missing)}; enable them with `{ENABLE_HINT}`"


def connect(path: Path, readonly: bool = False) -> Any:
    """A connection to the index file with sqlite-vec loaded (raises VectorsUnavailable)."""
    from vec.store import VectorsUnavailable

    reason = unavailable_reason()
    db, ext = driver(), extension_path()
    if reason or db is None or ext is None:
        raise VectorsUnavailable(reason or "vectors are unavailable")
    if readonly:
        conn = db.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    else:
        conn = db.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=5000")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(ext)
    finally:
        conn.enable_load_extension(False)
    return conn
