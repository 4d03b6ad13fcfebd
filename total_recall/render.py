"""The CLI's one output layer: rows as a table, TSV, CSV or JSON, humanised values, colour only on a TTY.

A command that prints rows adds `@output_options` (its `--format` and `--json`) and calls
`emit_rows(cols, rows, fmt)` with `fmt = pick_format(fmt, as_json)`:

- `table` (the default on a terminal): a borderless rich table fitted to the terminal's width; the
  `wrap` column folds, the others keep their width;
- `tsv` (the default in a pipe): one unpadded line per row, cells separated by tabs, no header, tabs
  and newlines inside a cell turned into spaces — fit for `cut`, `sort` and `fzf`;
- `csv`: a header row, then RFC 4180 rows;
- `json`: one JSON document (the rows as objects keyed by `Col.key`, or `json_data` when given).

A command whose terminal view is lines rather than a table (`search`) passes `human=` to draw it.
For example:

    @click.command()
    @output_options
    def digest(fmt: str | None, as_json: bool) -> None:
        rows = [{"day": "2026-11-24", "sessions": 3, "title": "fix the login loop"}]
        emit_rows([Col("day"), Col("sessions", right=True), Col("title", wrap=True)], rows,
                  pick_format(fmt, as_json))

Errors go through `output.fail`, which prints `{"error": {...}}` on stdout instead when JSON was asked
for. Colour follows https://no-color.org: never when `NO_COLOR` is set, never in a pipe.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TypeVar

import click

from lib.text import clip
from total_recall.output import cell, cli_settings, console, emit_json, is_tty, safe

FORMATS = ("table", "tsv", "csv", "json")
F = TypeVar("F", bound=Callable[..., Any])


def color_wanted(env: Mapping[str, str] | None = None) -> bool:
    """Colour on a terminal only, and never with NO_COLOR set (to anything but the empty string).
    `env` defaults to the command line's settings snapshot."""
    env = cli_settings().env if env is None else env
    return is_tty() and not env.get("NO_COLOR")


def output_options(f: F) -> F:
    """`--format` and `--json` for a command that prints rows (call `pick_format(fmt, as_json)`)."""
    f = click.option(
        "--json", "as_json", is_flag=True, help="Print exactly one JSON document (same as --format json)."
    )(f)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="table (default on a terminal), tsv (default in a pipe; no header), csv or json.",
    )(f)


def pick_format(fmt: str | None, as_json: bool) -> str:
    """The format asked for, else `table` on a terminal and `tsv` in a pipe."""
    if as_json:
        return "json"
    return fmt or ("table" if is_tty() else "tsv")


@dataclass(frozen=True, slots=True)
class Col:
    header: str
    key: str = ""  # the row key (rows given as dicts) and the JSON field; default: the header
    right: bool = False  # numbers: right-aligned in a table
    wrap: bool = False  # the one long text column that takes the width left: clipped to it with "…"
    fold: bool = False  # …or, for a wrap column, folded onto more lines
    style: str = ""  # rich style on a terminal (e.g. "dim", "cyan")
    clip: int = 0  # in a table, at most this many characters (e.g. an id's first 8: prefixes work)

    @property
    def field(self) -> str:
        return self.key or self.header


def _value(row: Mapping[str, Any] | Sequence[Any], i: int, col: Col) -> Any:
    return row.get(col.field) if isinstance(row, Mapping) else row[i]


def text_of(value: Any, human: bool = True) -> str:
    """A cell as text: no Python repr (None is empty, lists are joined, dicts are `k=v`). Numbers have
    thousands separators for people (`human`), none for TSV and CSV (`sort -n` reads them)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") or "0"
    if isinstance(value, int):
        return f"{value:,}" if human else str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={text_of(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set)):  # pairs like [["ex", 166], …] read "ex 166, …"
        return ", ".join(
            " ".join(map(text_of, v)) if isinstance(v, (list, tuple)) else text_of(v) for v in value
        )
    return str(value)


def emit_rows(
    cols: Sequence[Col],
    rows: Iterable[Mapping[str, Any] | Sequence[Any]],
    fmt: str,
    title: str = "",
    json_data: Any = None,
    human: Callable[[], None] | None = None,
) -> None:
    """Print rows in `fmt` (see the module doc). `json_data` replaces the rows in JSON output, and
    `human` the table (a command whose terminal view is lines rather than a table, like `search`)."""
    rows = list(rows)
    if fmt == "table" and human is not None:
        human()
        return
    if fmt == "json":
        emit_json(
            json_data
            if json_data is not None
            else [{c.field: _value(r, i, c) for i, c in enumerate(cols)} for r in rows]
        )
        return
    cells = [[text_of(_value(r, i, c), human=fmt == "table") for i, c in enumerate(cols)] for r in rows]
    if fmt == "tsv":
        for r in cells:
            click.echo("\t".join(" ".join(safe(x).split()) for x in r))
    elif fmt == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow([c.field for c in cols])
        w.writerows([[safe(x) for x in r] for r in cells])
    else:
        _rich_table(cols, cells, title)


def _rich_table(cols: Sequence[Col], cells: list[list[str]], title: str) -> None:
    from rich.table import Table

    t = Table(
        title=title or None,
        box=None,
        title_justify="left",
        header_style="bold",
        pad_edge=False,
        show_header=any(c.header for c in cols),
    )
    cells = [[x[: c.clip] if c.clip else x for x, c in zip(r, cols)] for r in cells]
    widths = [max([len(c.header)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    c_out = out()
    left = c_out.width - sum(w for w, c in zip(widths, cols) if not c.wrap) - 2 * (len(cols) - 1)
    for i, c in enumerate(cols):
        if c.wrap and not c.fold:
            room = max(left, 3)
            cells = [[clip(x, room) if j == i else x for j, x in enumerate(r)] for r in cells]
        t.add_column(
            c.header,
            justify="right" if c.right else "left",
            no_wrap=not c.wrap,
            overflow="fold" if c.wrap else "ellipsis",
            width=None if c.wrap else widths[i],
            ratio=1 if c.wrap else None,
            style=c.style or None,
        )
    for r in cells:
        t.add_row(*map(cell, r))
    c_out.print(t)


def out() -> Any:
    """The console for human output: the terminal's width, colour only when `color_wanted`."""
    return console(styles=color_wanted())


def highlight(marked: str, terms: list[str]) -> Any:
    """A snippet whose matches of `terms` are in [brackets] (index.store's snippet): on a terminal the
    matches are bold red, like ripgrep's, and the marks go; elsewhere the plain text without marks."""
    from rich.text import Text

    from index.store import split_marks

    t = Text()
    for piece, hit in split_marks(marked, terms):
        t.append(safe(piece), style="bold red" if hit else None)
    return t


def say(*parts: Any, wrap: bool = True) -> None:
    """One line of human output. On a terminal it wraps at the terminal's width (`wrap=False`: a shell
    line to copy, left whole), with colour when `color_wanted`; in a pipe it is printed as it is. Rich
    pieces (Text) keep their styles; plain text is never parsed as markup."""
    from rich.text import Text

    if not is_tty():
        click.echo("".join(p.plain if isinstance(p, Text) else str(p) for p in parts))
        return
    line = Text()
    for p in parts:
        line.append(p if isinstance(p, Text) else Text(safe(str(p))))
    if wrap:
        out().print(line, highlight=False, overflow="fold")
    else:
        out().print(line, highlight=False, soft_wrap=True, crop=False)


def fit(lines: list[str]) -> list[str]:
    """Lines wrapped to the terminal's width (each continuation keeps the line's indent); as they are
    in a pipe."""
    import textwrap

    if not is_tty():
        return lines
    width = out().width
    wrapped: list[str] = []
    for line in lines:
        indent = " " * min(len(line) - len(line.lstrip(" ")), width // 2)
        wrapped += textwrap.wrap(
            line, width, subsequent_indent=indent + "  ", drop_whitespace=True, break_on_hyphens=False
        ) or [""]
    return wrapped


def styled(text: str, style: str) -> Any:
    """`text` in a rich style (shown on a terminal only)."""
    from rich.text import Text

    return Text(safe(text), style=style)


# --- humanised values (the `humanize` library; one place for each) -------------------------------


def size(n: int | float | None) -> str:
    """Bytes as `12.3 MB`."""
    import humanize

    return "-" if n is None else humanize.naturalsize(n)


def number(n: int | float | None) -> str:
    """A large count as `1.2 million`, a small one with thousands separators."""
    import humanize

    if n is None:
        return "-"
    return humanize.intword(int(n)) if abs(n) >= 1_000_000 else humanize.intcomma(int(n))


def compact(n: int | float | None) -> str:
    """A count for a narrow column, as `1.23 M` / `45.6 k`."""
    import humanize

    if n is None:
        return "-"
    return humanize.metric(n) if abs(n) >= 1000 else f"{n:,.0f}"


def duration(seconds: float | None) -> str:
    """`8 milliseconds`, `2 minutes and 3 seconds`."""
    import humanize

    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return humanize.precisedelta(seconds, minimum_unit="seconds", format="%0.0f")


def ago(ts: str | None, now: datetime | None = None) -> str:
    """An ISO timestamp as `3 days ago` (empty when absent or unreadable)."""
    import humanize

    from index.store import parse_ts

    dt = parse_ts(ts)
    if dt is None:
        return ""
    return str(humanize.naturaltime(dt, when=now or datetime.now(timezone.utc)))


def plural(n: int, word: str, many: str = "") -> str:
    """`1 session`, `2 sessions`, `1,024 entries` (with `many` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
