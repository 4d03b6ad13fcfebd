"""`total-recall vec status | backfill | rebuild | search`: the optional vector store (V1–V4)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from total_recall.cmd_manage import wait_option
from total_recall.options import json_option
from total_recall.output import console, emit_json, fail, short
from total_recall.render import duration, plural, say


def _need_vectors() -> None:
    from vec.driver import unavailable_reason

    reason = unavailable_reason()
    if reason:
        fail(reason)


def _run_with_bar(as_json: bool, label: str, fn: Callable[[Any], Any]) -> Any:
    """Run fn(progress) with a progress bar on a terminal, none when piped or --json."""
    from vec.embed import EmbedError
    from vec.errors import VecError

    try:
        if as_json or not sys.stderr.isatty():
            return fn(None)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            transient=True,
            console=console(),
        ) as bar:
            task = bar.add_task(label, total=None)

            def tick(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return fn(tick)
    except VecError as exc:
        fail(str(exc), exc.fix)
    except EmbedError as exc:
        fail(str(exc))


def _report(report: Any, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(report.to_json())
        return
    say(
        f"{verb}: +{plural(report.vectors_added, 'vector')} ({plural(report.messages, 'message')}, "
        f"{plural(report.extractions, 'extraction')}, {plural(report.sessions, 'session title')}), "
        f"-{report.vectors_removed:,} stale, model {report.model}, {duration(report.elapsed_s)}"
        + (f", {report.texts_per_s:.0f} texts/s" if report.vectors_added else "")
        + ("; the store was moved from an older version's float32 layout" if report.upgraded else "")
    )


@click.group(name="vec")
def vec_group() -> None:
    """Optional semantic vectors (sqlite-vec + fastembed) for hybrid search."""


@vec_group.command()
@json_option
@click.pass_obj
def status(obj: Any, as_json: bool) -> None:
    """Whether vectors are available, which model is configured, and what the store holds."""
    from vec.driver import ENABLE_HINT, driver, unavailable_reason
    from vec.embed import model_config

    reason = unavailable_reason()
    if reason:
        if as_json:
            emit_json({"available": False, "reason": reason, "enable": ENABLE_HINT})
        else:
            say(reason)
        return
    from index.store import open_reader
    from vec.store import REBUILD, describe

    cfg = model_config(obj.settings)
    db = driver()
    store = describe(open_reader(obj.db))
    data: dict[str, Any] = {
        "available": True,
        "driver": getattr(db, "__name__", "?"),
        "sqlite_version": getattr(db, "sqlite_version", "?"),
        "configured_model": cfg.name,
        "model_path": cfg.path,
        "store": store,
        "stamp_ok": bool(store.get("exists")) and store.get("model") == cfg.name,
    }
    if not store.get("exists"):
        data["fix"] = "run `total-recall vec backfill` to embed the index"
    elif not data["stamp_ok"]:
        data["fix"] = f"the store was embedded with {store['model']}; run `{REBUILD}`"
    elif store.get("fix"):  # an older version's layout: searched, but slower until upgraded
        data["fix"] = f"{store['problem']}: {store['fix']}"
    if as_json:
        emit_json(data)
        return
    if not store.get("exists"):
        say(f"vectors available ({cfg.label}); no vector store yet — {data['fix']}")
        return
    say(
        f"vector store: {plural(store['vectors'], 'vector')} ("
        + ", ".join(f"{k} {v:,}" for k, v in sorted(store["vectors_by_kind"].items()))
        + f"); model {store['model']} ({store['dim']}-d, {store['metric']}); "
        f"pending: {plural(store['pending_messages'], 'message')}, "
        f"{plural(store['pending_extractions'], 'extraction')}"
    )
    if not data["stamp_ok"]:
        click.echo(f"warning: configured model is {cfg.name} — {data['fix']}", err=True)
    elif data.get("fix"):
        click.echo(f"warning: {data['fix']}", err=True)


@vec_group.command()
@wait_option
@json_option
@click.pass_obj
def backfill(obj: Any, wait: float, as_json: bool) -> None:
    """Embed what the index gained since the last backfill (creates the store the first time)."""
    from index.store import writer_lock
    from vec.backfill import backfill as run
    from vec.embed import model_config

    _need_vectors()
    with writer_lock(obj.db, wait=wait):  # a writer, like index runs (whose own backfill holds the lock too)
        _report(
            _run_with_bar(as_json, "embedding", lambda tick: run(obj.db, model_config(obj.settings), tick)),
            as_json,
            "backfill",
        )


@vec_group.command()
@wait_option
@json_option
@click.pass_obj
def rebuild(obj: Any, wait: float, as_json: bool) -> None:
    """Drop the vector store and embed everything again with the configured model."""
    from index.store import IndexMissing, writer_lock
    from vec.backfill import rebuild as run
    from vec.embed import model_config

    _need_vectors()
    if not Path(obj.db).exists():
        raise IndexMissing(f"no index at {obj.db}")
    with writer_lock(obj.db, wait=wait):
        _report(
            _run_with_bar(
                as_json, "re-embedding", lambda tick: run(obj.db, model_config(obj.settings), tick)
            ),
            as_json,
            "rebuild",
        )


@vec_group.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(["message", "extraction", "session"]),
    help="Restrict to these sources (repeatable; default all).",
)
@json_option
@click.pass_obj
def search(obj: Any, query: tuple[str, ...], limit: int, kinds: tuple[str, ...], as_json: bool) -> None:
    """Vector-only (semantic) search: nearest messages, extractions and session titles. Exits 1 when
    nothing is found."""
    from index.store import open_reader
    from vec.hybrid import semantic
    from vec.store import KINDS

    _need_vectors()
    conn = open_reader(obj.db)
    hits = _run_with_bar(
        True, "", lambda _: semantic(conn, " ".join(query), obj.settings, limit, kinds or KINDS)
    )
    if as_json:
        emit_json(hits)
    if not hits:
        from total_recall.cmd_search import nothing

        nothing("no matches", "try other words, or `total-recall vec backfill` to embed what is new")
    if as_json:
        return
    for h in hits:
        say(
            f"{h['similarity']:.3f}  {(h['ts'] or '')[:10]}  {h['session_id'][:8]}  {h['ref_kind']}/{h['kind']}: "
            f"{short(h['text'], 120)}"
        )


def register(cli: click.Group) -> None:
    cli.add_command(vec_group)
