"""Pushback without the classic cue words, defects the operator noticed, and failures told apart from
verdicts on a result (issue 11: the extract-dev2 gap). Each family is a small exchange the test writes;
none of its words come from the dev sets. The tests check the heuristics' evidence, which is what the
confidence model reads, against the same prompt without the family's shape."""

from __future__ import annotations

from extractors.attempts import extract_user_failed
from extractors.corrections import THRESHOLD, correction_score
from extractors.cues import fails
from extractors.goals import goal_score
from extractors.patterns import make_view
from extractors.pushback import pushback_score

REPORT = "I moved the parser into its own module and cached the schema. The build is green."
ASKED = (
    "I restarted the worker with the new queue settings. Try uploading a file now and tell me what you see."
)
TOLD = "The worker now reads the queue settings from the environment. I restarted it."


def _correction(text: str, prev: str | None = REPORT) -> float:
    return correction_score(make_view(text, prev), False)[0]


def test_redirecting_the_whole_approach_is_pushback() -> None:
    """ "Let's take a step back", "we're too far in the weeds", "we have to rethink this", "a slightly
    different angle": the operator turns the work around, whatever the topic."""
    pairs = [
        (
            "ok let's take a step back, we're going in circles with the cache",
            "ok let's add a step to the cache",
        ),
        (
            "we're too far down in the weeds here. start from what the user sees",
            "start from what the user sees",
        ),
        ("i think we have to rethink this, the queue is not the point", "i think the queue comes next"),
        (
            "so let's try a slightly different angle on the importer",
            "so let's try the importer on the big file",
        ),
    ]
    for pushback, plain in pairs:
        assert _correction(pushback) >= _correction(plain) + 0.8, (pushback, plain)
    # (Not "step back into" something: that is a place, not a redirect.)
    assert pushback_score(make_view("step back into the settings page and click save", REPORT)) == 0.0


def test_conceding_then_countering_is_pushback() -> None:
    conceded = "you're correct about the schema, but the parser should own the cache, not the loader"
    assert _correction(conceded) >= THRESHOLD
    assert _correction(conceded) >= _correction("the parser should own the cache, not the loader") + 0.8
    assert pushback_score(make_view("fair enough, but a plain file would be easier to diff", REPORT)) >= 0.8
    # Agreeing alone pushes back on nothing.
    assert pushback_score(make_view("you're correct about the schema, thanks", REPORT)) == 0.0


def test_a_bare_stop_is_pushback_only_in_reply() -> None:
    for stop in ("hold up", "wait!", "Hang on..."):
        assert pushback_score(make_view(stop, REPORT)) >= 0.6, stop
        assert pushback_score(make_view(stop, None)) == 0.0, stop
    assert pushback_score(make_view("wait for the build, then tag the release", REPORT)) == 0.0


def test_handing_the_work_back_after_being_asked_to_act() -> None:
    """The assistant asked the operator to try something; "test it yourself, you have access" hands it back.
    After a plain report the same words are an ordinary request."""
    back = "log in on the staging box and test the upload yourself"
    asked = pushback_score(make_view(back, ASKED))
    told = pushback_score(make_view(back, TOLD))
    assert asked >= told + 0.6
    assert pushback_score(make_view("you have access to the server, check the worker logs", ASKED)) >= 0.6


def test_a_negated_behaviour_or_a_why_with_a_verdict_reports_a_fault() -> None:
    for text in (
        "the sidebar doesn't stay open when i switch tabs",
        "the counter does not update after the upload",
        "the list won't scroll past the tenth row",
    ):
        v = make_view(text, REPORT)
        assert fails(v.low, v.tok), text
        assert _correction(text) >= THRESHOLD, text
    assert (
        _correction("why is the linter printing weird warnings now?")
        >= _correction("why is the linter printing warnings in the summary?") + 0.5
    )


def test_a_defect_the_operator_noticed_states_work_but_noticing_the_assistant_does_not() -> None:
    noticed = "i noticed the menu closes when i scroll down, that shouldn't happen"
    plain = "the menu closes when i scroll down"
    assert (
        goal_score(make_view(noticed, REPORT), 0.0)[0] >= goal_score(make_view(plain, REPORT), 0.0)[0] + 0.6
    )
    bug = "we have a small bug: the export button is greyed out after login"
    assert goal_score(make_view(bug, REPORT), 0.0)[0] >= goal_score(make_view(bug[19:], REPORT), 0.0)[0] + 0.6
    # The polite past ("I wanted to change ...") states work like the present; "I wanted to ask" does not.
    wanted = goal_score(make_view("next thing i wanted to change was the footer layout", REPORT), 0.0)[0]
    asked = goal_score(make_view("next thing i wanted to ask was the footer layout", REPORT), 0.0)[0]
    assert wanted >= asked + 1.0
    # "I've noticed you ..." is about the assistant's habits: no new work.
    about_you = "i've noticed you skip the slow tests every time"
    assert goal_score(make_view(about_you, REPORT), 0.0)[0] < 0.5


def test_a_verdict_on_the_result_is_no_failed_attempt() -> None:
    """After a change the assistant reported, "it's still not loading" is the attempt failing; "it's still
    not great" judges the result (a correction); "something is wrong" reports a failure."""
    changed = "I've switched the loader to read the config lazily. This should work now."

    def attempt(text: str) -> float:
        hits = extract_user_failed(make_view(text, changed), 0.0, False, float("-inf"))
        return max((h.raw for h in hits), default=-1.0)

    assert attempt("it's still not loading the config") >= 1.0
    assert attempt("it's still not great, the header is too tall") < 0.5
    assert attempt("hmm, something is wrong: the page stays blank") >= 0.5
    assert attempt("hmm, the page stays blank") < attempt("hmm, something is wrong: the page stays blank")
