"""`status` (what the index holds) and `doctor` (the first stop when something is wrong: it runs without
an index and checks the install around it too)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click

from lib.settings import Settings
from total_recall.options import json_option
from total_recall.output import emit_json
from total_recall.render import (
    Col,
    ago,
    duration,
    emit_rows,
    number,
    output_options,
    pick_format,
    plural,
    say,
    size,
    styled,
)

LOW_DISK = 500 * 1024 * 1024  # below this, an index run may fail half-way


@click.command()
@output_options
@click.pass_obj
def status(obj: Any, fmt: str | None, as_json: bool) -> None:
    """What the index holds and when it last ran."""
    from index.stats import status as q_status
    from index.store import open_reader

    d = q_status(open_reader(obj.db), obj.db)
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json(d)
        return
    vec = d["vectors"]
    run = d["last_run"]
    kinds = sorted(d["extractions_by_kind"].items(), key=lambda kv: -kv[1])
    rows = [
        ("index", f"{d['db']} ({size(d['db_bytes'])}, schema {d['schema_version']})"),
        ("sessions", f"{number(d['sessions'])} in {plural(d['projects'], 'project')}"
         + (" (" + ", ".join(f"{a} {n:,}" for a, n in sorted(d["sessions_by_agent"].items())) + ")"
            if len(d["sessions_by_agent"]) > 1 else "")),
        ("messages", f"{number(d['messages'])} ({plural(d['prompts'], 'prompt')})"),
        ("extractions", f"{number(d['extractions'])}" + (": " + ", ".join(f"{k} {n:,}" for k, n in kinds) if kinds else "")),
        ("subagents", number(d["subagents"])),
        ("API responses", number(d["turns"])),
        ("compactions", number(d["compactions"])),
        ("transcripts", f"{plural(d['files'], 'file')}, {size(d['raw_bytes'])}, {d['files_missing']:,} missing on disk"),
        ("bad lines skipped", number(d["bad_lines"])),
        ("files skipped", _skipped(d["skipped_files"])),
        ("activity", f"{(d['first_ts'] or '')[:10]} → {(d['last_ts'] or '')[:10]}" if d["first_ts"] else "none yet"),
        ("vectors", _vectors(vec)),
        ("extractors", _extractors(d["extractors"])),
        ("last index run", "never" if run is None else
         f"{ago(run['at'])}, {run['mode']}: {plural(run['files'] or 0, 'file')}, "
         f"+{plural(run['messages_added'] or 0, 'message')} in {duration(run['elapsed_s'])}"),
    ]  # fmt: skip
    emit_rows([Col("", key="item"), Col("", key="value", wrap=True, fold=True)], rows, fmt)


REEXTRACT = "`total-recall index --full` reads every transcript again with this version's extractors"


def _made_by(state: dict[str, Any]) -> str:
    """Which extractors made the index's extractions, against this version's."""
    if state["up_to_date"]:
        return f"extractions made by this version ({state['current']})"
    made = f"other extractors ({state['index']})" if state["index"] else "an earlier version's extractors"
    return f"extractions made by {made}, not this version's ({state['current']})"


def _extractors(state: dict[str, Any]) -> str:
    return _made_by(state) if state["up_to_date"] else f"{_made_by(state)}: {REEXTRACT}"


def _skipped(files: list[dict[str, Any]]) -> str:
    """Files the parser failed on twice: how many, and the first one's reason."""
    if not files:
        return "none"
    return f"{number(len(files))} (the parser failed on them; read again when they change), e.g. {files[0]['reason']}"


def _vectors(v: dict[str, Any]) -> str:
    if not v.get("exists"):
        return "none (optional: `total-recall vec backfill`)"
    old = "; old float32 layout: run `total-recall vec backfill` to upgrade it" if v.get("fix") else ""
    return f"{number(v.get('vectors'))} ({v.get('model')}){old}"


@click.command()
@json_option
@click.pass_obj
def doctor(obj: Any, as_json: bool) -> None:
    """Diagnose the install and the index: the CLI on PATH, the Claude Code plugin and the `claude`
    binary, recent hook runs and their errors, the vector extras and model, disk space, and the index
    itself (schema, integrity, FTS, sources). Works without an index. Exits 1 when a check fails."""
    checks = _install_checks(obj.db, obj.settings) + _index_checks(obj.db)
    failed = [c for c in checks if c["status"] == "fail"]
    if as_json:
        emit_json({"ok": not failed, "checks": checks})
    else:
        tone = {"ok": "green", "warn": "yellow", "fail": "bold red"}
        for ch in checks:
            mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[ch["status"]]
            fix = f" — {ch['fix']}" if ch.get("fix") else ""
            say(styled(mark, tone[ch["status"]]), f"  {ch['check']}: {ch['detail']}{fix}")
    if failed:
        raise click.exceptions.Exit(1)


def _check(check: str, status: str, detail: str, fix: str = "") -> dict[str, Any]:
    return {"check": check, "status": status, "ok": status != "fail", "detail": detail, "fix": fix}


def _install_checks(db: Path, settings: Settings) -> list[dict[str, Any]]:
    from total_recall.cmd_install import PLUGIN_ID, check_path, settings_path

    out: list[dict[str, Any]] = []
    pc = check_path(None)
    if pc["ok"]:
        out.append(_check("CLI on PATH", "ok", str(pc["on_path"])))
    else:
        where = Path(pc["executable"]).parent if pc["executable"] else "the venv's bin directory"
        out.append(
            _check(
                "CLI on PATH",
                "fail",
                f"`total-recall` on PATH is {pc['on_path'] or 'missing'}; the hooks run it",
                f"add {where} to PATH, or `total-recall install --link-bin ~/.local/bin`",
            )
        )
    out.append(_plugin_check(settings_path(settings), PLUGIN_ID))
    claude = shutil.which("claude")
    out.append(
        _check("claude binary", "ok", claude)
        if claude
        else _check("claude binary", "warn", "`claude` not on PATH", "install Claude Code to use the plugin")
    )
    out.append(_hooks_check(db))
    out += _vector_checks(settings)
    out += _vector_store_check(db)
    out.append(_disk_check(db))
    return out


def _plugin_check(settings: Path, plugin_id: str) -> dict[str, Any]:
    import json

    try:
        data = json.loads(settings.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as exc:
        return _check("plugin registered", "fail", f"cannot read {settings}: {exc}", "fix or move that file")
    enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
    if isinstance(enabled, dict) and enabled.get(plugin_id):
        return _check("plugin registered", "ok", f"{plugin_id} enabled in {settings}")
    return _check(
        "plugin registered", "warn", f"{plugin_id} is not enabled in {settings}", "run `total-recall install`"
    )


def _hooks_check(db: Path) -> dict[str, Any]:
    from index.stats import hook_stats
    from lib.paths import state_dir

    h = hook_stats(state_dir(db))
    hooks = h["hooks"]
    if not hooks:
        return _check("hook events", "warn", f"no hook has run yet ({h['events_file']})",
                      "start a Claude Code session after `total-recall install`")  # fmt: skip
    last = max(x["last_ts"] or "" for x in hooks)
    errors = sum(x["errors"] for x in hooks)
    detail = f"{plural(h['fired'], 'run')}, the last {ago(last) or last}; {plural(errors, 'error')}"
    bad = [x for x in hooks if x["last_error"]]
    if bad:
        worst = max(bad, key=lambda x: x["last_ts"] or "")
        return _check("hook events", "warn", f"{detail}; last error ({worst['hook']}): {worst['last_error']}",
                      "see `total-recall metrics health`")  # fmt: skip
    return _check("hook events", "ok", detail)


def _vector_checks(settings: Settings) -> list[dict[str, Any]]:
    from vec.driver import ENABLE_HINT, unavailable_reason
    from vec.embed import model_config, model_on_disk

    reason = unavailable_reason()
    if reason:
        return [_check("vector extras", "warn", f"not installed (optional): {reason}", ENABLE_HINT)]
    cfg = model_config(settings)
    found = model_on_disk(cfg)
    where = cfg.path or "the data dir's models/ (downloaded on first use)"
    if found is False and cfg.path:
        status = _check("embedding model", "fail", f"no model.onnx in {cfg.path}",
                        "fix TOTAL_RECALL_EMBED_MODEL_PATH")  # fmt: skip
    elif found is False:
        status = _check("embedding model", "warn", f"{cfg.name} not downloaded yet",
                        "run `total-recall vec backfill` online, or set TOTAL_RECALL_EMBED_MODEL_PATH")  # fmt: skip
    else:
        status = _check("embedding model", "ok", f"{cfg.name} in {where}")
    return [_check("vector extras", "ok", "sqlite-vec, fastembed and onnx installed"), status]


def _vector_store_check(db: Path) -> list[dict[str, Any]]:
    """A vector store an older total-recall wrote (float32 layout) is searched, but slower: say how to
    move it (no check without a store: vectors are optional)."""
    from index.store import IndexError_, open_reader
    from vec.store import OLD_LAYOUT, UPGRADE, old_layout, read_stamp

    if not db.exists():
        return []
    try:
        conn = open_reader(db)
    except IndexError_:
        return []  # the index checks say what is wrong with it
    try:
        if read_stamp(conn) is None:
            return []
        if old_layout(conn):
            return [_check("vector store", "warn", OLD_LAYOUT, UPGRADE)]
        return [_check("vector store", "ok", "current layout")]
    finally:
        conn.close()


def _disk_check(db: Path) -> dict[str, Any]:
    folder = next((p for p in [db.parent, *db.parents] if p.exists()), Path("/"))
    free = shutil.disk_usage(folder).free
    if free < LOW_DISK:
        return _check(
            "disk space", "fail", f"{size(free)} free at {folder}", "free some space before indexing"
        )
    return _check("disk space", "ok", f"{size(free)} free at {folder}")


def _index_checks(db: Path) -> list[dict[str, Any]]:
    from index.stats import doctor as q_doctor
    from index.store import IndexError_, extractors_state, open_existing_writer

    if not db.exists():
        return [_check("index", "warn", f"no index at {db} yet", "run `total-recall index`")]
    try:
        conn = open_existing_writer(db)
    except IndexError_ as exc:
        return [_check("index", "fail", str(exc), exc.fix)]
    try:
        rows = q_doctor(conn)
        state = extractors_state(conn)
    finally:
        conn.close()
    checks = [_check(c, "ok" if ok else "fail", d) for c, ok, d in rows]
    fix = "" if state["up_to_date"] else REEXTRACT
    return [*checks, _check("extractors", "ok" if not fix else "warn", _made_by(state), fix)]
