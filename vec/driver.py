"""What vectors need on this machine, and the sqlite-vec connection (V1).

sqlite-vec is a loadable extension. The connection comes from the process's one SQLite library
(lib/sqlite.py chooses it: the stdlib `sqlite3` when it can load extensions, else the drop-in
`pysqlite3` from `pysqlite3-binary`, part of the `[vec]` extra, for every connection of a process that
wants vectors). Vectors are available when that library loads extensions and sqlite-vec and fastembed
are installed.

Capability checks only (no import-and-catch fallbacks), and nothing heavy is imported here, so
`import vec` stays cheap on the hook hot path.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from lib import sqlite

ENABLE_HINT = "pip install 'total-recall[vec]'"


def driver() -> ModuleType | None:
    """This process's DB-API module when it can load extensions (None: vectors unavailable)."""
    return sqlite.module() if sqlite.loads_extensions() else None


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
    if driver() is None and sqlite.chosen_with_vectors_off():
        return "vectors are off (TOTAL_RECALL_VECTORS=0)"
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
    ext = extension_path()
    if reason or ext is None:
        raise VectorsUnavailable(reason or "vectors are unavailable")
    if readonly:
        conn = sqlite.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=5000")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(ext)
    finally:
        conn.enable_load_extension(False)
    return conn
