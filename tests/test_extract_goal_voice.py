"""Goals and corrections read from the voice of a prompt and what the assistant last said (issue 11):
asking to be told is not setting an objective, relayed review remarks are not goals. Each family is a
small transcript the test writes; none of its words come from the dev sets."""

from __future__ import annotations

from pathlib import Path

from test_extract_dialogue import SHOWN, _after_shown
from test_extract_families import _kinds

from extractors.corrections import correction_score
from extractors.goals import THRESHOLD, goal_score
from extractors.patterns import make_view


def _goal(text: str, prev: str | None = SHOWN) -> float:
    return goal_score(make_view(text, prev), 0.0)[0]


def _correction(text: str, prev: str | None = SHOWN) -> float:
    return correction_score(make_view(text, prev), False)[0]


def test_a_question_that_asks_to_be_told_sets_no_goal(tmp_path: Path) -> None:
    """Mid-exchange, "should the records be proxied?" asks for an answer; "can we warn when ...?" asks for
    work. Only the second states what the work is for."""
    told = [
        "ok i am adding the mail records now. should the records have the proxy switched off?",
        "and i am guessing the login will not work on the preview builds, right?",
        "ok, and if i read that right, the signing keys are kept by the relay service?",
        "ok and do i need the client secret for the preview builds?",
        "how do i get to the settings panel..where is it",
    ]
    work = [
        "ok i am adding the mail records now. can we warn in the setup script when the proxy is on?",
        "any ideas why the preview builds fail to log in?",
        "how do we make the relay service rotate its signing keys every week?",
        "can we store the client secret in the vault so the preview builds can log in?",
        "how do we make the settings panel remember the last tab?",
    ]
    for t, w in zip(told, work, strict=True):
        assert _goal(t) < THRESHOLD - 0.5, t
        assert _goal(t) <= _goal(w) - 0.8, (t, w)
    got = _after_shown(tmp_path, told, "told")
    for t in told:
        assert "goal" not in _kinds(got[t]), t


def test_asking_for_an_explanation_or_a_list_is_not_a_goal(tmp_path: Path) -> None:
    told = [
        "please look at the diff of the loader and explain what the two new helpers do",
        "use a subagent to give me an overview of how the modules are organised",
        "I like this proposal. can you list, in 3 bullet points, what its strengths are?",
    ]
    for t in told:
        assert _goal(t) < THRESHOLD - 0.5, t
    assert _goal(told[0]) <= _goal(told[0].replace("explain", "fix")) - 0.8
    # The same verbs in an objective still state one.
    assert _goal("I want to add a loader that explains its cache misses in the log") >= THRESHOLD
    got = _after_shown(tmp_path, told, "explain")
    for t in told:
        assert "goal" not in _kinds(got[t]), t


def test_relayed_review_remarks_are_no_goal(tmp_path: Path) -> None:
    """Pasted review feedback points at defects in the work under review (a correction), whoever wrote it."""
    remarks = [
        "the loader retries forever when the cache file is missing. Implement a bounded retry so that the "
        "service can recover, and make sure the error is logged before giving up.",
        "the retry loop never sleeps; implement a backoff so that the service is not hammered and make sure "
        "the tests cover it.",
        "we need to add a bound to the retry loop in the loader so that it cannot spin forever when the "
        "cache file is missing.",
    ]
    framing = ("Code review for PR #12: ", "In src/loader.py around lines 10 to 24, ", "PR feedback: ")
    pasted = [f + r for f, r in zip(framing, remarks, strict=True)]
    for t, r in zip(pasted, remarks, strict=True):
        assert _goal(t) < THRESHOLD - 0.5, t
        assert _goal(t) <= _goal(r) - 0.8, t
    got = _after_shown(tmp_path, pasted, "review")
    for t in pasted:
        assert "goal" not in _kinds(got[t]), t


def test_version_control_chores_are_steps_not_goals(tmp_path: Path) -> None:
    """ "okay lets commit these changes and push" or "first commit the last task, then carry on with the plan"
    move work along: the chore weighs against a goal that the same sentence about other work would not."""
    chores = {
        "okay lets commit these changes and push them to the release branch": ("commit", "push"),
        "ok, so first commit the changes of the previous task, then proceed with the new retry plan": (
            "commit",
        ),
        "ok can we create a pr for the loader work, and also start the local dev server": ("create a pr",),
    }
    for t, words in chores.items():
        other = t
        for w in words:
            other = other.replace(w, "tidy up")
        assert _goal(t) < THRESHOLD, t
        assert _goal(t) <= _goal(other) - 0.5, (t, other)
    # A command named in a sentence is not the chore itself.
    named = "the terminal where you type git commit uses a font that is far too small, lets rework the layout"
    assert _goal(named) >= _goal(named.replace("git commit", "its commands"))
    got = _after_shown(tmp_path, list(chores), "chores")
    for t in chores:
        assert "goal" not in _kinds(got[t]), t


def test_a_fault_weighed_as_a_possibility_is_not_a_correction() -> None:
    """ "the sidebar might be too narrow, so only do the header" weighs an option; "the sidebar is too
    narrow" finds fault. A hypothesis asked later in the prompt investigates, like one that opens it."""
    weighed = "Rework the header and the sidebar as well, although the sidebar might be too narrow, so only the header."
    found = (
        "Rework the header and the sidebar as well, although the sidebar is too narrow, so only the header."
    )
    assert _correction(weighed) <= _correction(found) - 0.5
    asked = "I tried your config. Could it be that the two colour stops are too far apart for a blend?"
    told = "I tried your config. The two colour stops are too far apart for a blend."
    assert _correction(asked) <= _correction(told) - 0.9


def test_opening_an_ideation_states_a_goal() -> None:
    """ "let's brainstorm ...", "start thinking about what the next level should look like", "I need ideas of
    how to ..." open a piece of design work: an objective, even without a verb of building."""
    opened = [
        "this looks good. i dont want the map to be flat though. let's brainstorm, i want it more playful",
        "lets pick back up and start thinking about what the second level should look like",
        "i need ideas of how to make the intro feel more like a game and less like a manual",
        "I wanted to strategize for a few minutes about the sharing model for the next phase",
    ]
    for t in opened:
        assert _goal(t) >= THRESHOLD, t


def test_a_turn_that_opens_a_new_topic_corrects_nothing() -> None:
    """ "next thing I wanted to change is ...", "pivoting really quickly, ..." say the turn is about something
    else than what the assistant just did, whatever fault they find in it."""
    for opener in (
        "actually next thing i wanted to change: ",
        "pivoting really quickly, ",
        "another thing, ",
    ):
        reply = "the font in the settings panel is too small and crowded"
        assert _correction(opener + reply) <= _correction(reply) - 0.5, opener


def test_narrating_what_the_operator_is_doing_sets_no_goal() -> None:
    """ "I'm building X" frames the work when it opens a thread; later on, "ok I am setting up the mail
    records, should they be proxied?" says what the operator is doing right now."""
    framing = "I'm building a small service that mirrors our mail records into the staging zone"
    assert _goal(framing, None) >= THRESHOLD
    narrating = "ok I am setting up the mail records in the staging zone. should the records be proxied?"
    assert _goal(narrating) < THRESHOLD - 0.5
    assert _goal(narrating) <= _goal(narrating.replace("I am setting up", "I see")) + 0.3


def test_the_operators_own_gap_is_no_fault_of_the_assistant() -> None:
    """ "what am I missing?" / "I think I'm missing a setup step" own the gap; "the footer is missing"
    reports one in the work."""
    own = "nothing from staging shows up on the dashboard, I think I'm missing a setup step"
    work = "nothing from staging shows up on the dashboard, I think a setup step is missing"
    assert _correction(own) <= _correction(work) - 0.4


def test_a_new_topic_announces_new_work() -> None:
    reply = "the settings panel should remember the last tab you opened"
    assert _goal("okay next thing i wanted to change: " + reply) >= _goal(reply) + 0.5


def test_a_step_on_what_was_just_shown_is_no_goal() -> None:
    """ "please add these to the README" / "review this proposal with the other agent" act on what is on
    screen; the same verb with its own object can state work."""
    for step, own in (
        ("please add these to the README, and also how to install it", "please add a section to the README"),
        ("review this proposal with the other agent and report back", "review the caching layer for races"),
    ):
        assert _goal(step) < THRESHOLD, step
        assert _goal(step) <= _goal(own) - 0.5, (step, own)


def test_checking_ones_understanding_rejects_nothing() -> None:
    checking = "and I am guessing the login won't work on the preview builds, right?"
    stating = "and the login won't work on the preview builds, right?"
    assert _correction(checking) <= _correction(stating) - 0.5


def test_a_task_spec_is_no_correction_whatever_its_checklist_says() -> None:
    """A brief opening "Analyze ..." lists what to look for ("failed logins", "broken rules"); it finds no
    fault with the assistant's last turn."""
    checklist = (
        " all router logs for security and operational issues. Required analysis: 1. failed logins and their "
        "sources 2. firewall rules that are broken or missing 3. errors in the DNS resolver 4. anything unusual"
    )
    assert _correction("Analyze" + checklist) <= _correction("I read" + checklist) - 0.8


def test_pushback_can_still_set_new_work() -> None:
    """ "that is not right; the last segment should follow the gradient, can we solve this?" both corrects
    and states what the work is for: the correction evidence only tips the goal evidence."""
    v = make_view("I want the last segment to follow the gradient so that it is always correct", SHOWN)
    assert goal_score(v, 1.5)[0] >= goal_score(v, 0.0)[0] - 0.3


def test_pushback_is_said_up_front() -> None:
    """A long brainstorm that mentions "broken" or "I don't like" deep inside weighs less than the same
    words opening the turn: pushback comes first, ideas that touch on faults come later."""
    fault = "i dont like how the map rotates away and the beam looks broken."
    ideas = (
        "so here is where my head is at for the next level, thinking out loud about the mission and the "
        "crew and how the player should feel when they land on the planet for the first time. "
    )
    assert _correction(ideas + fault) <= _correction(fault) - 0.5
