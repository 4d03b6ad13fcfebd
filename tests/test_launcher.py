"""The plugin launcher `bin/total-recall` (issue 10 #12): the hooks and the MCP server reach the CLI
through it. It finds the CLI wherever it was installed, and without one it exits 0 for hooks and the
MCP server and tells the user once how to install it. Run with dash, the strictest POSIX sh here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "bin" / "total-recall"
SH = shutil.which("dash") or "/bin/sh"
BARE_PATH = "/usr/bin:/bin"  # no total-recall here


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """A plugin copy without a .venv (as installed from a marketplace)."""
    dest = tmp_path / "plugin" / "bin" / "total-recall"
    dest.parent.mkdir(parents=True)
    shutil.copy2(LAUNCHER, dest)
    return dest


def fake_cli(path: Path, name: str = "fake") -> Path:
    """An executable that says who it is, echoes its arguments and stdin, and exits 3."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{name} $*"\ncat\nexit 3\n')
    path.chmod(0o755)
    return path


def launch(
    launcher: Path, args: list[str], home: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    home.mkdir(parents=True, exist_ok=True)
    base = {"PATH": BARE_PATH, "HOME": str(home), "CLAUDE_PLUGIN_DATA": str(home / "data")}
    return subprocess.run(
        [SH, str(launcher), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        env={**base, **(env or {})},
        cwd=home,
    )


def test_without_the_cli_hooks_exit_0_and_the_user_is_told_once(plugin: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = launch(plugin, ["hook", "session-start"], home, stdin='{"session_id": "s"}')
    assert first.returncode == 0 and first.stderr == ""
    msg = json.loads(first.stdout)["systemMessage"]
    assert "pipx install" in msg and str(plugin.parent.parent) in msg and "uv tool install" in msg
    for event in ("session-start", "user-prompt-submit", "stop", "pre-compact", "post-compact"):
        again = launch(plugin, ["hook", event], home, stdin="{}")
        assert (again.returncode, again.stdout, again.stderr) == (0, "", ""), event
    assert (home / "data" / "launcher-no-cli.shown").exists()


def test_without_the_cli_a_prompt_hook_first_tells_it_and_other_uses_fail_clearly(
    plugin: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    stop = launch(plugin, ["hook", "stop"], home)  # the user would not see it here: keep it for later
    assert (stop.returncode, stop.stdout) == (0, "")
    ups = launch(plugin, ["hook", "user-prompt-submit"], home, env={"CLAUDE_PLUGIN_DATA": ""})
    assert ups.returncode == 0 and "pipx install" in json.loads(ups.stdout)["systemMessage"]
    assert (home / ".local" / "state" / "total-recall" / "launcher-no-cli.shown").exists()
    mcp = launch(plugin, ["mcp"], home)
    assert mcp.returncode == 0 and mcp.stdout == "" and "pipx install" in mcp.stderr
    cli = launch(plugin, ["status"], home)
    assert cli.returncode == 127 and cli.stdout == "" and "pipx install" in cli.stderr


@pytest.mark.parametrize(
    "where", ["env", "checkout_venv", "data_venv", "path", "pipx_bin", "pipx_venv", "uv_tool"]
)
def test_finds_the_installed_cli(where: str, plugin: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env: dict[str, str] = {}
    target = {
        "env": tmp_path / "custom" / "tr",
        "checkout_venv": plugin.parent.parent / ".venv" / "bin" / "total-recall",
        "data_venv": home / "data" / "venv" / "bin" / "total-recall",
        "path": tmp_path / "somebin" / "total-recall",
        "pipx_bin": home / ".local" / "bin" / "total-recall",
        "pipx_venv": home / ".local" / "share" / "pipx" / "venvs" / "total-recall" / "bin" / "total-recall",
        "uv_tool": home / ".local" / "share" / "uv" / "tools" / "total-recall" / "bin" / "total-recall",
    }[where]
    fake_cli(target, where)
    if where == "env":
        env["TOTAL_RECALL_BIN"] = str(target)
    if where == "path":
        env["PATH"] = f"{plugin.parent}:{target.parent}:{BARE_PATH}"  # the plugin's bin/ first, as in Bash
    p = launch(plugin, ["hook", "user-prompt-submit"], home, env, stdin='{"prompt": "x y"}')
    assert p.returncode == 3  # the CLI's own exit code and output, arguments and stdin passed through
    assert p.stdout.splitlines() == [f"{where} hook user-prompt-submit", '{"prompt": "x y"}']


def test_precedence_explicit_then_checkout_then_path(plugin: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    venv = fake_cli(plugin.parent.parent / ".venv" / "bin" / "total-recall", "venv")
    on_path = fake_cli(tmp_path / "somebin" / "total-recall", "path")
    env = {"PATH": f"{on_path.parent}:{BARE_PATH}"}
    assert launch(plugin, ["x"], home, env).stdout.startswith("venv x")
    explicit = fake_cli(tmp_path / "explicit", "explicit")
    assert launch(plugin, ["x"], home, {**env, "TOTAL_RECALL_BIN": str(explicit)}).stdout.startswith(
        "explicit x"
    )
    venv.unlink()
    assert launch(plugin, ["x"], home, env).stdout.startswith("path x")


def test_never_runs_itself(plugin: Path, tmp_path: Path) -> None:
    """Claude Code puts the plugin's bin/ on the Bash tool's PATH, and a user may link the launcher."""
    home = tmp_path / "home"
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "total-recall").symlink_to(plugin)
    p = launch(plugin, ["status"], home, {"PATH": f"{plugin.parent}:{link_dir}:{BARE_PATH}"})
    assert p.returncode == 127 and "pipx install" in p.stderr


def test_plugin_files_run_the_launcher() -> None:
    from hooks.handlers import HANDLERS

    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    wired = {}
    for event, groups in hooks.items():
        for group in groups:
            for h in group["hooks"]:
                prefix = 'sh "${CLAUDE_PLUGIN_ROOT}/bin/total-recall" hook '
                assert h["command"].startswith(prefix), h["command"]
                wired[h["command"][len(prefix) :]] = event
    assert wired == {name: ev for name, (_, ev) in HANDLERS.items()}
    mcp = json.loads((ROOT / ".mcp.json").read_text())["mcpServers"]["total-recall"]
    assert [mcp["command"], *mcp["args"]] == ["sh", "${CLAUDE_PLUGIN_ROOT}/bin/total-recall", "mcp"]
    assert os.access(LAUNCHER, os.X_OK)


def test_launcher_runs_this_checkouts_cli(tmp_path: Path) -> None:
    """From the checkout (`--plugin-dir`), the launcher finds .venv and the hook answers."""
    if not (ROOT / ".venv" / "bin" / "total-recall").exists():
        pytest.skip("no .venv in this checkout (scripts/test.sh creates it)")
    p = launch(
        LAUNCHER,
        ["hook", "stop"],
        tmp_path,
        {"TOTAL_RECALL_HOME": str(tmp_path / "tr")},
        stdin='{"session_id": "s"}',
    )
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    events = (tmp_path / "tr" / "events.jsonl").read_text().splitlines()
    assert json.loads(events[-1])["hook"] == "stop"
