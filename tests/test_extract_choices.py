"""Decisions read from dialogue structure (issue 11): what the assistant's last turn offered and whether
the prompt takes one of it. Small transcripts and texts the tests write themselves."""

from __future__ import annotations

import math
from pathlib import Path

from test_extract_families import _kinds, _prompts, _session

from extractors.assistant_decisions import assistant_decision
from extractors.choices import choice_features, offer_of, picks
from extractors.confidence import ClassModel
from extractors.decisions import THRESHOLD, user_decision
from extractors.model import Utterance
from extractors.patterns import Hit, make_view
from extractors.pipeline import MODEL_ONLY_FLOOR, NO_EVIDENCE_FLOOR, Analysis, analyse, decide

EITHER_OR = (
    "The loader cache and its tests are done; nothing is committed yet.\n\n"
    "Want them as their own commit, or folded into the parser commit?"
)
WHICH_BEFORE = (
    "Two ways to bound the memory: reset the buffer per render vs. a real stack of frames. The stack is "
    "more correct but touches more call sites. Which do you want?"
)
MENU = (
    "Three ways to show the quota:\n\n"
    "A) **Percent bar** - a bar in the status line\n"
    "B) **Countdown** - minutes left until the reset\n"
    "C) **Colour only** - the prompt turns amber near the limit\n\n"
    "Which option would you like?"
)
CLAIM_REPORT = "Done. The loader cache is in and all 40 tests pass."
SINGLE = "I found the stale cache entry and fixed the key. All 40 tests pass. Want me to commit this?"
REPORT = (
    "Review findings:\n\n1. The parser drops trailing commas\n2. The cache key ignores the file size\n"
    "3. The docs mention a removed flag\n\nWant me to fix the first one now?"
)
QUESTIONNAIRE = (
    "Before I start:\n\n1. What is the path of the config repo?\n2. Which branch should I sync?\n\n"
    "Answer these and I'll set it up."
)


def _picks(prompt: str, prev: str) -> str:
    offer = offer_of(prev)
    assert offer is not None, prev
    v = make_view(prompt, prev)
    return picks(v.low, v.prose, offer)


def test_an_either_or_question_offers_its_alternatives() -> None:
    assert _picks("folded in", EITHER_OR) == "words"
    preview = "The new colours are in. Want to preview them in the browser, or commit and push?"
    assert _picks("commit and push", preview) == "words"
    assert _picks("let me preview first", preview) == "words"
    # The alternatives may be given just before a bare "which do you want?".
    assert _picks("do the stack, fix it", WHICH_BEFORE) == "words"
    # An answer naming neither side takes nothing offered.
    assert _picks("also bump the version", EITHER_OR) == ""


def test_a_labelled_menu_is_picked_by_label_or_place_not_by_an_article() -> None:
    assert _picks("C but make it subtler", MENU) == "label"
    assert _picks("option b", MENU) == "label"
    assert _picks("the second one", MENU) == "label"
    assert _picks("countdown please", MENU) == "words"
    assert _picks("A", MENU) == _picks("let's do B", MENU) == "label"
    # "the first ones you gave" finds fault with them all; "a bit ..." opens with the article, not option A.
    assert _picks("the first ones you gave were too long", MENU) == ""
    assert _picks("a bit more padding around the logo first", MENU) == ""


def test_a_single_proposal_a_report_list_or_a_questionnaire_offer_no_choice() -> None:
    assert offer_of(SINGLE) is None
    # A numbered report above a question about one of its items is not a menu.
    assert offer_of(REPORT) is None
    # Numbered open questions ask for information; answering them chooses nothing.
    assert offer_of(QUESTIONNAIRE) is None
    assert offer_of("") is None


def test_choice_features_say_whether_the_reply_takes_an_offered_alternative() -> None:
    took = choice_features("folded in", "folded in", EITHER_OR, 2)
    assert took["alt:offered"] == took["alt:pick"] == took["alt:pick_short"] == 1.0
    other = choice_features("also bump the version", "also bump the version", EITHER_OR, 4)
    assert other.get("alt:other_short") == 1.0 and "alt:pick" not in other
    assert choice_features("yes", "yes", SINGLE, 1) == {}


def test_a_pick_among_offered_alternatives_is_decision_evidence() -> None:
    assert user_decision(make_view("folded in", EITHER_OR))[0].raw >= THRESHOLD
    assert user_decision(make_view("C but make it subtler", MENU))[0].raw >= THRESHOLD
    # The same words after a single proposal choose nothing.
    assert not user_decision(make_view("folded in", SINGLE))


def test_picking_an_offered_alternative_is_kept_as_a_decision(tmp_path: Path) -> None:
    _session(tmp_path, [(EITHER_OR, "folded in"), (MENU, "C but make it subtler"), (SINGLE, "yes")], "pick")
    got = _prompts(tmp_path)
    assert "decision" in _kinds(got["folded in"])
    assert "decision" in _kinds(got["C but make it subtler"])
    # A bare approval of the one thing proposed is none (eval README convention).
    assert "decision" not in _kinds(got["yes"])


def test_a_choice_is_read_at_the_head_of_a_reply_not_deep_in_a_brainstorm() -> None:
    """Cue words deep in a long reply are ideas floated, not the choice (held out: decision AP rose)."""
    musing = (
        "so the map feels empty to me when the level starts..there is nothing to look at and the player just "
        "waits for the timer..maybe the towers could glow a little when they are ready..and the sound is "
        "too quiet at the start too..i keep thinking about how the old version felt more alive because the "
        "units moved around on their own..anyway i think we should use the bigger sprites at some point"
    )
    assert len(musing) > 300
    assert not user_decision(make_view(musing, SINGLE))
    stated = "i think we should use the bigger sprites. " + musing
    assert user_decision(make_view(stated, SINGLE))


def test_a_decision_without_any_evidence_needs_a_higher_probability() -> None:
    """The model alone keeps a decision only at NO_EVIDENCE_FLOOR: a prompt with no cue and no pick that
    follows a question is mostly an instruction, not a choice."""
    p = 0.3
    model = ClassModel(math.log(p / (1 - p)), {}, emit=0.2, bundle=1.01, veto=0.1)
    assert MODEL_ONLY_FLOOR < p < NO_EVIDENCE_FLOOR["decision"]

    def kept(raw: float) -> bool:
        a = Analysis("user", [Hit("decision", "push on with rev 3", 0.5, {}, raw)])
        return bool(decide(a, {"decision": model}))

    assert not kept(0.0)
    assert kept(0.4)  # some evidence: the ordinary model-only floor


def test_lets_carry_on_is_not_a_choice_but_lets_go_with_is() -> None:
    carrying_on = [
        "lets keep working on it, the intro still needs a second pass",
        "lets pick back up where we left off yesterday",
        "lets leave a notes file of what we built so far",
        "hmm dont change anything yet..lets just analyze",
        "create a branch and lets do a deep dive into the renderer",
    ]
    for p in carrying_on:
        assert not user_decision(make_view(p, SINGLE)), p
    for p in (
        "let's go with the tabbed layout",
        "no, let's not backfill the old runs",
        "lets keep the old name",
    ):
        assert user_decision(make_view(p, SINGLE)), p


def test_approving_the_one_thing_proposed_carries_no_decision_evidence() -> None:
    for p in ("yes, please add it.", "ok lets get a PR up for this", "yeah let's push"):
        (hit,) = user_decision(make_view(p, SINGLE), floor=float("-inf"))
        assert hit.raw <= 0, p


def test_the_assistant_confirming_a_pick_announces_the_choice() -> None:
    """ "Good pick - X it is": the choice announced as settled (labelled a decision on both sets)."""
    said = "Good pick - the tabbed layout it is. Moving on to the next question."
    (hit,) = assistant_decision(make_view(said, None, human=False))
    assert hit.raw >= THRESHOLD


def test_an_information_question_or_an_opt_out_offers_no_choice() -> None:
    asks = [
        "The host did not resolve. Do you have a direct IP or a different hostname for it?",
        "I found a repo called tools-cli. Is this the repo you meant, or did you mean a different repository?",
        "Both outdated formulae can be upgraded. Would you like me to upgrade them, or is there something else?",
        "Three setups are common. What's your main goal - speed, privacy or remote access?",
    ]
    for prev in asks:
        assert offer_of(prev) is None, prev
    # A real second course is still an alternative, however short.
    assert offer_of("The cache helper is unused now. Want me to remove it, or leave it?") is not None


def test_a_heading_that_names_the_choice_is_read_though_the_prose_drops_headings() -> None:
    body = "One shared loader with a per-file cache, because both pages read the same files."
    (hit,) = assistant_decision(
        make_view(f"## Loader plan\n\n### Decided approach\n\n{body}", None, human=False)
    )
    assert hit.raw >= THRESHOLD
    assert not assistant_decision(make_view(f"## Loader plan\n\n{body}", None, human=False))


def test_an_assistant_text_that_ends_by_offering_alternatives_still_waits_for_the_user() -> None:
    settled = "Decided approach: a per-file cache, because both pages read the same files."
    assert assistant_decision(make_view(f"{settled} I will add it to the tests too.", None, human=False))
    asks = f"{settled} Per-file cache for the tests too, or a shared directory cache?"
    assert not assistant_decision(make_view(asks, None, human=False))


def _prompt(text: str, prev: str) -> Analysis:
    a = analyse(Utterance(uuid="u1", session_id="s1", role="user", text=text, prev_assistant_text=prev))
    assert a is not None
    return a


def test_a_decision_no_cue_speaks_for_needs_offered_alternatives() -> None:
    """With no cue and no pick, only a reply to offered alternatives stays a decision candidate: after a
    single proposal or a report, such a prompt is an instruction or an approval."""
    # After a report: an instruction ("push to the remote"), no candidate the model could keep.
    after_report = _prompt("push the branch to the remote", CLAIM_REPORT)
    assert not any(h.kind == "decision" for h in after_report.hits)
    # After an either-or question the same kind of reply may still be a pick the cues cannot name.
    after_offer = _prompt("note it down in the plan as a known trade-off", EITHER_OR)
    assert any(h.kind == "decision" for h in after_offer.hits)


def test_holding_off_is_no_second_alternative() -> None:
    for prev in (
        "The spec is written. Want me to commit the spec on the feature branch now, or hold off?",
        "The plan is ready. Go ahead with implementation, or want changes to the plan first?",
        "Tests pass. Want me to commit this, or wait until you've read it?",
    ):
        assert offer_of(prev) is None, prev
    assert offer_of("The cache helper is unused now. Want me to remove it, or keep it?") is not None


def test_a_number_before_a_plural_noun_counts_things_it_names_no_option() -> None:
    menu = "Two intros:\n\n1. A long briefing\n2. A short beat\n\nWhich one do you like?"
    assert _picks("if it can be like 2 stories that would be great", menu) == ""
    assert _picks("like 2, the short one", menu) == "label"
    assert _picks("2 is better", menu) == "label"


def test_asking_about_an_alternative_does_not_take_it() -> None:
    prev = "Both levels are built. Want me to update the plan with both levels, or leave it for now?"
    assert _picks("how would you summarize the two levels we have", prev) == ""
    assert _picks("the plan feels premature? we have not played it yet", prev) == ""
    assert _picks("update the plan with both", prev) == "words"


def test_an_idea_floated_as_a_question_settles_nothing() -> None:
    for p in (
        "ok, so what if we moved the key into the vault record, so we could drop the whole table?",
        "but a generic Render[T] would work, no?",
        "or the render uses 20 padding instead of 30?",
    ):
        (hit,) = user_decision(make_view(p, SINGLE), floor=float("-inf"))
        assert hit.raw < THRESHOLD, p
    # The same course stated, not asked, is a choice.
    (hit,) = user_decision(make_view("let's drop the whole table instead of migrating it", SINGLE))
    assert hit.raw >= THRESHOLD


def test_dropping_or_deferring_something_as_an_order_is_a_choice() -> None:
    for p in (
        "six groups, drop the compare harness, keep the docs commit standalone.",
        "ignore lack of backup config. research the controller warning.",
        "no leave level 3 alone. the review phase is friction on purpose.",
        "maybe we do that later..but first make the agents visible",
    ):
        (hit,) = user_decision(make_view(p, CLAIM_REPORT))
        assert hit.raw >= THRESHOLD, p
    # Placing something is no dropping: "drop the car onto the track".
    assert not user_decision(make_view("i think we just drop the car onto the track and press space", SINGLE))


def test_the_assistant_announcing_a_course_with_its_reason_decides() -> None:
    for said in (
        "The agent left its own audit script there. Writing mine separately - theirs doesn't scan the goldens.",
        "That breaks the guarantee. Sending it back to the agent that flagged it, since it has the full context.",
        "The hook caught an XSS. Rewriting that section to use safe JSX instead of raw HTML.",
    ):
        (hit,) = assistant_decision(make_view(said, None, human=False))
        assert hit.raw >= THRESHOLD, said
    # Narrating the next step, with no reason or rejected course, decides nothing.
    assert not assistant_decision(make_view("Writing the migration now. Then the tests.", None, human=False))


def test_a_verdict_on_the_thing_shown_is_no_choice() -> None:
    """ "I like this" judges the assistant's last output (approval or, with a "but", pushback); liking one
    of several things named is still a choice."""

    def raw(p: str) -> float:
        (hit,) = user_decision(make_view(p, CLAIM_REPORT), floor=float("-inf"))
        return hit.raw

    assert raw("okay i like this..i tested it..we can commit and push") <= 0
    assert raw("i dont know if i like this.") <= 0
    assert raw("i like the countdown more than the bar") > 0
    # "the first ones you gave" points back at earlier output; "the first one" picks.
    assert not user_decision(make_view("the first ones you give have no value", MENU))
    assert user_decision(make_view("the first one", MENU))
    # A hypothetical opener floats an idea even without a question mark.
    floated = "ok, so what if we moved the key into the vault, so we could drop this table. follow it down."
    (hit,) = user_decision(make_view(floated, SINGLE), floor=float("-inf"))
    assert hit.raw < THRESHOLD


def test_echoing_the_one_thing_proposed_approves_it() -> None:
    """ "Would you like me to apply the fixes now?" - "apply all priority fixes now": the reply repeats the
    proposal's words, which approves it; it picks nothing."""
    single = "Most are cleanup items. Would you like me to automatically apply the high priority fixes now?"
    (hit,) = user_decision(
        make_view("perform remediation. apply all priority fixes now", single), float("-inf")
    )
    assert hit.raw < THRESHOLD
    # A proposal with an opt-out is one proposal too ("Go ahead, or want changes to the plan first?").
    opt_out = "The plan is reviewed. Apply the priority fixes now, or want changes to the plan first?"
    (hit,) = user_decision(make_view("apply the priority fixes now", opt_out), float("-inf"))
    assert hit.raw < THRESHOLD
    # Echoing one side of an either-or question still takes it.
    either = "Most are cleanup items. Want me to apply the priority fixes now, or leave them for the audit?"
    (hit,) = user_decision(make_view("apply the priority fixes now", either), float("-inf"))
    assert hit.raw >= THRESHOLD
