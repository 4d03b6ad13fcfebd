"""`completion` (shell completion scripts) and the examples every command's `--help` ends with (gh style).

A new command gets its examples by an entry in EXAMPLES (its path, e.g. "metrics cost"), or its own
`epilog`; `tests/test_cli_ux.py` checks that every command has them.
"""

from __future__ import annotations

import click

EXAMPLES: dict[str, list[str]] = {
    "": ["total-recall index", "total-recall search sqlite lock", "total-recall sessions | fzf"],
    "adaptive": ["total-recall adaptive", "total-recall adaptive --json"],
    "check-banned": [
        "total-recall check-banned -- git push --force",
        "total-recall check-banned --scope global moment.js || echo 'banned before'",
    ],
    "completion": [
        'eval "$(total-recall completion bash)"   # in ~/.bashrc',
        'eval "$(total-recall completion zsh)"    # in ~/.zshrc',
        "total-recall completion fish > ~/.config/fish/completions/total-recall.fish",
    ],
    "consolidate": ["total-recall consolidate", "total-recall consolidate --json"],
    "context": ["total-recall context", "total-recall context --cwd ~/src/api --budget 3000"],
    "demo": ["total-recall demo"],
    "doctor": ["total-recall doctor", "total-recall doctor --json | jq '.checks[] | select(.ok | not)'"],
    "dump": [
        "total-recall dump --kind decision --format markdown",
        "total-recall dump --source messages --out messages.jsonl",
    ],
    "eval": ["total-recall eval retrieval --gold gold.jsonl"],
    "eval extractors": ["total-recall eval extractors --labels labels.jsonl --provenance PROVENANCE.tsv"],
    "eval retrieval": [
        "total-recall eval retrieval --gold gold.jsonl",
        "total-recall eval retrieval --gold gold.jsonl --mode both   # needs `total-recall vec backfill` first",
    ],
    "export": [
        "total-recall export 1a2b3c4d > session.md",
        "total-recall export 1a2b3c4d --format jsonl --tools",
    ],
    "forget": ["total-recall forget 1a2b3c4d", "total-recall forget --project old-client --yes"],
    "index": ["total-recall index", "total-recall index --projects-root ~/.claude/projects --full"],
    "inspect": ["total-recall inspect 1a2b3c4d", "total-recall inspect 1a2b3c4d --json | jq .tools"],
    "install": ["total-recall install", "total-recall install --link-bin ~/.local/bin"],
    "mcp": ["total-recall mcp"],
    "memories": ["total-recall memories list --mined"],
    "memories list": ["total-recall memories list", "total-recall memories list --mined --json"],
    "metrics": ["total-recall metrics summary --since 1mo", "total-recall metrics cost --by week"],
    "metrics cost": [
        "total-recall metrics cost --since 7d",
        "total-recall metrics cost --by month --group project --timezone UTC",
    ],
    "metrics health": ["total-recall metrics health", "total-recall metrics health --no-scan --json"],
    "metrics rates": ["total-recall metrics rates", "total-recall metrics rates --rate my-model=3/15"],
    "metrics sessions": [
        "total-recall metrics sessions --by cost -n 5",
        "total-recall metrics sessions --since yesterday",
    ],
    "metrics summary": ["total-recall metrics summary", "total-recall metrics summary --since 3mo --json"],
    "metrics topics": ["total-recall metrics topics --since 2w"],
    "profile": ["total-recall profile voice", "total-recall profile workflow --json"],
    "promote": [
        "total-recall promote --as ban never force-push to main",
        "total-recall promote --as standing_decision --id 123",
    ],
    "rebuild": ["total-recall rebuild", "total-recall rebuild --yes   # in a script"],
    "recall": ["total-recall recall auth tokens", "total-recall recall --kind ban,correction --since 1mo"],
    "refine": [
        "total-recall refine --model qwen2.5:7b --dry-run",
        "total-recall refine --model qwen2.5:7b --limit 50",
    ],
    "search": [
        "total-recall search sqlite busy timeout",
        "total-recall search --sessions --since 2w migration",
        "total-recall search --project api --format tsv 'rate limit' | cut -f3",
    ],
    "sessions": [
        "total-recall sessions",
        "total-recall sessions --project api --since 1mo login",
        "total-recall inspect $(total-recall sessions | fzf | cut -f5)",
    ],
    "sources": ["total-recall sources", "total-recall sources --json"],
    "status": ["total-recall status", "total-recall status --json | jq .sessions"],
    "tail": ["total-recall tail", "total-recall tail --interval 30"],
    "uninstall": ["total-recall uninstall", "total-recall uninstall --purge --yes"],
    "unpromote": ["total-recall unpromote 42"],
    "vec": ["total-recall vec backfill", "total-recall vec search 'flaky test'"],
    "vec backfill": ["total-recall vec backfill"],
    "vec rebuild": ["total-recall vec rebuild"],
    "vec search": [
        "total-recall vec search how did we fix the login loop",
        "total-recall vec search --kind session auth",
    ],
    "vec status": ["total-recall vec status", "total-recall vec status --json"],
    "version": ["total-recall version", "total-recall --version"],
    "ui": ["total-recall ui --open", "total-recall ui --port 9000"],
    "report": [
        "total-recall report --since 1w",
        "total-recall report --since 1mo --by week --html --out usage.html",
    ],
    "server": [
        "total-recall server migrate --dsn postgresql://tr@db/tr",
        "total-recall server run --port 8080",
    ],
    "server migrate": ["total-recall server migrate --dsn postgresql://tr@db/tr"],
    "server user": ["total-recall server user add alice < alice.password"],
    "server user add": ["total-recall server user add alice --dsn postgresql://tr@db/tr < alice.password"],
    "server project": ["total-recall server project add github.com/acme/api --owner alice"],
    "server project add": ["total-recall server project add github.com/acme/api --owner alice"],
    "server member": ["total-recall server member add github.com/acme/api bob --role reader"],
    "server member add": ["total-recall server member add github.com/acme/api bob --role member"],
    "server token": [
        "total-recall server token create --user alice",
        "total-recall server token list --user alice",
    ],
    "server token create": ["total-recall server token create --user alice"],
    "server token revoke": ["total-recall server token revoke 12"],
    "server token list": ["total-recall server token list --user alice"],
    "server run": [
        "TOTAL_RECALL_SERVER_SECRET=$(openssl rand -hex 32) total-recall server run --dsn postgresql://tr@db/tr",
        "total-recall server run --host 127.0.0.1 --port 8080 --secret-file /etc/total-recall/secret",
    ],
    "team": ["total-recall team login https://memory.example.com", "total-recall team push --review"],
    "team login": ["total-recall team login https://memory.example.com --user alice"],
    "team enable": ["total-recall team enable", "total-recall team enable --cwd ~/src/api"],
    "team disable": ["total-recall team disable"],
    "team push": ["total-recall team push --review", "total-recall team push --dry-run --json"],
    "team pull": ["total-recall team pull", "total-recall team pull --query retries --json"],
    "team status": ["total-recall team status", "total-recall team status --json"],
    "team sync": ["total-recall team sync"],
    "digest": ["total-recall digest 1a2b3c4d", "total-recall digest 1a2b3c4d --json | jq .next_steps"],
    "memory": ["total-recall memory write", "total-recall memory import"],
    "memory write": [
        "total-recall memory write",
        "total-recall memory write --project api --dir docs/_memory",
    ],
    "memory import": ["total-recall memory import", "total-recall memory import --file .claude/CLAUDE.md"],
    "bans": ["total-recall bans list", "total-recall bans enforce 3f2a9c1e"],
    "bans list": ["total-recall bans list", "total-recall bans list --all --json"],
    "bans enforce": ["total-recall bans enforce 3f2a9c1e   # PreToolUse denies the call from now on"],
    "bans relax": ["total-recall bans relax 3f2a9c1e     # back to a warning"],
    "why": ["total-recall why a1b2c3d4", "total-recall why a1b2c3d4 --json"],
    "feedback": ["total-recall feedback a1b2c3d4 wrong", "total-recall feedback a1b2c3d4 helpful"],
    "memory show": ["total-recall memory show", "total-recall memory show --project api | less"],
}

SHELLS = ("bash", "zsh", "fish")


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish (commands, options, choices). Load it
    from your shell's start-up file, as the examples show."""
    from click.shell_completion import get_completion_class

    comp = get_completion_class(shell)
    if comp is None:  # every name of SHELLS is one click ships
        raise click.BadParameter(shell)
    root = click.get_current_context().find_root().command
    click.echo(comp(root, {}, "total-recall", "_TOTAL_RECALL_COMPLETE").source())


def _epilog(lines: list[str]) -> str:
    """Examples in `--help`, kept as written (click rewraps paragraphs unless told not to with \\b)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  $ {line}" for line in lines)


def add_examples(group: click.Group, path: str = "") -> None:
    """Give every command without an epilog its EXAMPLES entry."""
    if not group.epilog and path in EXAMPLES:
        group.epilog = _epilog(EXAMPLES[path])
    for name, cmd in group.commands.items():
        sub = f"{path} {name}".strip()
        if isinstance(cmd, click.Group):
            add_examples(cmd, sub)
        elif not cmd.epilog and sub in EXAMPLES:
            cmd.epilog = _epilog(EXAMPLES[sub])


def register(cli: click.Group) -> None:
    """`completion`, then the examples of every command registered so far."""
    cli.add_command(completion)
    add_examples(cli)
