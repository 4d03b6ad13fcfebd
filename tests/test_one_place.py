"""One place for each thing (issue 12): shared constants, the clip/collapse helpers and the event
reader are defined once outside `extractors/` (whose own copies are to go next), and everyone else
imports them."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lib", "index", "hooks", "mcp_server", "total_recall", "detector", "vec")
CONSTANTS = {
    "PAUSE_AFTER_DAYS",
    "ABANDON_AFTER_DAYS",
    "GOAL_STATES",
    "EDIT_TOOLS",
    "CORRECTION_KINDS",
    "STOPWORDS",
}
FUNCTIONS = {"clip", "_clip", "collapse", "_collapse", "read_events"}


def _definitions() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.parse(path.read_text()).body:
                names: list[str] = []
                if isinstance(node, ast.Assign):
                    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names = [node.target.id]
                elif isinstance(node, ast.FunctionDef):
                    names = [node.name]
                for n in names:
                    if n in CONSTANTS | FUNCTIONS:
                        where[n].append(str(path.relative_to(ROOT)))
    return where


def test_shared_names_are_defined_once() -> None:
    twice = {n: files for n, files in _definitions().items() if len(files) > 1}
    assert not twice
    defs = _definitions()
    assert defs["clip"] == ["lib/text.py"] and defs["read_events"] == ["lib/events.py"]


def test_stopword_lists_extend_the_shared_one() -> None:
    """Every module's own stop set holds the shared function words, plus the noise of its domain."""
    from detector import escalation, policy
    from index.retrieval import rule_match
    from index.stats import metrics
    from lib.text import STOPWORDS

    for module in (escalation, policy, metrics, rule_match):
        assert module._STOP >= STOPWORDS, module.__name__
