"""`install`, `uninstall` (H8) and `adaptive` (D2).

`install` stages a clean copy of the plugin (manifests, hooks.json, .mcp.json, commands, skills —
never the venv or caches) under the data dir, registers it with Claude Code as a local marketplace
and installs the plugin (`claude plugin install total-recall --marketplace DIR`), or, without the
`claude` CLI, writes the same entries into settings.json. By default it also sets
`env.TOTAL_RECALL_DB` in Claude Code's user settings so the hooks and the MCP server use the same
index as this CLI (otherwise they would use `$CLAUDE_PLUGIN_DATA/index.db`). The hooks and the MCP
server run the plugin's launcher `bin/total-recall`, which finds this CLI (PATH, pipx, uv tool, a
venv); install checks that it resolves from PATH, and can link it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from lib.paths import state_dir
from lib.settings import Settings
from total_recall.options import json_option, yes_option
from total_recall.output import confirm, emit_json, fail
from total_recall.render import say

PLUGIN = "total-recall"
MARKETPLACE = "total-recall"
PLUGIN_ID = f"{PLUGIN}@{MARKETPLACE}"
STAGE_FILES = (
    ".claude-plugin/plugin.json",
    ".claude-plugin/marketplace.json",
    "hooks/hooks.json",
    ".mcp.json",
    "bin/total-recall",
)
STAGE_DIRS = ("commands", "skills")
CLI_TIMEOUT = 120


def source_root() -> Path | None:
    """The checkout holding the plugin manifests (this package's parent directory)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / ".claude-plugin" / "plugin.json").is_file() else None


def stage(src: Path, dest: Path) -> Path:
    """Copy only the plugin's files into `dest` (replacing an older copy)."""
    missing = [f for f in STAGE_FILES if not (src / f).is_file()]
    if missing:
        raise click.ClickException(
            f"{src} is not a total-recall plugin checkout (missing {', '.join(missing)})"
        )
    if dest.exists():
        shutil.rmtree(dest)
    for f in STAGE_FILES:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / f, dest / f)
    for d in STAGE_DIRS:
        if (src / d).is_dir():
            shutil.copytree(src / d, dest / d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def settings_path(settings: Settings) -> Path:
    """Claude Code's user settings file (in CLAUDE_CONFIG_DIR when set)."""
    return (settings.claude_config_dir() or Path.home() / ".claude") / "settings.json"


def _load_settings(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {path} ({exc}); fix or move it, then retry") from exc
    if not isinstance(data, dict):
        raise click.ClickException(f"{path} is not a JSON object; fix or move it, then retry")
    return data


def _save_settings(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".total-recall.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def edit_settings(
    settings: Settings,
    *,
    db: Path | None = None,
    remove_db: Path | None = None,
    marketplace: Path | None = None,
    remove_plugin: bool = False,
) -> dict[str, Any]:
    """Set/unset env.TOTAL_RECALL_DB and (without the claude CLI) the marketplace + enabled plugin."""
    path = settings_path(settings)
    data = _load_settings(path)
    env: dict[str, Any] = data["env"] if isinstance(data.get("env"), dict) else {}
    if db is not None:
        env["TOTAL_RECALL_DB"] = str(db)
    if remove_db is not None and env.get("TOTAL_RECALL_DB") == str(remove_db):
        env.pop("TOTAL_RECALL_DB")
    if env:
        data["env"] = env
    else:
        data.pop("env", None)
    if marketplace is not None:
        data.setdefault("extraKnownMarketplaces", {})[MARKETPLACE] = {
            "source": {"source": "directory", "path": str(marketplace)}
        }
        data.setdefault("enabledPlugins", {})[PLUGIN_ID] = True
    if remove_plugin:
        for key, name in (("extraKnownMarketplaces", MARKETPLACE), ("enabledPlugins", PLUGIN_ID)):
            if isinstance(data.get(key), dict):
                data[key].pop(name, None)
                if not data[key]:
                    data.pop(key)
    _save_settings(path, data)
    return data


def _claude(bin_: str, *args: str) -> tuple[int, str]:
    try:
        p = subprocess.run(
            [bin_, *args], capture_output=True, text=True, timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    return p.returncode, (p.stdout + p.stderr).strip()


def this_executable() -> Path | None:
    """The `total-recall` script of this installation."""
    cand = [Path(sys.argv[0])] if Path(sys.argv[0]).name == "total-recall" else []
    cand.append(Path(sys.executable).parent / "total-recall")
    for c in cand:
        if c.is_file() and os.access(c, os.X_OK):
            return c.resolve()
    return None


def check_path(link_bin: Path | None) -> dict[str, Any]:
    """Does `total-recall` on PATH resolve to this installation? Optionally link it into `link_bin`."""
    mine = this_executable()
    found = shutil.which("total-recall")
    out: dict[str, Any] = {"executable": str(mine) if mine else None, "on_path": found}
    if link_bin is not None and mine is not None and (found is None or Path(found).resolve() != mine):
        link_bin.mkdir(parents=True, exist_ok=True)
        target = link_bin / "total-recall"
        if target.is_symlink() or target.exists():
            target.unlink()
        target.symlink_to(mine)
        out["linked"] = str(target)
        found = shutil.which("total-recall")
        out["on_path"] = found
    out["ok"] = found is not None and (mine is None or Path(found).resolve() == mine)
    return out


@click.command()
@click.option("--claude", "claude_bin", help="Path of the claude CLI (default: `claude` on PATH).")
@click.option(
    "--source",
    type=click.Path(file_okay=False, path_type=Path),
    help="Plugin checkout to install from (default: this installation's checkout).",
)
@click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user", show_default=True)
@click.option(
    "--shared-index/--plugin-index",
    default=True,
    show_default=True,
    help="Hooks and MCP use this CLI's index (env.TOTAL_RECALL_DB in Claude Code settings), "
    "or their own under $CLAUDE_PLUGIN_DATA.",
)
@click.option(
    "--link-bin",
    type=click.Path(file_okay=False, path_type=Path),
    help="Symlink `total-recall` into this directory (e.g. ~/.local/bin) if PATH lacks it.",
)
@json_option
@click.pass_obj
def install(
    obj: Any,
    claude_bin: str | None,
    source: Path | None,
    scope: str,
    shared_index: bool,
    link_bin: Path | None,
    as_json: bool,
) -> None:
    """Install the Claude Code plugin: hooks, MCP server, slash commands and skills."""
    src = source or source_root()
    if src is None:
        fail(
            "cannot find the plugin files (.claude-plugin/plugin.json)",
            "pass --source DIR pointing at a total-recall checkout",
        )
        return
    dest = stage(src.resolve(), obj.settings.data_dir() / "claude-plugin")
    result: dict[str, Any] = {"plugin": PLUGIN_ID, "staged": str(dest), "scope": scope}
    bin_ = claude_bin or shutil.which("claude")
    if bin_:
        code, text = _claude(
            bin_, "plugin", "install", PLUGIN, "--marketplace", str(dest), "-s", scope, "--json"
        )
        result.update(method="claude-cli", claude=bin_, claude_output=text[-2000:])
        if code != 0:
            fail(
                f"`claude plugin install` failed ({code}): {text[-300:]}",
                "check the claude CLI works (`claude --version`), or run without it: --claude /nonexistent",
            )
    else:
        edit_settings(obj.settings, marketplace=dest)
        result.update(method="settings", settings=str(settings_path(obj.settings)))
    if shared_index:
        edit_settings(obj.settings, db=obj.db.resolve())
        result["index"] = str(obj.db.resolve())
    else:
        result["index"] = "$CLAUDE_PLUGIN_DATA/index.db"
    result["path_check"] = check_path(link_bin)
    if as_json:
        emit_json(result)
        return
    say(f"installed {PLUGIN_ID} ({result['method']}, scope {scope}) from {dest}")
    say(f"index used by hooks and MCP: {result['index']}")
    pc = result["path_check"]
    if not pc["ok"]:
        where = Path(pc["executable"]).parent if pc["executable"] else "the venv's bin directory"
        click.echo(
            f"warning: `total-recall` is not on PATH as this installation; hooks will not run. "
            f"Add {where} to PATH, or re-run with --link-bin ~/.local/bin",
            err=True,
        )
    if not obj.db.exists():
        say("no index yet: the first session builds it in the background (or run `total-recall index`)")


@click.command()
@click.option("--claude", "claude_bin", help="Path of the claude CLI (default: `claude` on PATH).")
@click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user", show_default=True)
@click.option("--purge", is_flag=True, help="Also delete the plugin's data directory ($CLAUDE_PLUGIN_DATA).")
@yes_option
@json_option
@click.pass_obj
def uninstall(obj: Any, claude_bin: str | None, scope: str, purge: bool, yes: bool, as_json: bool) -> None:
    """Remove the Claude Code plugin (the index and its transcripts are left alone)."""
    if purge:
        confirm("Delete the plugin's data directory ($CLAUDE_PLUGIN_DATA) too?", yes)
    result: dict[str, Any] = {"plugin": PLUGIN_ID}
    bin_ = claude_bin or shutil.which("claude")
    if bin_:
        args = ["plugin", "uninstall", PLUGIN_ID, "-s", scope, "--json"] + ([] if purge else ["--keep-data"])
        code, text = _claude(bin_, *args)
        code2, text2 = _claude(bin_, "plugin", "marketplace", "remove", MARKETPLACE, "--json")
        result.update(
            method="claude-cli",
            uninstall_rc=code,
            marketplace_rc=code2,
            claude_output=(text + "\n" + text2)[-2000:],
        )
    else:
        result["method"] = "settings"
    edit_settings(obj.settings, remove_db=obj.db.resolve(), remove_plugin=True)
    staged = obj.settings.data_dir() / "claude-plugin"
    if staged.is_dir():
        shutil.rmtree(staged, ignore_errors=True)
    result["removed_stage"] = str(staged)
    if as_json:
        emit_json(result)
        return
    say(f"uninstalled {PLUGIN_ID}; the index at {obj.db} is kept (delete it yourself if you want)")


@click.command()
@json_option
@click.pass_obj
def adaptive(obj: Any, as_json: bool) -> None:
    """Precision of the prompt-recall policy, measured from the hooks' recorded outcomes."""
    from hooks.adaptive import report
    from index.store import wrong_items
    from lib.events import read_events

    rep = report(read_events(state_dir(obj.db)))
    rep["thresholds_raised"] = wrong_items(obj.db).floors  # your verdicts calibrate the injection cuts
    if as_json:
        emit_json(rep)
        return

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0%}"

    say(
        f"prompts seen: {rep['prompts']}, recall injected on {rep['fired']} ({pct(rep['fire_rate'])}), "
        f"avg {rep['avg_injected_chars']} chars"
    )
    say(
        f"precision: {pct(rep['precision'])} of {rep['judged_injections']} judged injections were useful "
        "(next prompt neither a correction nor a repeat)"
    )
    say(f"misses: {pct(rep['miss_rate'])} of {rep['judged_skips']} skipped prompts were followed by one")
    if rep["thresholds_raised"]:
        say(
            "injection thresholds raised by your feedback: "
            + ", ".join(f"{k} ≥ {v:.2f}" for k, v in sorted(rep["thresholds_raised"].items()))
        )
    for reason, r in rep["per_trigger"].items():
        say(f"  {reason:28s} {r['useful']}/{r['judged']} useful ({pct(r['precision'])})")
    fb = rep["feedback"]
    if fb["wrong"] or fb["helpful"]:
        say(f"your feedback: {fb['helpful']} helpful, {fb['wrong']} wrong ({pct(fb['precision'])} helpful)")
    if rep["tool_calls"]:
        say("tool calls checked for bans: " + ", ".join(f"{k} {v}" for k, v in rep["tool_calls"].items()))
    for hook, h in rep["hooks"].items():
        say(
            f"hook {hook:20s} runs {h['runs']:6d}  errors {h['errors']:4d}  p50 {h['p50_ms']} ms  "
            f"p95 {h['p95_ms']} ms"
        )
    for line in rep["advice"]:
        say(f"advice: {line}")


def register(cli: click.Group) -> None:
    cli.add_command(install)
    cli.add_command(uninstall)
    cli.add_command(adaptive)
