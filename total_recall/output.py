"""Output helpers shared by CLI commands: one JSON document on stdout, or rich text on a terminal."""

from __future__ import annotations

import sys
from typing import Any

import click
import orjson


def emit_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS,
                                  default=str).decode() + "\n")


def fail(message: str, fix: str = "", code: int = 2) -> None:
    """One line saying what is wrong and what to do; non-zero exit."""
    text = f"error: {message}" + (f" — {fix}" if fix else "")
    raise click.exceptions.Exit(_print_err(text, code))


def _print_err(text: str, code: int) -> int:
    click.echo(text, err=True)
    return code


def console() -> Any:
    from rich.console import Console

    return Console()


def short(text: str | None, n: int = 80) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"
