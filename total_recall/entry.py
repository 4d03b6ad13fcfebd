"""Console entry point. Hooks run on every prompt, so `hook` is dispatched before click is imported."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook":
        from hooks.runner import run_hook

        sys.exit(run_hook(args[1] if len(args) > 1 else ""))
    from total_recall.cli import cli

    cli.main(args=args, prog_name="total-recall")


if __name__ == "__main__":
    main()
