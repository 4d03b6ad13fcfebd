"""Assistant pass (issue 11: the assistant's side of decisions and self-corrections on other teams'
transcripts). Each family is a small exchange the test writes; none of its words come from the dev
sets. The tests check the evidence the confidence model reads against the same text without the
family's shape."""

from __future__ import annotations

from extractors.assistant_voice import self_correction
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
