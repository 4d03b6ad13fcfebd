"""Decision pass 4 (issue 11: decision recall on other teams' transcripts). Each family is a small
exchange the test writes; none of its words come from the dev sets. The tests check the decision
evidence, which is what the confidence model reads, against the same prompt without the family's shape."""

from __future__ import annotations

from extractors.decisions import user_decision
from extractors.patterns import make_view

PLAN = "The plan is written. I'll hand it to the reviewer agent before anyone touches code."


def _evidence(text: str, prev: str | None = PLAN) -> float:
    return max((h.raw for h in user_decision(make_view(text, prev), float("-inf"))), default=0.0)


def test_an_order_that_ends_on_instead_swaps_the_course() -> None:
    """ "have the second agent review it instead": the course in hand is dropped for the one named."""
    swapped = _evidence("have the second agent review the plan instead.")
    assert swapped >= _evidence("have the second agent review the plan.") + 1.0
    assert swapped >= _evidence("have the second agent review the plan instead of the draft") + 0.5
    assert _evidence("replace both charts with one table instead?") >= 1.0
    # "instead" opening the next clause of a wrapped line is no sentence end.
    wrapped = "keep the retry loop but do not block on the flush —\ninstead queue it and log failures"
    assert _evidence(wrapped) < swapped


def test_ruling_one_course_out_is_a_choice() -> None:
    """ "I don't like the idea of caching it", "there's no reason to keep the flag", "so we might not need to
    rebuild": one of the courses on the table is dropped, like "we don't need to ..."."""
    for said, plain in (
        ("i don't like the idea of caching the tokens. let's look at other ways", "let's look at other ways"),
        ("the parser is fast now, there's no reason to keep the old flag", "the parser is fast now"),
        (
            "i can change the limits in the console, so we might not need to rebuild.",
            "i can change the limits",
        ),
        ("honestly not a fan of a second config file", "honestly a second config file"),
    ):
        assert _evidence(said) >= _evidence(plain) + 0.8, said
