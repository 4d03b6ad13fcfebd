"""The one SQLite library of this process: every connection to the index, and every `Error`, `Row` and
`Connection` the code names, comes from the module chosen here (issue 11/18).

Two SQLite libraries in one process corrupt each other's view of a shared file: each keeps its own
POSIX-lock bookkeeping, so one library's close() drops the locks the other holds, and one library's
first connection to a WAL database resets the -shm that the other may be reading (a bus error seen in
CI). So a process never mixes them; the rule (`choose`) is a function of the process's settings and of
the stdlib's build:
- vectors wanted (TOTAL_RECALL_VECTORS not 0) and the stdlib `sqlite3` cannot load extensions and the
  drop-in `pysqlite3` (pysqlite3-binary, the `[vec]` extra) is installed: `pysqlite3.dbapi2` for
  everything (writer, readers, hooks, MCP, viewer, team client, sqlite-vec);
- otherwise the stdlib `sqlite3` (vectors then work only if the stdlib can load extensions).

Use it like the stdlib module: `from lib import sqlite`, `sqlite.connect(...)`, `except sqlite.Error`,
`conn.row_factory = sqlite.Row`. The module is picked on the first such use (from
`Settings.from_env()`: the process's settings) and kept for the life of the process. Type checkers see
the stdlib's types: pysqlite3 is the same DB-API module built against a newer SQLite.
"""

from __future__ import annotations

import importlib
import importlib.util
import sqlite3 as _stdlib
from os import PathLike
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite3 import Connection as Connection
    from sqlite3 import Cursor as Cursor
    from sqlite3 import DatabaseError as DatabaseError
    from sqlite3 import Error as Error
    from sqlite3 import IntegrityError as IntegrityError
    from sqlite3 import InterfaceError as InterfaceError
    from sqlite3 import OperationalError as OperationalError
    from sqlite3 import ProgrammingError as ProgrammingError
    from sqlite3 import Row as Row

    from lib.settings import VectorsMode

STDLIB = "sqlite3"
EXTENSIBLE = "pysqlite3.dbapi2"  # a drop-in DB-API module whose connections can load extensions
_FORWARDED = frozenset(
    {
        "Connection",
        "Cursor",
        "DatabaseError",
        "Error",
        "IntegrityError",
        "InterfaceError",
        "OperationalError",
        "ProgrammingError",
        "Row",
        "complete_statement",
        "sqlite_version",
    }
)

_module: ModuleType | None = None
_vectors: VectorsMode = "auto"


def choose(vectors: VectorsMode, stdlib_loads_extensions: bool, extensible_installed: bool) -> str:
    """The rule, on its own so it can be tested: the extension-capable driver only when vectors are
    wanted and the stdlib cannot load sqlite-vec; the stdlib otherwise."""
    if vectors != "off" and not stdlib_loads_extensions and extensible_installed:
        return EXTENSIBLE
    return STDLIB


def stdlib_loads_extensions() -> bool:
    return hasattr(_stdlib.Connection, "enable_load_extension")


def module() -> ModuleType:
    """The DB-API module of this process (chosen on the first call, then fixed)."""
    global _module, _vectors
    if _module is None:
        from lib.settings import Settings

        _vectors = Settings.from_env().vectors  # the process's settings decide, once
        # find_spec only looks the package up: `pysqlite3` is imported only when it is chosen
        installed = importlib.util.find_spec("pysqlite3") is not None
        name = choose(_vectors, stdlib_loads_extensions(), installed)
        _module = _stdlib if name == STDLIB else importlib.import_module(name)
        bind_plainly(_module)
    return _module


_NOTHING: MappingProxyType[object, None] = MappingProxyType({})


def bind_plainly(mod: ModuleType) -> None:
    """Register identity adapters for `bytes` and `None`, which both libraries bind natively, and
    `int` for `bool` (bound as the integer it is: 0 or 1, as before).

    The DB-API modules bind str, int and float directly but send every other parameter through their
    adapter protocol: a lookup in the adapters table, then `__adapt__` on the protocol and `__conform__`
    on the value. pysqlite3 makes each of those two misses by raising and clearing an AttributeError
    (a formatted message each time), so a message row, with its packed body and half a dozen NULLs, cost
    about ten exceptions to bind. A table hit that returns the value unchanged skips both lookups: in
    one insert of 300 k rows of None and bytes, 1.50 → 0.31 CPU-s with pysqlite3, 0.61 → 0.44 with the
    stdlib (bench in docs/benchmarks.md). `bytes(b)` returns `b` itself for exact bytes and
    `{}.get(None)` returns None, both in C; subclasses are not exact types, so they keep the protocol.
    A bool is not an exact int either: the message and turn rows' flags (28 k per 49 MB) each took the
    two misses, ~10 k instructions (the writer's statements at 49 MB: 2,480 → 2,220 M instructions)."""
    mod.register_adapter(bytes, bytes)
    mod.register_adapter(type(None), _NOTHING.get)
    mod.register_adapter(bool, int)


def chosen_with_vectors_off() -> bool:
    """Whether the stdlib was chosen because the process's settings turned vectors off (vec/driver.py
    says so instead of naming a missing package)."""
    module()
    return _vectors == "off"


def loads_extensions() -> bool:
    """Whether this process's connections can load extensions (sqlite-vec)."""
    return hasattr(module().Connection, "enable_load_extension")


def connect(database: str | PathLike[str], **kwargs: Any) -> Connection:
    """A connection from this process's library (the stdlib's `connect` arguments)."""
    conn: Connection = module().connect(database, **kwargs)
    return conn


def __getattr__(name: str) -> Any:
    """`sqlite.Error`, `sqlite.Row`, …: the chosen module's, bound here on first use."""
    if name not in _FORWARDED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module(), name)
    globals()[name] = value
    return value
