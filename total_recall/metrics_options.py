"""The options and table helper shared by the `metrics` commands (cmd_metrics, cmd_health) and `sources`."""

from __future__ import annotations

from typing import Any

import click

from total_recall.options import since as read_since
from total_recall.options import since_option, timezone_option
from total_recall.output import fail
from total_recall.render import Col, emit_rows, output_options


def _since(f: Any) -> Any:
    return since_option(timezone_option(f))


_json = output_options
_rate = click.option(
    "--rate",
    "rates",
    multiple=True,
    metavar="MODEL=IN/OUT",
    help="Override a model's price in USD per million tokens "
    "(IN/OUT[/CACHE_READ[/WRITE_5M[/WRITE_1H]]]); repeatable.",
)


def _open(
    obj: Any, rates: tuple[str, ...], since: str | None, tz_name: str | None = None
) -> tuple[Any, Any, str | None]:
    from index.stats import BadRate, load_catalog
    from index.store import open_reader

    try:
        cat = load_catalog(rates)
    except BadRate as exc:
        fail(str(exc))
    return open_reader(obj.db), cat, read_since(since, tz_name)


def _table(
    fmt: str,
    title: str,
    cols: list[str],
    rows: list[list[Any]],
    right: set[int] | None = None,
    wrap: int | None = None,
    section: str = "",
) -> None:
    """A table in the output format: columns in `right` are numbers; `wrap` is the long text column.
    A command that prints several tables names each one's `section`: in TSV and CSV every row then
    starts with it, so a pipe can tell the tables apart (`awk -F'\t' '$1 == "models"'`)."""
    lead = 1 if section and fmt in ("tsv", "csv") else 0
    if lead:
        cols, rows = ["section", *cols], [[section, *r] for r in rows]
        right = {i + 1 for i in right or ()}
        wrap = None if wrap is None else wrap + 1
    emit_rows(
        [
            # an unlabelled key/value table keeps its terminal look, and is named item,value in CSV/JSON
            Col(
                c,
                key=c or ("item", "value")[min(i - lead, 1)],
                right=bool(right and i in right),
                wrap=i == wrap,
                fold=i == wrap,
            )
            for i, c in enumerate(cols)
        ],
        rows,
        fmt,
        title,
    )
