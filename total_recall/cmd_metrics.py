"""`total-recall metrics …` and `tail` (T3, C1). Thin: the numbers come from index.stats.metrics.

Heavy imports (rich, the index modules) happen inside the commands so `--json` stays fast.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

import click

from total_recall.options import since as read_since
from total_recall.options import since_option, timezone_option
from total_recall.output import emit_json, fail, short
from total_recall.render import (
    Col,
    ago,
    compact,
    duration,
    emit_rows,
    labeller,
    output_options,
    pick_format,
    plural,
    say,
    size,
)


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
) -> None:
    """A table in the output format: columns in `right` are numbers; `wrap` is the long text column."""
    emit_rows(
        [
            Col(c, right=bool(right and i in right), wrap=i == wrap, fold=i == wrap)
            for i, c in enumerate(cols)
        ],
        rows,
        fmt,
        title,
    )


def _usd(u: dict[str, Any]) -> str:
    if u.get("cost_usd") is None:
        known = u.get("cost_known_usd") or 0
        return f"${known:,.2f}+unknown" if known else "unknown"
    return f"${u['cost_usd']:,.2f}"


@click.group(name="metrics")
def metrics_group() -> None:
    """Usage, cost, sessions, topics and index health from the local index."""


@metrics_group.command()
@_since
@_rate
@click.option("--top", default=5, show_default=True, type=click.IntRange(1, 100), help="Corrections to list.")
@_json
@click.pass_obj
def summary(
    obj: Any,
    since: str | None,
    tz_name: str | None,
    rates: tuple[str, ...],
    top: int,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Sessions, projects, tokens, cache-hit rate, cost, active vs wall hours, corrections."""
    from index.stats import summary as q

    conn, cat, s = _open(obj, rates, since, tz_name)
    data = q(conn, cat, s, top)
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
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
            f"{compact(tok['total_tokens'])} (in {compact(tok['input_tokens'])}, out {compact(tok['output_tokens'])}, "
            f"cache write {compact(tok['cache_creation_tokens'])}, cache read {compact(tok['cache_read_tokens'])})",
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
        rows.append(
            [
                "busiest project",
                f"{labeller(conn)(b['project'])} ({plural(b['turns'], 'response')}, {_usd(b)})",
            ]
        )
    _table(
        fmt, f"usage since {s or 'the beginning'} (rates as of {data['rates_as_of']})", ["", ""], rows, wrap=1
    )
    if data["models"]:
        _table(
            fmt,
            "by model",
            ["model", "responses", "tokens", "cost"],
            [[m["model"], f"{m['turns']:,}", compact(m["total_tokens"]), _usd(m)] for m in data["models"]],
            {1, 2, 3},
        )
    if data["top_corrections"]:
        _table(
            fmt,
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
def cost(
    obj: Any,
    since: str | None,
    tz_name: str | None,
    rates: tuple[str, ...],
    by: str,
    group: str,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Tokens and cost per model, project or coding agent (and its models), per day, week (Monday) or
    month of --timezone (default: the local zone; UTC for days as ccusage --timezone UTC counts them)."""
    from index.stats import cost_report
    from index.store import zone

    conn, cat, s = _open(obj, rates, since, tz_name)
    data = cost_report(conn, cat, s, by, group, tz=zone(tz_name))
    label = labeller(conn)
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json(data)
        return
    period = {"day": "day", "week": "week of", "month": "month"}[by]
    rows = [
        [
            r["period"],
            r[group]
            if group == "model"
            else label(r[group])
            if group == "project"
            else f"{r[group]} / {r['model']}",
            f"{r['turns']:,}",
            compact(r["input_tokens"]),
            compact(r["output_tokens"]),
            compact(r["cache_creation_tokens"]),
            compact(r["cache_read_tokens"]),
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
            compact(t["input_tokens"]),
            compact(t["output_tokens"]),
            compact(t["cache_creation_tokens"]),
            compact(t["cache_read_tokens"]),
            _usd(t),
        ]
    )
    _table(
        fmt,
        f"cost by {by} and {group} (rates as of {data['rates_as_of']})",
        [
            period,
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
def sessions(
    obj: Any,
    since: str | None,
    tz_name: str | None,
    rates: tuple[str, ...],
    by: str,
    limit: int,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Top sessions by tokens, cost, duration, active time or corrections."""
    from index.stats import top_sessions

    conn, cat, s = _open(obj, rates, since, tz_name)
    data = top_sessions(conn, cat, s, by, limit)
    label = labeller(conn)
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json(data)
        return
    if not data:
        say(f"no sessions since {s}" if s else "no sessions in the index")
        return
    _table(
        fmt,
        f"top {limit} sessions by {by}",
        ["session", "last", "project", "tokens", "cost", "active h", "wall h", "corr.", "title"],
        [
            [
                r["session_id"][:8],
                (r["last_ts"] or "")[:10],
                label(r["project"]),
                compact(r["total_tokens"]),
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
def topics(
    obj: Any,
    since: str | None,
    tz_name: str | None,
    projects: int,
    terms: int,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Distinctive terms and recent session titles per project."""
    from index.stats import topics as q

    conn, _cat, s = _open(obj, (), since, tz_name)
    data = q(conn, s, projects, terms)
    label = labeller(conn)
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json(data)
        return
    if not data:
        say(f"no sessions since {s}" if s else "no sessions in the index")
        return
    _table(
        fmt,
        "topics by project",
        ["project", "sessions", "terms", "recent titles"],
        [
            [
                label(p["project"]),
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
def health(
    obj: Any, since: str | None, tz_name: str | None, no_scan: bool, fmt: str | None, as_json: bool
) -> None:
    """Index freshness, ingest p50/p95, errors, DB size, hook fire counts and latency."""
    from index.stats import health as q

    conn, _cat, s = _open(obj, (), since, tz_name)
    data = q(conn, obj.db, s, scan_disk=not no_scan)
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json(data)
        return
    f, ing, err = data["freshness"], data["ingest"], data["errors"]
    pend = f.get("pending_files")
    rows = [
        ["db", f"{data['db']} ({size(data['db_bytes'])})"],
        [
            "last index run",
            f"{ago(f['last_run_at'])} ({f['last_run_at'][:19].replace('T', ' ')})"
            if f["last_run_at"]
            else "never",
        ],
        ["newest indexed transcript", f["newest_indexed_mtime"] or "-"],
    ]
    if pend is not None:
        rows.append(
            [
                "transcripts pending",
                "none (up to date)" if pend == 0 else f"{plural(pend, 'file')} — run `total-recall index`",
            ]
        )
    rows += [
        [
            "ingest p50 / p95",
            f"{duration(ing['p50_s'])} / {duration(ing['p95_s'])} over {plural(ing['runs'], 'run')}",
        ],
        ["bad lines / ingest errors", f"{err['bad_lines']} / {err['ingest_errors']}"],
        ["files tracked (missing)", f"{err['files']} ({err['files_missing']})"],
    ]
    _table(fmt, "index health", ["", ""], rows, wrap=1)
    hooks = data["hooks"]["hooks"]
    if hooks:
        _table(
            fmt,
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
        say(f"no hook events in {data['hooks']['events_file']}")
    bg = data["hooks"]["background_index"]
    if bg:
        say(
            f"background index runs: {bg['fired']} ({bg['errors']} failed), "
            f"p50 {bg['latency_ms_p50']} ms, p95 {bg['latency_ms_p95']} ms"
        )


@metrics_group.command(name="rates")
@_rate
@_json
def rates_cmd(rates: tuple[str, ...], fmt: str | None, as_json: bool) -> None:
    """The shipped price catalog (USD per million tokens), with overrides applied."""
    from index.stats import BadRate, load_catalog

    try:
        cat = load_catalog(rates)
    except BadRate as exc:
        fail(str(exc))
    models = [m.to_json() for m in sorted(cat.models.values(), key=lambda m: (m.provider, m.key))]
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json({"as_of": cat.as_of, "sources": cat.sources, "models": models})
        return
    _table(
        fmt,
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


def register(cli: click.Group) -> None:
    """Add `metrics` and `tail` to the top-level CLI."""
    cli.add_command(metrics_group)
    cli.add_command(tail)
