"""Decision pass 5 (issue 11: the extract-dev2 decision recall gap). Each family is a small exchange the
test writes; none of its words come from the dev sets. The tests check the decision evidence, which is
what the confidence model reads, against the same text without the family's shape, and the candidate gate
for bare approvals."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from extractors.assistant_decisions import assistant_decision
from extractors.decisions import user_decision
from extractors.model import Utterance
from extractors.patterns import make_view
from extractors.pipeline import analyse

REPORT = "The importer now reads the new column. Both fixtures pass."


def _user(text: str, prev: str | None = REPORT) -> float:
    return max((h.raw for h in user_decision(make_view(text, prev), float("-inf"))), default=0.0)


def _assistant(text: str) -> float:
    hits = assistant_decision(make_view(text, None, human=False), None, float("-inf"))
    return max((h.raw for h in hits), default=0.0)


# Each family's text against the same text without the family's shape: (scorer, said, plain).
# - dropping or deferring that opens a sentence ("Parking the second draft ...", "Scrapped the shell script
#   and built ..."): the dropped course named as the step taken, not a word in passing;
# - a course stated as the speaker's own ("I would like to use one shared token", "I want to use the second
#   layout");
# - a course narrowed to one of its options ("I would only ship it in the web build", "import should
#   primarily use the picker; the upload is a fallback").
FAMILIES = [
    (
        _assistant,
        "Parking the second draft for now and filing a ticket, then I'll sketch the schema.",
        "The second draft is open and a ticket exists, then I'll sketch the schema.",
    ),
    (
        _assistant,
        "Done. Scrapped the shell script and built a small Go tool that does the same.",
        "Done. Kept the shell script and built a small Go tool that does the same.",
    ),
    (
        _user,
        "ok, i am creating the token. i would like to use one shared token for both stages",
        "ok, i am creating the token for both stages",
    ),
    (_user, "i want to use the second layout because it scrolls", "the second layout scrolls"),
    (_user, "in that case i would only ship it in the web build", "in that case ship it in the web build"),
    (
        _user,
        "import should primarily use the folder picker.\n\nthe file upload is a fallback",
        "import should use the folder picker.\n\nthe file upload is there too",
    ),
]


@pytest.mark.parametrize("scorer, said, plain", FAMILIES)
def test_each_family_adds_decision_evidence(scorer: Callable[[str], float], said: str, plain: str) -> None:
    assert scorer(said) >= scorer(plain) + 1.0


def test_a_drop_word_in_passing_or_weighed_stays_weak() -> None:
    """ "the rule was dropping packets" is no course taken, nor is "Dropping the rule would ..." (a course
    weighed); "Dropping the rule for now, ..." is."""
    taken = _assistant("Dropping the firewall rule for now, then I'll retest the guest network.")
    assert _assistant("The firewall rule was dropping packets from the guest network.") < taken
    assert _assistant("Dropping the firewall rule would open the guest network to the office.") < taken


def test_wanting_work_done_is_no_course_of_ones_own() -> None:
    assert _user("i would like to see the logs first") < 1.0


def test_the_laid_out_plan_opening_a_sentence_is_a_decision() -> None:
    """ "Now I know enough. Here's the migration plan: ..." lays out the course the assistant takes; the
    same plan that ends by asking the user still waits for them."""
    plan = (
        "Now I know enough. Here's the migration plan:\n\n- move the two tables\n- keep the old view for a "
        "release\n\nApplying the first step now."
    )
    plain = (
        "Now I know enough. The tables:\n\n- the two tables\n- the old view\n\nApplying the first step now."
    )
    assert _assistant(plan) >= _assistant(plain) + 1.0
    asking = plan.replace(
        "Applying the first step now.", "Does that work for you, or would you prefer to keep both?"
    )
    assert _assistant(asking) < _assistant(plan)


def test_a_numbered_item_named_for_the_work_is_a_pick() -> None:
    """ "can we handle #3 quickly?", "do #2 and apply it to the other pages too": an entry of a numbered
    list chosen to work on, even where the turn was a listing rather than a question."""
    listing = (
        "| # | Item |\n|---|---|\n| 1 | Rename the flags |\n| 2 | Cache the index |\n| 3 | Trim the logs |\n\n"
        "Reply with a number to view details."
    )
    assert _user("ok can we handle #3 quickly?", listing) >= 1.0
    assert _user("do #2 and apply it to the other pages too", listing) >= 1.0
    # A number that names no item taken up is no pick.
    assert _user("ok can we look at the logs quickly?", listing) < 1.0


def _kinds(text: str, prev: str) -> set[str]:
    a = analyse(Utterance(uuid="u1", session_id="s1", role="user", text=text, prev_assistant_text=prev))
    assert a is not None
    return {h.kind for h in a.hits}


def test_a_bare_approval_after_an_either_or_takes_one_side() -> None:
    """ "yes" to the one thing proposed chooses nothing (eval README); after an either-or the assistant put
    ("Does that hold, or should I rework the parser first?") the approval stays a decision candidate."""
    single = "I'll rework the parser and send it back to the reviewer. Want me to go ahead?"
    either = "I'll rework the parser and send it back to the reviewer. Does that hold, or is there another angle here?"
    assert "decision" not in _kinds("send it!", single)
    assert "decision" in _kinds("send it!", either)
