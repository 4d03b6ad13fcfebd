"""Output helpers shared by CLI commands: one JSON document on stdout, or text on a terminal.

Everything the CLI prints is transcript-derived text (paths, titles, prompts), so none of it may drive
the terminal: `terminal_safe` puts a filter on stdout and stderr for the whole command that drops
control characters (C0 but tab and newline, DEL, C1, bidi overrides); JSON output escapes them instead
(orjson escapes C0 only), so `--json` stays lossless. Rich renders its own styles, which must pass, so
it writes to the unfiltered stream and every cell it gets goes through `cell`. Errors are one line,
clipped by the one budget helper.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

import click
import orjson

from index.retrieval import ERROR_CHARS
from lib.settings import Settings
from lib.text import clip

_BIDI = [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
_JSON_RAW = [0x7F, *range(0x80, 0xA0), *_BIDI]  # what JSON leaves raw inside strings
_STRIP = dict.fromkeys([*range(0x00, 0x09), *range(0x0B, 0x20), *_JSON_RAW])
_ESCAPE = {c: f"\\u{c:04x}" for c in _JSON_RAW}


def safe(text: str) -> str:
    """`text` without the characters that a terminal would act on."""
    return text.translate(_STRIP)


def json_text(data: Any, indent: bool = False) -> str:
    """JSON with every control character escaped (orjson leaves DEL, C1 and bidi overrides raw)."""
    opts = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(data, option=opts, default=str).decode().translate(_ESCAPE)


def emit_json(data: Any) -> None:
    sys.stdout.write(json_text(data, indent=True) + "\n")


class _SafeBytes:
    """The filter for binary writes (`sys.stdout.buffer`): UTF-8 in, control characters out."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw

    def write(self, data: bytes) -> int:
        self._raw.write(safe(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"))
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _SafeText:
    """The filter for text writes; anything else (isatty, flush, encoding…) is the stream's own."""

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            return self.raw.write(text)  # the stream's own error for bytes
        self.raw.write(safe(text))
        return len(text)

    @property
    def buffer(self) -> _SafeBytes:
        return _SafeBytes(self.raw.buffer)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def _raw(stream: Any) -> Any:
    return stream.raw if isinstance(stream, _SafeText) else stream


@contextlib.contextmanager
def terminal_safe() -> Iterator[None]:
    """Filter stdout and stderr while a command runs (the CLI's `main` wraps every command)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _SafeText(_raw(out)), _SafeText(_raw(err))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


@contextlib.contextmanager
def raw_streams() -> Iterator[None]:
    """The unfiltered streams, for a protocol that owns stdout (the MCP server's JSON-RPC)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _raw(out), _raw(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def fail(message: str, fix: str = "", code: int = 2, kind: str = "") -> NoReturn:
    """One line saying what is wrong and what to do; non-zero exit. Both parts are clipped: they may
    echo an argument of any size. When the command line asked for JSON, the error is one JSON document
    `{"error": {"code", "message", "fix"}}` on stdout instead (`code`: `kind`, or one named by the exit
    code)."""
    message, fix = clip(message, ERROR_CHARS), clip(fix, ERROR_CHARS)
    if json_wanted():
        emit_json({"error": {"code": kind or _KINDS.get(code, "error"), "message": message, "fix": fix}})
        raise click.exceptions.Exit(code)
    text = f"error: {message}" + (f" — {fix}" if fix else "")
    raise click.exceptions.Exit(_print_err(text, code))


_KINDS = {1: "not_found", 2: "error", 3: "banned"}
_ARGV_JSON: list[bool] = [False]  # set by `json_errors` for errors raised before options are parsed


def json_wanted() -> bool:
    """Did this command line ask for JSON (`--json` or `--format json`)? The parsed options when a command
    runs; the raw arguments before (usage errors) and after (errors the CLI group explains)."""
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if ctx.params.get("as_json") or ctx.params.get("fmt") == "json":
            return True
        ctx = ctx.parent
    return _ARGV_JSON[0]


@contextlib.contextmanager
def json_errors(argv: list[str]) -> Iterator[None]:
    """Errors of this command line are JSON when it asks for JSON (what `json_wanted` reads)."""
    opts = argv[: argv.index("--")] if "--" in argv else argv
    pairs = zip(opts, opts[1:])
    wanted = "--json" in opts or "--format=json" in opts or ("--format", "json") in pairs
    old, _ARGV_JSON[0] = _ARGV_JSON[0], wanted
    try:
        yield
    finally:
        _ARGV_JSON[0] = old


def _print_err(text: str, code: int) -> int:
    click.echo(text, err=True)
    return code


def is_tty() -> bool:
    """Is stdout a terminal (the person, not a pipe or a file)?"""
    stream = _raw(sys.stdout)
    return bool(getattr(stream, "isatty", lambda: False)())


def confirm(question: str, yes: bool) -> None:
    """A destructive step: `--yes` goes on; on a terminal, ask (default no); in a script, an error that
    names `--yes`."""
    if yes:
        return
    if is_tty() and sys.stdin.isatty() and not json_wanted():
        if click.confirm(question, default=False, err=True):
            return
        fail("cancelled", "nothing was changed", code=1, kind="cancelled")
    fail(f"{question.rstrip('?')}: not confirmed", "re-run with --yes to confirm")


def console(styles: bool = True) -> Any:
    """A rich console on the unfiltered stdout (its own styles must pass): give it only `cell`s.
    `styles=False`: no escape sequences at all (no colour, no bold)."""
    from rich.console import Console

    return Console(file=_raw(sys.stdout), color_system="auto" if styles else None)


def cell(value: Any) -> Any:
    """A table cell or label for rich: no control characters, and no markup read from data."""
    from rich.text import Text

    return Text(safe(str(value)))


def label(value: Any) -> str:
    """Text for a rich markup string (a progress description): no control characters, markup escaped."""
    from rich.markup import escape

    return escape(safe(str(value)))


def short(text: str | None, n: int = 80) -> str:
    return clip(text, n)


def cli_settings() -> Settings:
    """The settings the CLI group read once for this command line (lib/settings.py); an empty snapshot
    outside a command (a helper called on its own, as in unit tests)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    settings = getattr(obj, "settings", None)
    return settings if isinstance(settings, Settings) else Settings.from_env({})


def checked_roots(given: tuple[str, ...], settings: Settings) -> list[Path]:
    """The transcript roots to index (given, or the default ones); a missing or unreadable one is a
    one-line error with the fix."""
    roots = settings.projects_roots(given)
    for r in roots:
        if not r.exists():
            fail(
                f"projects root {r} does not exist",
                "pass --projects-root DIR (a directory of <project>/<session>.jsonl) or set TOTAL_RECALL_PROJECTS",
            )
        if not os.access(r, os.R_OK | os.X_OK):
            fail(f"projects root {r} is not readable", "fix its permissions or pass another --projects-root")
    return roots


def read_jsonl(path: str, what: str) -> list[dict[str, Any]]:
    """A labelled/gold `.jsonl` file the eval commands take; a missing file or a bad line is a
    one-line error naming it."""
    p = Path(path)
    if not p.is_file():
        fail(f"{what} {path} not found", "pass the path of a .jsonl file")
    rows = []
    for i, line in enumerate(p.read_bytes().splitlines(), 1):
        if line.strip():
            try:
                rows.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                fail(f"{path}:{i} is not valid JSON", "fix or remove that line")
    return rows
