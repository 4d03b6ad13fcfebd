"""Pushback without cue words and review feedback named by its structure (issue 11, extraction part):
what the operator's turn does to the assistant's last one, read from small transcripts the tests write."""

from __future__ import annotations

import re
from pathlib import Path

from test_extract_families import _kinds, _prompts, _session

from extractors.corrections import correction_score
from extractors.cues import fails
from extractors.dialogue import dialogue_features
from extractors.model import STANDING_KINDS, Extraction, Utterance
from extractors.patterns import make_view
from extractors.pipeline import analyse, extract

SHOWN = "I made the header gold, the title bigger and the footer match the header. Reload to see it."


def _after_shown(tmp_path: Path, prompts: list[str], name: str) -> dict[str, list[Extraction]]:
    """Extractions per prompt, each prompt answering the assistant's report :data:`SHOWN`."""
    _session(tmp_path, [(SHOWN, p) for p in prompts], name)
    return _prompts(tmp_path)


def test_finding_fault_with_a_quality_is_a_correction(tmp_path: Path) -> None:
    pushback = [
        "still too dark.",
        "its also a little too faded",
        "the gold is not gold enough, it looks dull",
        "The footer does not seem to end in the right colour.",
        "uuum, that has already been fixed",
        "When hovering, the badge colour also isn't correctly blended with the header.",
        "the title seems to not pick up the new font",
        "the footer still has a different colour than the header",
        "Why don't we reuse the header component for the footer instead?",
    ]
    got = _after_shown(tmp_path, pushback, "quality")
    for p in pushback:
        assert "correction" in _kinds(got[p]), p
    # A degree word before a fault ("pretty harsh") is evidence too, though on its own below the
    # precision-first cut of corrections (0.50).
    harsh = make_view("the border between the panels is pretty harsh", SHOWN)
    assert correction_score(harsh, False)[0] >= 0.7
    # The result is still not as asked: a correction of the output, not a report that an attempt failed.
    assert "failed_attempt" not in _kinds(got["still too dark."])
    for p in ("still too dark.", "the footer still has a different colour than the header"):
        v = make_view(p, SHOWN)
        assert not fails(v.low, v.tok), p


def test_review_feedback_is_recognised_by_its_structure_whoever_wrote_it(tmp_path: Path) -> None:
    relayed = [
        "some very valid points raised by zorblint on the PR. Please make the docs consistent.",
        "some very valid points raised by qwerty-reviewer on the PR. Please make the docs consistent.",
        "the reviewer flagged a race in the loader cache, fix that before merging",
    ]
    asks = ["ok there's a comment from zorblint on pr 12. please respond to it"]
    got = _after_shown(tmp_path, relayed + asks, "relay")
    for t in relayed:
        assert "correction" in _kinds(got[t]), t
    for t in asks:
        assert "correction" not in _kinds(got[t]), t


def test_no_cue_names_a_review_tool() -> None:
    """A cue that names one review bot fits the teams that use it and nobody else."""
    root = Path(__file__).resolve().parent.parent / "extractors"
    named = re.compile(r"coderabbit|copilot|dependabot|sonarqube", re.I)
    for path in root.glob("*.py"):
        if path.name.startswith("scrub") or path.name == "secret_patterns.py":
            continue
        assert not named.search(path.read_text(encoding="utf-8")), path.name


def test_dialogue_features_read_the_reply_against_the_last_turn() -> None:
    prev = "I changed the footer colour to match the header and pushed the branch."
    fault = dialogue_features(make_view("no, the footer colour still does not match the header", prev))
    assert fault["dlg:fault_prev"] == 1.0 and fault["dlg:overlap"] >= 0.5
    fresh = dialogue_features(make_view("please write a parser for the vendor invoice export files", prev))
    assert "dlg:fault_prev" not in fresh and fresh["dlg:new_topic"] == 1.0
    order = dialogue_features(make_view("update them and push", "Should I also update the tests?"))
    assert order["dlg:order_after_q"] == 1.0 and order["dlg:imperative"] == 1.0
    why = dialogue_features(make_view("why are we using a second cache here?", prev))
    assert why["dlg:why_q"] == 1.0 and "dlg:info_q" not in why
    assert "dlg:overlap" not in dialogue_features(make_view("still too dark", None))


def test_a_change_asked_as_a_question_is_a_goal(tmp_path: Path) -> None:
    """ "Can we adjust X by ...?" / "could you also add X" state the work, like "please add X"."""
    asks = [
        "Can we adjust the landing page by replacing the tagline with the product name in bold and a larger font?",
        "could you also add a schema evolution document, similar to the metadata evolution document we wrote",
    ]
    got = _after_shown(tmp_path, asks, "ask")
    for a in asks:
        assert "goal" in _kinds(got[a]), a


def test_purpose_clauses_and_questions_state_no_standing_rule(tmp_path: Path) -> None:
    """ "... so we only have larger commits" is what one change should achieve; "is it that you always
    have to ..." asks. Neither is an instruction meant to hold beyond the step."""
    loose = [
        "Rework the branch so we only have larger commits grouped by topic.",
        "the last segment should follow the gradient so that it's always correct when printed",
        "is it that you always have to run the explain step first",
    ]
    rule = "always run the linter before you commit"
    got = _after_shown(tmp_path, [*loose, rule], "purpose")
    for t in loose:
        assert not _kinds(got[t]) & {"ban", *STANDING_KINDS}, t
    assert "standing_order" in _kinds(got[rule])


def test_a_hypothesis_asked_as_a_question_is_not_a_correction(tmp_path: Path) -> None:
    ask = "Could it be that the two colour stops are too far apart, so the blend cannot be computed here?"
    assert "correction" not in _kinds(_after_shown(tmp_path, [ask], "hypothesis")[ask])


def test_a_pasted_conversation_is_not_the_users_voice(tmp_path: Path) -> None:
    """What a summariser is handed ("Summarize ...\nUser: ...\nAgent: ...") holds other people's turns:
    no candidate of any kind, whatever the model would make of them."""
    pasted = (
        "Summarize this part of a conversation in two sentences.\n\nUser: I want to add hooks that write a "
        "summary for every session\nAgent: I'll add the hook and a test.\nUser: no, that's wrong, the hook "
        "must run at the end\nAgent: You're right."
    )
    assert not _kinds(_after_shown(tmp_path, [pasted], "pasted")[pasted])
    u = Utterance("u-1", "s-1", "user", pasted, "2026-01-01T00:00:00Z", "/repo", prev_assistant_text=SHOWN)
    assert analyse(u) is None


def test_the_assistant_announcing_a_settled_choice_is_a_decision() -> None:
    """A choice said as settled, whatever is chosen: "X it is", a decided approach, something dropped."""
    asked = "Which layout do you want for the settings page, the sidebar one or the tabbed one?"
    said = [
        "Good pick, the tabbed layout it is, since it keeps every setting on one screen.",
        "Decided approach: one shared loader with a per-file cache, because both pages read the same files.",
        "Scrapped the standalone sidebar because it duplicated the tabs, and kept the tabbed layout.",
    ]
    for text in said:
        u = Utterance("a-1", "s-1", "assistant", text, prev_user_text=asked)
        assert "decision" in {e.kind for e in extract(u)}, text
