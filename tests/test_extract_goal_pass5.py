"""Goal pass 5 (issue 11: the extract-dev2 goal recall gap). Each family is a small exchange the test
writes; none of its words come from the dev sets. The tests check the goal evidence, which is what the
confidence model reads, against the same prompt without the family's shape."""

from __future__ import annotations

from extractors.attempts import extract_user_failed
from extractors.decisions import user_decision
from extractors.goals import goal_score
from extractors.patterns import make_view

REPORT = "I moved the parser into its own module and cached the schema. The build is green."


def _goal(text: str, prev: str | None = REPORT) -> float:
    return goal_score(make_view(text, prev), 0.0)[0]


def test_an_emphasised_want_states_work_like_a_plain_one() -> None:
    """ "I do / really / just / still want to ..." is "I want to ..." with an adverb in the way."""
    plain = _goal("i want to send the reports by mail every monday")
    for adverb in ("do", "really", "just", "still"):
        said = f"the page is slow but i {adverb} want to send the reports by mail every monday"
        assert _goal(said) >= plain - 0.3, adverb
        assert _goal(said) >= _goal(said.replace(f"i {adverb} want to", "they send")) + 1.0, adverb


def test_were_is_not_we_are() -> None:
    """ "We were trying to ..." looks back on an approach (a failed attempt); "we're trying to ..." states
    the objective. The contraction's apostrophe is what tells them apart."""
    now = "we're trying to get the upload to resume after a dropped connection"
    before = "we were trying to get the upload to resume after a dropped connection"
    assert _goal(now) >= _goal(before) + 0.8
    assert extract_user_failed(make_view(before, REPORT), 0.0, False, float("-inf"))
    # The same holds for the decision cue "we're not ...": "the logs were not rotated" decides nothing.
    decided = user_decision(
        make_view("we're not rotating the logs on the staging box", REPORT), float("-inf")
    )
    observed = user_decision(make_view("the logs were not rotated on the staging box", REPORT), float("-inf"))
    assert max(h.raw for h in decided) >= max((h.raw for h in observed), default=0.0) + 0.8


def test_a_check_that_is_somehow_failing_is_a_defect_report() -> None:
    """ "X is somehow / still / suddenly failing" reports a defect like "X is failing"."""
    plain = _goal("the nightly export is failing on the big tables")
    for adverb in ("somehow", "still", "suddenly"):
        said = f"the nightly export is {adverb} failing on the big tables"
        assert _goal(said) >= plain - 0.01, adverb
        assert _goal(said) >= _goal(f"the nightly export is {adverb} running on the big tables") + 0.3


def test_a_behaviour_asked_for_under_a_condition_states_work() -> None:
    """ "Can we log a warning when the cache can't be read?": a change to what the product does in some
    case; the same question without the condition, or asking to be told, is weaker or no evidence."""
    asked = "the settings live in the home folder, can we log a warning when the cache can't be read?"
    assert _goal(asked) >= _goal("the settings live in the home folder, can we log a warning?") + 0.5
    assert (
        _goal("could you collapse the side panel whenever it loses focus?")
        >= _goal("could you collapse the side panel?") + 0.5
    )
    # Asking to be told what happens under a condition sets no work.
    told = "can you explain what happens when the cache can't be read?"
    assert _goal(told) <= _goal(told.replace(" when the cache can't be read", ""))
