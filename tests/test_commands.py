"""Slash commands: frontmatter parses, every CLI call exists with those flags, every MCP tool named
exists, and the plugin still validates with the real Claude Code CLI."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest

from total_recall.cli import cli

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ROOT / "commands"
EXPECTED = {
    "recall",
    "recall-status",
    "recall-inspect",
    "recall-rebuild",
    "recall-promote",
    "recall-metrics",
    "recall-cost",
    "recall-topics",
    "recall-health",
    "recall-check-banned",
    "recall-corrections",
    "recall-decisions",
    "recall-escalation",
    "recall-goal",
    "recall-operator-context",
    "summarize",
    "synthesize",
    "recall-memory",
}
INJECT = re.compile(r"!`([^`]+)`")
TOOL = re.compile(r"MCP tools? `([a-z_]+)`(?: \(.*?\))?(?:(?:,| or| and) `([a-z_]+)`)*")
SAMPLE = {"$ARGUMENTS": "retry logic", "$kind": "ban", "$text": "force push"}


def frontmatter(path: Path) -> tuple[dict[str, str], str]:
    text = path.read_text()
    assert text.startswith("---\n"), path
    head, body = text[4:].split("\n---\n", 1)
    meta = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        assert sep and key.strip() and not key.startswith(" "), f"{path}: bad frontmatter line {line!r}"
        meta[key.strip()] = value.strip()
    return meta, body


def sample_arguments(hint: str) -> str:
    """What a user would type for this argument-hint: flags from `[--by day|week]`, else a topic."""
    if hint.lstrip("[").startswith("--"):
        return " ".join(re.sub(r"\|[^\s\]]+", "", part) for part in re.findall(r"--[^\]]+", hint))
    return SAMPLE["$ARGUMENTS"]


def cli_calls(body: str, hint: str = "") -> list[list[str]]:
    calls = []
    for cmd in INJECT.findall(body):
        cmd = cmd.split("||")[0].split("2>&1")[0].strip()
        cmd = cmd.replace("$ARGUMENTS", sample_arguments(hint))
        for k, v in SAMPLE.items():
            cmd = cmd.replace(k, v)
        args = shlex.split(cmd)
        assert args[0] == "total-recall", cmd
        calls.append(args[1:])
    return calls


def check_parses(args: list[str]) -> None:
    """Resolve the command chain and parse its options without running anything."""

    def remaining(c: click.Context) -> list[str]:
        # click >= 8.2 keeps a group's unparsed tokens (subcommand first) in _protected_args + args
        return [*getattr(c, "_protected_args", []), *c.args]

    ctx = cli.make_context("total-recall", list(args), resilient_parsing=False)
    group: click.Command = cli
    rest = remaining(ctx)
    while isinstance(group, click.Group) and rest:
        name, cmd, rest = group.resolve_command(ctx, rest)
        assert cmd is not None, args
        ctx = cmd.make_context(name or "", rest, parent=ctx)
        group, rest = cmd, remaining(ctx) if isinstance(cmd, click.Group) else []


def skill_names() -> set[str]:
    return {frontmatter(p)[0].get("name") or p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md")}


def readme_slash_names() -> set[str]:
    """Every slash command the README tells the user to type for this plugin (`/x` or `/plugin:x`)."""
    text = (ROOT / "README.md").read_text()
    return set(
        re.findall(r"(?<![\w./<>-])/((?:[a-z-]+:)?(?:recall|speak|summarize|synthesize)[a-z-]*)", text)
    )


def test_all_commands_present() -> None:
    assert {p.stem for p in COMMANDS.glob("*.md")} == EXPECTED


def test_no_command_shares_a_name_with_a_skill() -> None:
    """A skill wins over a command of the same name: one of them would be unreachable."""
    assert skill_names() and not skill_names() & EXPECTED


def test_readme_gives_every_command_its_namespace() -> None:
    assert readme_slash_names() == {f"total-recall:{n}" for n in EXPECTED | skill_names()}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_command_frontmatter_and_cli_calls(name: str) -> None:
    meta, body = frontmatter(COMMANDS / f"{name}.md")
    assert meta.get("description"), name
    calls = cli_calls(body, meta.get("argument-hint", ""))
    tools = [t for m in TOOL.finditer(body) for t in m.groups() if t]
    assert calls or tools, f"{name} calls neither the CLI nor an MCP tool"
    if calls:
        assert "Bash(total-recall" in meta.get("allowed-tools", ""), name
    for args in calls:
        check_parses(args)
    if "$ARGUMENTS" in body or "$kind" in body:
        assert "argument-hint" in meta, name


def test_check_parses_rejects_unknown_flags() -> None:
    with pytest.raises(click.UsageError):
        check_parses(["recall", "x", "--no-such-flag"])
    with pytest.raises(click.UsageError):
        check_parses(["metrics", "cost", "--by", "century"])


def test_mcp_tools_named_in_commands_exist() -> None:
    from mcp_server.server import build_server

    server, _ = build_server("/nonexistent/index.db", "/tmp")
    names = {t.name for t in asyncio.run(server.list_tools())}
    named = {t for p in COMMANDS.glob("*.md") for m in TOOL.finditer(p.read_text()) for t in m.groups() if t}
    assert named and named <= names, named - names


def test_skill_calls_exist() -> None:
    meta, body = frontmatter(ROOT / "skills" / "speak-like-operator" / "SKILL.md")
    assert meta["name"] == "speak-like-operator" and meta["description"]
    for args in cli_calls(body):
        check_parses(args)


def test_plugin_validates_strict(tmp_path: Path) -> None:
    claude = ROOT / ".tools" / "node_modules" / ".bin" / "claude"
    if not claude.exists():
        pytest.skip("Claude Code CLI not installed (scripts/node-tools.sh installs it)")
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    out = subprocess.run(
        [str(claude), "plugin", "validate", "--strict", "--json", str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    provides = json.loads(out.stdout)["provides"]
    commands, skills = set(provides["commands"]), set(provides["skills"])
    assert commands and skills and not commands & skills  # Claude Code's own names: none listed twice
    assert commands | skills == readme_slash_names()
