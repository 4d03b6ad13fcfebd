"""`total-recall metrics …` and `tail` (T3, C1). Thin: the numbers come from index.stats.metrics.

Heavy imports (rich, the index modules) happen inside the commands so `--json` stays fast.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from total_recall.output import emit_json, fail, short

_since = click.option(
    "--since", help="Only activity since: 7d, 12h, 2w or an ISO date (UTC) like 2026-10-01."
)
_json = click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON document.")
_rate = click.option(
    "--rate",
    "rates",
    multiple=True,
    metavar="MODEL=IN/OUT",
    help="Override a model's price in USD per million tokens "
    "(IN/OUT[/CACHE_READ[/WRITE_5M[/WRITE_1H]]]); repeatable.",
)


def _open(obj: Any, rates: tuple[str, ...], since: str | None) -> tuple[Any, Any, str | None]:
    from index.stats import BadRate, load_catalog
    from index.store import open_reader, parse_since

    try:
        cat = load_catalog(rates)
    except BadRate as exc:
        fail(str(exc))
    return open_reader(obj.db), cat, parse_since(since)


def _table(
    title: str, cols: list[str], rows: list[list[Any]], right: set[int] | None = None, wrap: int | None = None
) -> None:
    """A borderless table: short columns keep their width, long text columns (and `wrap`) fold."""
    from rich.table import Table

    from total_recall.output import cell, console

    cells = [[str(x) for x in r] for r in rows]
    t = Table(title=title, box=None, title_justify="left", header_style="bold")
    for i, c in enumerate(cols):
        width = max([len(c)] + [len(r[i]) for r in cells])
        fixed = width <= 16 and i != wrap
        t.add_column(
            c,
            justify="right" if right and i in right else "left",
            no_wrap=fixed,
            min_width=width if fixed else min(width, 12),
            overflow="fold",
        )
    for r in cells:
        t.add_row(*map(cell, r))
    console().print(t)


def _n(x: int | float | None) -> str:
    if x is None:
        return "-"
    x = float(x)
    for unit, div in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


def _usd(u: dict[str, Any]) -> str:
    if u.get("cost_usd") is None:
        known = u.get("cost_known_usd") or 0
        return f"${known:,.2f}+unknown" if known else "unknown"
    return f"${u['cost_usd']:,.2f}"


def _proj(p: str | None) -> str:
    return short(Path(p).name if p and p != "?" else (p or "?"), 28) or "?"


@click.group(name="metrics")
def metrics_group() -> None:
    """Usage, cost, sessions, topics and index health from the local index."""


@metrics_group.command()
@_since
@_rate
@click.option("--top", default=5, show_default=True, type=click.IntRange(1, 100), help="Corrections to list.")
@_json
@click.pass_obj
def summary(obj: Any, since: str | None, rates: tuple[str, ...], top: int, as_json: bool) -> None:
    """Sessions, projects, tokens, cache-hit rate, cost, active vs wall hours, corrections."""
    from index.stats import summary as q

    conn, cat, s = _open(obj, rates, since)
    data = q(conn, cat, s, top)
    if as_json:
        emit_json(data)
        return
    tok = data["tokens"]
    hit = data["cache_hit_rate"]
    rows = [
        ["sessions", data["sessions"]],
        ["projects", data["projects"]],
        ["API responses", f"{tok['turns']:,}"],
        [
            "tokens",
            f"{_n(tok['total_tokens'])} (in {_n(tok['input_tokens'])}, out {_n(tok['output_tokens'])}, "
            f"cache write {_n(tok['cache_creation_tokens'])}, cache read {_n(tok['cache_read_tokens'])})",
        ],
        ["cache-hit rate", "-" if hit is None else f"{hit:.1%}"],
        [
            "cost",
            _usd(data)
            + (f"  (unpriced: {', '.join(data['unknown_models'])})" if data["unknown_models"] else ""),
        ],
        ["active / wall hours", f"{data['active_hours']:.1f} / {data['wall_hours']:.1f}"],
    ]
    b = data["busiest_project"]
    if b:
        rows.append(["busiest project", f"{b['project']} ({b['turns']:,} responses, {_usd(b)})"])
    _table(f"usage since {s or 'the beginning'} (rates as of {data['rates_as_of']})", ["", ""], rows, wrap=1)
    if data["models"]:
        _table(
            "by model",
            ["model", "responses", "tokens", "cost"],
            [[m["model"], f"{m['turns']:,}", _n(m["total_tokens"]), _usd(m)] for m in data["models"]],
            {1, 2, 3},
        )
    if data["top_corrections"]:
        _table(
            "top corrections",
            ["n", "kind", "last", "correction"],
            [
                [c["count"], c["kind"], (c["last_ts"] or "")[:10], short(c["content"], 90)]
                for c in data["top_corrections"]
            ],
            wrap=3,
        )


@metrics_group.command()
@_since
@_rate
@click.option("--by", type=click.Choice(["day", "week", "month"]), default="day", show_default=True)
@click.option("--group", type=click.Choice(["model", "project", "agent"]), default="model", show_default=True)
@_json
@click.pass_obj
def cost(obj: Any, since: str | None, rates: tuple[str, ...], by: str, group: str, as_json: bool) -> None:
    """Tokens and cost per model, project or coding agent (and its models), per day, week (Monday) or
    month (UTC)."""
    from index.stats import cost_report

    conn, cat, s = _open(obj, rates, since)
    data = cost_report(conn, cat, s, by, group)
    if as_json:
        emit_json(data)
        return
    label = {"day": "day", "week": "week of", "month": "month"}[by]
    rows = [
        [
            r["period"],
            _proj(r[group])
            if group == "project"
            else r[group] + (f" / {r['model']}" if group == "agent" else ""),
            f"{r['turns']:,}",
            _n(r["input_tokens"]),
            _n(r["output_tokens"]),
            _n(r["cache_creation_tokens"]),
            _n(r["cache_read_tokens"]),
            _usd(r),
        ]
        for r in data["rows"]
    ]
    t = data["total"]
    rows.append(
        [
            "total",
            "",
            f"{t['turns']:,}",
            _n(t["input_tokens"]),
            _n(t["output_tokens"]),
            _n(t["cache_creation_tokens"]),
            _n(t["cache_read_tokens"]),
            _usd(t),
        ]
    )
    _table(
        f"cost by {by} and {group} (rates as of {data['rates_as_of']})",
        [
            label,
            "agent / model" if group == "agent" else group,
            "resp.",
            "input",
            "output",
            "c.write",
            "c.read",
            "cost",
        ],
        rows,
        {2, 3, 4, 5, 6, 7},
        wrap=1,
    )
    if t["unknown_models"]:
        click.echo(
            f"unpriced models (cost unknown): {', '.join(t['unknown_models'])} — "
            "price them with --rate MODEL=IN/OUT",
            err=True,
        )


@metrics_group.command()
@_since
@_rate
@click.option(
    "--by",
    type=click.Choice(["tokens", "cost", "duration", "active", "corrections"]),
    default="tokens",
    show_default=True,
    help="duration = first to last record; active = working time.",
)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 1000))
@_json
@click.pass_obj
def sessions(obj: Any, since: str | None, rates: tuple[str, ...], by: str, limit: int, as_json: bool) -> None:
    """Top sessions by tokens, cost, duration, active time or corrections."""
    from index.stats import top_sessions

    conn, cat, s = _open(obj, rates, since)
    data = top_sessions(conn, cat, s, by, limit)
    if as_json:
        emit_json(data)
        return
    if not data:
        click.echo(f"no sessions since {s}" if s else "no sessions in the index")
        return
    _table(
        f"top {limit} sessions by {by}",
        ["session", "last", "project", "tokens", "cost", "active h", "wall h", "corr.", "title"],
        [
            [
                r["session_id"][:8],
                (r["last_ts"] or "")[:10],
                _proj(r["project"]),
                _n(r["total_tokens"]),
                _usd(r),
                f"{r['active_hours']:.2f}",
                f"{r['wall_hours']:.2f}",
                r["corrections"],
                short(r["title"], 50),
            ]
            for r in data
        ],
        {3, 4, 5, 6, 7},
        wrap=8,
    )


@metrics_group.command()
@_since
@click.option("--projects", default=8, show_default=True, type=click.IntRange(1, 200))
@click.option("--terms", default=8, show_default=True, type=click.IntRange(1, 50))
@_json
@click.pass_obj
def topics(obj: Any, since: str | None, projects: int, terms: int, as_json: bool) -> None:
    """Distinctive terms and recent session titles per project."""
    from index.stats import topics as q

    conn, _cat, s = _open(obj, (), since)
    data = q(conn, s, projects, terms)
    if as_json:
        emit_json(data)
        return
    if not data:
        click.echo(f"no sessions since {s}" if s else "no sessions in the index")
        return
    _table(
        "topics by project",
        ["project", "sessions", "terms", "recent titles"],
        [
            [
                _proj(p["project"]),
                p["sessions"],
                ", ".join(t["term"] for t in p["terms"]),
                " | ".join(short(x, 40) for x in p["recent_titles"]),
            ]
            for p in data
        ],
        {1},
        wrap=2,
    )


@metrics_group.command()
@_since
@click.option("--no-scan", is_flag=True, help="Do not stat the transcripts on disk.")
@_json
@click.pass_obj
def health(obj: Any, since: str | None, no_scan: bool, as_json: bool) -> None:
    """Index freshness, ingest p50/p95, errors, DB size, hook fire counts and latency."""
    from index.stats import health as q

    conn, _cat, s = _open(obj, (), since)
    data = q(conn, obj.db, s, scan_disk=not no_scan)
    if as_json:
        emit_json(data)
        return
    f, ing, err = data["freshness"], data["ingest"], data["errors"]
    pend = f.get("pending_files")
    rows = [
        ["db", f"{data['db']} ({_n(data['db_bytes'])}B)"],
        [
            "last index run",
            f"{f['last_run_at'] or 'never'}"
            + (f" ({f['last_run_age_s']:.0f}s ago)" if f["last_run_age_s"] is not None else ""),
        ],
        ["newest indexed transcript", f["newest_indexed_mtime"] or "-"],
    ]
    if pend is not None:
        rows.append(
            [
                "transcripts pending",
                "none (up to date)" if pend == 0 else f"{pend} files — run `total-recall index`",
            ]
        )
    rows += [
        ["ingest p50 / p95", f"{ing['p50_s']} s / {ing['p95_s']} s over {ing['runs']} runs"],
        ["bad lines / ingest errors", f"{err['bad_lines']} / {err['ingest_errors']}"],
        ["files tracked (missing)", f"{err['files']} ({err['files_missing']})"],
    ]
    _table("index health", ["", ""], rows, wrap=1)
    hooks = data["hooks"]["hooks"]
    if hooks:
        _table(
            "hooks",
            ["hook", "fired", "errors", "p50 ms", "p95 ms", "last error"],
            [
                [
                    h["hook"],
                    h["fired"],
                    h["errors"],
                    h["latency_ms_p50"],
                    h["latency_ms_p95"],
                    short(h["last_error"] or "", 60),
                ]
                for h in hooks
            ],
            {1, 2, 3, 4},
            wrap=5,
        )
    else:
        click.echo(f"no hook events in {data['hooks']['events_file']}")
    bg = data["hooks"]["background_index"]
    if bg:
        click.echo(
            f"background index runs: {bg['fired']} ({bg['errors']} failed), "
            f"p50 {bg['latency_ms_p50']} ms, p95 {bg['latency_ms_p95']} ms"
        )


@metrics_group.command(name="rates")
@_rate
@_json
def rates_cmd(rates: tuple[str, ...], as_json: bool) -> None:
    """The shipped price catalog (USD per million tokens), with overrides applied."""
    from index.stats import BadRate, load_catalog

    try:
        cat = load_catalog(rates)
    except BadRate as exc:
        fail(str(exc))
    models = [m.to_json() for m in sorted(cat.models.values(), key=lambda m: (m.provider, m.key))]
    if as_json:
        emit_json({"as_of": cat.as_of, "sources": cat.sources, "models": models})
        return
    _table(
        f"rates as of {cat.as_of} (USD / million tokens)",
        ["model", "provider", "input", "output", "cache read", "write 5m", "write 1h", "long ctx"],
        [
            [
                m["model"],
                m["provider"] + ("*" if m["source"] == "override" else ""),
                m["input"],
                m["output"],
                m["cache_read"],
                m["cache_write_5m"],
                m["cache_write_1h"],
                ", ".join(f">{t['above'] // 1000}k: {t['input']}/{t['output']}" for t in m["tiers"]),
            ]
            for m in models
        ],
        {2, 3, 4, 5, 6},
    )


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
    from lib.paths import projects_roots, state_dir
    from lib.sources import enabled_roots

    paths = projects_roots(roots)
    # other agents' sessions too, as `index` reads them, unless --projects-root names the roots
    agents = {} if roots else {a: r for a, r in enabled_roots(state_dir(obj.db)).items() if r}
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing and len(missing) == len(paths) and not agents:
        fail(
            f"projects root {missing[0]} does not exist",
            "pass --projects-root DIR or set TOTAL_RECALL_PROJECTS",
        )
    say: Callable[[str], None] = (lambda m: click.echo(m, err=True)) if as_json else click.echo
    if not once:
        watched = [*paths, *(r for rs in agents.values() for r in rs)]
        say(f"watching {', '.join(map(str, watched))} every {interval:g}s (Ctrl-C to stop)")
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
                say(
                    f"{time.strftime('%H:%M:%S')} +{report.messages_added} messages, "
                    f"+{report.extractions_added} extractions from {changed} files in {report.elapsed_s:.2f}s"
                )
            for e in report.errors[:3]:
                click.echo(f"warning: {e}", err=True)
            if once:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        say("stopped")


def _interrupt(_sig: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def _compact(d: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(d).decode()


def register(cli: click.Group) -> None:
    """Add `metrics` and `tail` to the top-level CLI."""
    cli.add_command(metrics_group)
    cli.add_command(tail)
