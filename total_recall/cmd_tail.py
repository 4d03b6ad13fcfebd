"""`total-recall tail` (C1): watch mode, split from cmd_metrics because it indexes rather than reports."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

import click

from total_recall.output import emit_json, fail


@click.command()
@click.option("--projects-root", "roots", multiple=True, help="Transcript root (repeatable).")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(0.2, 3600), help="Seconds.")
@click.option("--once", is_flag=True, help="Index once and exit (for scripts and tests).")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--json", "as_json", is_flag=True, help="One JSON line per pass that indexed something.")
@click.pass_obj
def tail(obj: Any, roots: tuple[str, ...], interval: float, once: bool, jobs: int, as_json: bool) -> None:
    """Watch mode: poll the transcripts and index what grew (Ctrl-C to stop)."""
    from index.store import run_index
    from lib.paths import state_dir
    from lib.sources import enabled_roots

    paths = obj.settings.projects_roots(roots)
    # other agents' sessions too, as `index` reads them, unless --projects-root names the roots
    agents = (
        {} if roots else {a: r for a, r in enabled_roots(state_dir(obj.db), obj.settings.env).items() if r}
    )
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing and len(missing) == len(paths) and not agents:
        fail(
            f"projects root {missing[0]} does not exist",
            "pass --projects-root DIR or set TOTAL_RECALL_PROJECTS",
        )
    tell: Callable[[str], None] = (lambda m: click.echo(m, err=True)) if as_json else click.echo
    if not once:
        watched = [*paths, *(r for rs in agents.values() for r in rs)]
        tell(f"watching {', '.join(map(str, watched))} every {interval:g}s (Ctrl-C to stop)")
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        while True:
            report = run_index(obj.db, [p for p in paths if p.is_dir()], jobs=jobs, agents=agents)
            changed = report.files - report.files_unchanged
            if as_json and once:
                emit_json(report.to_json())
            elif as_json and changed:
                print(_compact(report.to_json()), flush=True)
            elif changed or once:
                tell(
                    f"{time.strftime('%H:%M:%S')} +{report.messages_added} messages, "
                    f"+{report.extractions_added} extractions from {changed} files in {report.elapsed_s:.2f}s"
                )
            for e in report.errors[:3]:
                click.echo(f"warning: {e}", err=True)
            if once:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        tell("stopped")


def _interrupt(_sig: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def _compact(d: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(d).decode()
