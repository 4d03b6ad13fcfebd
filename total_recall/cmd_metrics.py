"""`total-recall metrics …` usage reports (T3). Thin: the numbers come from index.stats.metrics.

`metrics health` / `metrics rates` live in cmd_health and `tail` in cmd_tail; `register` adds them.

Heavy imports (rich, the index modules) happen inside the commands so `--json` stays fast.
"""

from __future__ import annotations

from typing import Any

import click

from index.store import project_labeller
from total_recall.cmd_health import health, rates_cmd
from total_recall.cmd_tail import tail
from total_recall.metrics_options import _json, _open, _rate, _since, _table
from total_recall.output import emit_json, short
from total_recall.render import (
    compact,
    pick_format,
    plural,
    say,
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
                f"{project_labeller(conn)(b['project'])} ({plural(b['turns'], 'response')}, {_usd(b)})",
            ]
        )
    _table(
        fmt,
        f"usage since {s or 'the beginning'} (rates as of {data['rates_as_of']})",
        ["", ""],
        rows,
        wrap=1,
        section="usage",
    )
    if data["models"]:
        _table(
            fmt,
            "by model",
            ["model", "responses", "tokens", "cost"],
            [[m["model"], f"{m['turns']:,}", compact(m["total_tokens"]), _usd(m)] for m in data["models"]],
            {1, 2, 3},
            section="models",
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
            section="corrections",
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
    label = project_labeller(conn)
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
    label = project_labeller(conn)
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
    label = project_labeller(conn)
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


def register(cli: click.Group) -> None:
    """Add `metrics` and `tail` to the top-level CLI."""
    metrics_group.add_command(health)
    metrics_group.add_command(rates_cmd)
    cli.add_command(metrics_group)
    cli.add_command(tail)
