"""`refine`: optional review of uncertain extractions by a local model (X20). Off unless a model is named."""

from __future__ import annotations

from typing import Any

import click

from total_recall.cmd_manage import wait_option
from total_recall.options import json_option
from total_recall.output import emit_json, fail, short
from total_recall.render import plural, say


@click.command()
@click.option(
    "--model", help="Ollama model name (default: TOTAL_RECALL_LLM_MODEL; refinement is off without one)."
)
@click.option(
    "--url", help="Local Ollama URL, loopback only (default: TOTAL_RECALL_LLM_URL or http://127.0.0.1:11434)."
)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000), help="Rows per run.")
@click.option("--kind", help="Only extractions of this kind.")
@click.option(
    "--timeout", default=60.0, show_default=True, type=click.FloatRange(1, 600), help="Seconds per request."
)
@click.option("--dry-run", is_flag=True, help="Print what would be sent; call nothing, write nothing.")
@wait_option
@json_option
@click.pass_obj
def refine(
    obj: Any,
    model: str | None,
    url: str | None,
    limit: int,
    kind: str | None,
    timeout: float,
    dry_run: bool,
    wait: float,
    as_json: bool,
) -> None:
    """Let a local LLM confirm or doubt uncertain extractions; it only nudges scores (heuristics win)."""
    from index.llm import LLMError, OllamaClient, check_url
    from index.llm import dry_run as plan
    from index.llm import refine_project as do_refine
    from index.store import maintenance, open_reader

    if dry_run:
        items = plan(open_reader(obj.db), limit, kind)
        if as_json:
            emit_json({"dry_run": True, "items": items})
            return
        for it in items:
            say(f"--- extraction {it['id']} ({it['kind']}, score {it['score']:.2f})\n{it['prompt']}\n")
        click.echo(f"{plural(len(items), 'extraction')} would be sent; nothing was called", err=True)
        return
    model = model or obj.settings.llm_model
    if not model:
        fail(
            "LLM refinement is off (no model named)",
            "pass --model NAME or set TOTAL_RECALL_LLM_MODEL to a model served by a local Ollama",
        )
    try:
        client = OllamaClient(model, check_url(url or obj.settings.llm_url), timeout=timeout)
    except LLMError as exc:
        fail(str(exc), "point --url or TOTAL_RECALL_LLM_URL at a local Ollama, e.g. http://127.0.0.1:11434")
    with maintenance(obj.db, wait) as conn:  # the index lock, like every writer
        report = do_refine(conn, client, limit, kind)
    if report.stopped and report.considered == 0:
        fail(report.stopped, "start it with `ollama serve` (and `ollama pull MODEL`), or check --url")
    if as_json:
        emit_json(report.as_dict())
    else:
        for ch in report.changes:
            say(
                f"{ch['id']:>6} {ch['kind']:<18} {ch['verdict']:<8} {ch['score_before']:.2f} → "
                f"{ch['score_after']:.2f}  {short(ch['note'], 60)}"
            )
        say(
            f"reviewed {report.considered}: {report.confirmed} confirmed, {report.doubted} doubted, "
            f"{report.unclear} unclear (model {report.model})"
        )
    if report.stopped:
        click.echo(f"stopped early: {report.stopped}", err=True)
        raise click.exceptions.Exit(1)


def register(cli: click.Group) -> None:
    cli.add_command(refine)
