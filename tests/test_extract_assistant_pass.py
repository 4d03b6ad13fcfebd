"""Assistant pass (issue 11: the assistant's side of decisions and self-corrections on other teams'
transcripts). Each family is a small exchange the test writes; none of its words come from the dev
sets. The tests check the evidence the confidence model reads against the same text without the
family's shape."""

from __future__ import annotations

from extractors.assistant_decisions import assistant_decision
from extractors.assistant_voice import progress, self_correction
from extractors.patterns import make_view


def _self(text: str) -> float:
    hits = self_correction(make_view(text, None, human=False), lambda: False, float("-inf"))
    return max((h.raw for h in hits), default=0.0)


def test_owning_an_earlier_fault_is_a_self_correction() -> None:
    """ "a slip of my own", "bugs in my own fixes", "simpler than I thought", "I was conflating ...",
    "which I added", "I'd written": the assistant owns a fault of its earlier work, no stock apology."""
    for said, plain in (
        (
            "Reading the queue logs turned up a slip of my own: I noted the stale lock and never cleared it.",
            "Reading the queue logs turned up a stale lock that nobody cleared.",
        ),
        (
            "The review found two bugs in my own fixes; the cache key is still per user.",
            "The review found two bugs in the fixes; the cache key is still per user.",
        ),
        (
            "The fix is smaller than I thought: the loader only needs the locale passed in.",
            "The fix is small: the loader only needs the locale passed in.",
        ),
        (
            "Right, I was conflating the two queues. The retry queue is separate.",
            "Right, the two queues differ. The retry queue is separate.",
        ),
        (
            "The inline timeout, which I added last round, is removed rather than raised.",
            "The inline timeout is removed rather than raised.",
        ),
        (
            "I'd written the limit as a hard cap without saying how to raise it.",
            "The limit is a hard cap; the docs say how to raise it.",
        ),
    ):
        assert _self(said) >= _self(plain) + 1.0, said


def _decision(text: str, prev_user: str | None = None) -> float:
    hits = assistant_decision(make_view(text, None, human=False), prev_user, float("-inf"))
    return max((h.raw for h in hits), default=0.0)


def test_restructuring_announced_after_its_reason_is_a_decision() -> None:
    """ "There's a folder for these already. I'll merge them.": the course settled after the finding that
    decides it, as strong as the other settled-course cues."""
    said = "The new fixtures overlap the old ones, and there's a shared folder already. I'll merge them."
    plain = "The new fixtures overlap the old ones, and there's a shared folder already. Looking at them."
    assert _decision(said) >= _decision(plain) + 1.0
    assert _decision(said) >= 1.0


def test_taking_the_users_alternative_is_a_decision() -> None:
    """ "Your framing is cleaner, and ...", "Approved and recorded. Moving ...": the assistant drops its own
    course for the one the user put forward."""
    for said, plain in (
        (
            "The sidebar was cramped, and your framing is cleaner: it keeps the filters in one place.",
            "The sidebar was cramped, and the layout keeps the filters in one place.",
        ),
        (
            "Approved and recorded. Moving the schema note into the same change, since it says the opposite.",
            "Moving the schema note into the same change, since it says the opposite.",
        ),
    ):
        assert _decision(said) >= _decision(plain) + 0.9, said


def _progress(text: str) -> float:
    return max((h.raw for h in progress(make_view(text, None, human=False), float("-inf"))), default=0.0)


def test_a_status_head_before_its_detail_is_progress() -> None:
    """ "Migration reviewed, fixes applied: ...", "Release notes merged, ...": a line of what stands, then
    the detail; the same words as a plan are not."""
    for said, plain in (
        (
            "Migration reviewed, two fixes applied to the index step. The rollback script is untouched.",
            "Looking at the migration next; two fixes may apply to the index step.",
        ),
        (
            "Docs page merged: the install section now lists both platforms.",
            "The docs page needs both platforms.",
        ),
    ):
        assert _progress(said) >= _progress(plain) + 1.0, said


def test_the_plainer_course_taken_is_a_decision() -> None:
    """ "the queue is already up, let me just restart the worker": the simpler of the courses at hand."""
    said = (
        "The queue is already up, so the container is not needed. Let me just restart the worker and go on."
    )
    plain = "The queue is already up, so the container is not needed. Let me check the worker and go on."
    assert _decision(said) >= _decision(plain) + 0.6
    assert _decision("Let me just check the worker logs.") == 0.0
