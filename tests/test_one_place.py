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
    from extractors import decisions
    from index.retrieval import rule_match
    from index.stats import topic_words
    from lib.text import STOPWORDS

    for module in (escalation, policy, topic_words, rule_match, decisions):
        assert module._STOP >= STOPWORDS, module.__name__


def _environment_reads(path: Path) -> list[int]:
    """Lines of `path` that read the process environment (os.environ / os.getenv / environ imports)."""
    names = ("environ", "environb", "getenv")
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        read = isinstance(node, ast.Attribute) and node.attr in names
        imported = isinstance(node, ast.ImportFrom) and any(a.name in names for a in node.names)
        if read or imported:
            out.append(node.lineno)
    return out


def test_the_environment_is_read_in_one_place() -> None:
    """Settings read the environment once (lib/settings.py) and are passed down: no module below an
    entry point looks at os.environ behind its caller's back (issue 12)."""
    reads = {
        str(path.relative_to(ROOT)): lines
        for pkg in (*PACKAGES, "extractors")
        for path in sorted((ROOT / pkg).rglob("*.py"))
        if (lines := _environment_reads(path))
    }
    assert reads == {"lib/settings.py": reads.get("lib/settings.py", [])} and reads["lib/settings.py"]


def test_settings_are_a_snapshot_injected_by_tests() -> None:
    from lib.settings import Settings

    env = {
        "TOTAL_RECALL_HOME": "/h",
        "TOTAL_RECALL_VECTORS": "0",
        "TOTAL_RECALL_LLM_URL": "http://127.0.0.1:9/",
    }
    s = Settings.from_env(env)
    env["TOTAL_RECALL_HOME"] = "/changed"  # later changes to the source do not leak in
    assert s.db_path() == Path("/h/index.db") and s.data_dir() == Path("/h")
    assert (s.vectors, s.llm_url, s.llm_model) == ("off", "http://127.0.0.1:9", None)
    assert Settings.from_env({"TOTAL_RECALL_VECTORS": "1"}).vectors == "on"
    assert Settings.from_env({}).vectors == "auto" and Settings.from_env({}).embed_model is None
