"""Options several commands share, with one help text each (`--json`, `--project`, `--cwd`, `--since`,
`--timezone`, `--yes`), and `since()` that reads `--since` in the `--timezone` zone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from index.store import SINCE_HELP

F = TypeVar("F", bound=Callable[..., Any])
SINCE = "Only activity since: " + SINCE_HELP

json_option = click.option(
    "--json", "as_json", is_flag=True, help='Print exactly one JSON document (errors too: {"error": …}).'
)
project_option = click.option(
    "--project", help="Only this project: its path, or part of it (e.g. the repository's name)."
)
cwd_option = click.option("--cwd", help="Only sessions run in this directory (exact path).")
since_option = click.option("--since", metavar="WHEN", help=SINCE)
timezone_option = click.option(
    "--timezone",
    "tz_name",
    metavar="ZONE",
    help="Zone of days (today, yesterday, dates, day grouping): local (default), UTC or a name like Europe/Paris.",
)
yes_option = click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation (for scripts).")


def since(value: str | None, tz_name: str | None) -> str | None:
    """`--since` as the stored timestamp form, read in the `--timezone` zone."""
    from index.store import parse_since, zone

    if not value:
        if tz_name:
            zone(tz_name)  # a bad --timezone is an error even without --since
        return None
    return parse_since(value, tz=zone(tz_name))


def kinds_choice(
    allowed: tuple[str, ...],
) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A callback validating a comma-separated list of kinds (a usage error names the accepted ones)."""

    def check(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if not value:
            return value
        bad = [k for k in (p.strip() for p in value.split(",")) if k not in allowed]
        if bad:
            raise click.BadParameter(f"{', '.join(bad)} is not a kind; use one of: {', '.join(allowed)}")
        return value

    return check
