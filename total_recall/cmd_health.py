"""`total-recall metrics health` and `metrics rates`: the index and the price catalog, not usage reports."""

from __future__ import annotations

from typing import Any

import click

from total_recall.metrics_options import _json, _open, _rate, _since, _table
from total_recall.output import emit_json, fail, short
from total_recall.render import ago, duration, pick_format, plural, say, size


@click.command()
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
    _table(fmt, "index health", ["", ""], rows, wrap=1, section="index")
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
            section="hooks",
        )
    else:
        say(f"no hook events in {data['hooks']['events_file']}")
    bg = data["hooks"]["background_index"]
    if bg:
        say(
            f"background index runs: {bg['fired']} ({bg['errors']} failed), "
            f"p50 {bg['latency_ms_p50']} ms, p95 {bg['latency_ms_p95']} ms"
        )


@click.command(name="rates")
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
