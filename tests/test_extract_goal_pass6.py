"""Goal and correction pass 6 (issue 11: margins that transfer). Each family is a small exchange the
test writes; none of its words come from the dev sets. The tests check the evidence the confidence model
reads, against the same prompt without the family's shape."""

from __future__ import annotations

from extractors.goals import goal_score
from extractors.patterns import make_view

REPORT = "I moved the parser into its own module and cached the schema. The build is green."


def _goal(text: str, prev: str | None = REPORT) -> float:
    return goal_score(make_view(text, prev), 0.0)[0]


def test_a_purpose_clause_with_any_subject_states_the_aim() -> None:
    """ "..., so that this can ship to the beta group" names what the work is for, whoever its subject
    is ("this", "you", "the team"), like "so that we can ..."."""
    for subject in ("this", "you", "the team", "everyone"):
        said = f"lets finish the export tonight, so that {subject} can use it from the beta group"
        assert _goal(said) >= _goal("lets finish the export tonight, and then the beta group") + 0.3, subject
    # "so" as a plain connective ("so this is ...") is no purpose.
    assert _goal("so this is the export we shipped last week") <= _goal(
        "this is the export we shipped last week"
    )
