"""Failed attempts told apart from bug reports and progress (issue 11, failed_attempt class): what the
assistant says about its own change falling short, and what the operator reports right after a change
the assistant said should work. Small transcripts the tests write, read as the indexer reads them."""

from __future__ import annotations

from pathlib import Path

from test_extract_families import _kinds, _prompts, _session

from extractors.assistant_voice import failed_attempt, reports_change
from extractors.model import ToolEvent, Utterance
from extractors.patterns import Hit, make_view
from extractors.pipeline import extract

CHANGED = "I've switched the loader to read the config lazily. This should work now - try running it again."
ERROR = "Loading failed for the module /app.js: blocked because of a disallowed MIME type (text/html)."


def _after_change(tmp_path: Path, prompts: list[str], name: str, reply: str = CHANGED) -> dict[str, set[str]]:
    """Kinds extracted from each prompt, each answering the assistant's ``reply``."""
    _session(tmp_path, [(reply, p) for p in prompts], name)
    return {text: _kinds(found) for text, found in _prompts(tmp_path).items()}


def _attempt(text: str, errors: int = 0) -> list[Hit]:
    """The heuristics' verdict on an assistant text (the class model then scores what they accept)."""
    return failed_attempt(make_view(text, None, human=False), errors, "exit 1" if errors else "")


def test_the_assistants_own_change_falling_short_is_a_failed_attempt() -> None:
    for text in (
        "The review is done - it found two real bugs in my own fixes, and the rewrite itself is solid.",
        "You're right, my colour nudge was too timid against the lighting. Doing both, harder this time.",
        "Good catch! That tag only works on the main site. Let me revert the tag and detect the context instead.",
        "The hook flagged the workflow files as advisory. Let me retry.",
        "Both the database and the cache are refusing connections: the API can't reach them.",
    ):
        assert _attempt(text), text
    # And the pipeline keeps it (the class model agrees).
    u = Utterance(
        uuid="a-1",
        session_id="s-1",
        role="assistant",
        text="Good catch! That tag only works on the main site. Let me revert the tag and detect the context.",
        prev_user_text="the assets still do not load",
        recent_tools=[ToolEvent("Bash", "npm run build", is_error=True, result_head="exit 1")],
    )
    assert "failed_attempt" in {e.kind for e in extract(u)}


def test_a_report_that_opens_with_success_is_progress() -> None:
    for text in (
        "Excellent! We've fixed all the parser tests. Only one test is still failing: test_dates. Let me look.",
        "**The network is fully operational!** The firewall rule was blocking local DNS; I disabled it.",
    ):
        assert not _attempt(text, errors=1), text


def test_a_failure_right_after_the_assistants_change_is_that_attempt_failing(tmp_path: Path) -> None:
    reports = [
        ERROR,
        "the prompt no longer shows up at all",
        "hmm, I still can't get past the login screen",
    ]
    got = _after_change(tmp_path, reports, "after-change")
    for r in reports:
        assert "failed_attempt" in got[r], r


def test_pushback_without_any_failure_is_no_failed_attempt(tmp_path: Path) -> None:
    # The result is not as asked, but nothing failed or was given up: a correction at most.
    config = "\n".join(
        f'    "segment_{i}": {{"style": "powerline", "foreground": "p:white"}},' for i in range(12)
    )
    pushback = (
        "The gradient colouring works, but it doesn't seem to correctly colour the powerline start symbol. "
        "The end symbol is correct, but the starting symbol is not right.\n\n{\n" + config + "\n}"
    )
    assert "failed_attempt" not in _after_change(tmp_path, [pushback], "pushback")[pushback]


def test_the_same_failure_counts_as_an_attempt_only_after_a_change(tmp_path: Path) -> None:
    failure = "the export failed with a timeout"
    described = "The exporter reads every table eagerly; the parser caches it per file."
    assert "failed_attempt" in _after_change(tmp_path / "after", [failure], "after")[failure]
    # Reported after a description, not after a change the assistant made: a bug report.
    assert "failed_attempt" not in _after_change(tmp_path / "before", [failure], "before", described)[failure]


def test_what_counts_as_the_assistant_reporting_a_change_of_its_own() -> None:
    for prev in (
        "Perfect! I've switched the submodule from SSH to HTTPS. The .gitmodules file is ready to commit.",
        "Changed to use npm install instead.\n\nThis should work now.",
        "All conflicts resolved. The next CI run should be green!",
    ):
        assert reports_change(prev.lower()), prev
    for prev in (
        "Which of the two loaders do you want me to look at first?",
        "The exporter reads every table eagerly; the parser caches it per file.",
        "Let me read the loader first.",
    ):
        assert not reports_change(prev.lower()), prev


def test_asking_whether_something_fails_reports_no_attempt(tmp_path: Path) -> None:
    asked = "Do we have the same issue in the other shells, given what we fixed in the bash script?"
    looked_back = [
        "Previously the prompt stopped right away when I let go of Enter. Now it keeps going for seconds.",
        "There it is. We were trying to use a hammer to fix a watch.",
    ]
    got = _after_change(tmp_path, [asked, *looked_back], "asked")
    for p in looked_back:
        assert "failed_attempt" in got[p], p
    assert "failed_attempt" not in got[asked]
