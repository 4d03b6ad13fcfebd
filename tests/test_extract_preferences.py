"""Durable preferences and facts about the operator, told apart from verdicts on the thing at hand
(issue 11, preference class): small transcripts the tests write, read as the indexer reads them."""

from __future__ import annotations

from pathlib import Path

from test_extract_dialogue import _after_shown
from test_extract_families import _kinds

PREFERENCE = {"implicit_preference", "domain_fact"}


def _found(tmp_path: Path, kind: str, found: list[str], not_found: list[str], name: str) -> None:
    """Each prompt of ``found`` (answering the assistant's report) yields ``kind``; none of ``not_found`` does."""
    got = _after_shown(tmp_path, found + not_found, name)
    for p in found:
        assert kind in _kinds(got[p]), p
    for p in not_found:
        assert kind not in _kinds(got[p]), p


def test_a_verdict_on_the_thing_at_hand_is_not_a_preference(tmp_path: Path) -> None:
    verdicts = [
        "i like this but some of it sounds a little complicated",
        "yeah i like that, commit and push",
        "i dont like the idea of using the map for this",
        "ew i hate all of those. it sounds too generated",
        "i like the islands but the planet got whiter",
        "i like this, I had a look at it and the header reads well",
    ]
    tastes = [
        "too many words + i dont like emdashes",
        "I like using small commits with long messages",
        "I like it when the tests read like documentation",
        # A verdict backed by the operator's own experience with the thing says something durable.
        "I very much like this idea, and I used it already with some success in another project.",
    ]
    _found(tmp_path, "implicit_preference", tastes, verdicts, "verdicts")
    got = _after_shown(tmp_path, verdicts, "verdicts-facts")
    for p in verdicts:
        assert not _kinds(got[p]) & PREFERENCE, p


def test_preferences_said_of_things_in_general(tmp_path: Path) -> None:
    prompts = [
        "New item: review our tooling each session. Free off the shelf tools are always preferred.",
        "I am just playing with ideas and trying to keep this as serverless as possible.",
        "name it env[xxx] with [xxx] being the python version",
        "you need to prefix them with acme- before publishing",
    ]
    # The name of one thing is a one-off instruction, not a convention.
    one_name = "oops, please fix the name of the shortcut. just call it Tmux Main"
    _found(tmp_path, "implicit_preference", prompts, [one_name], "general")


def test_where_things_live_is_a_fact(tmp_path: Path) -> None:
    prompts = [
        "Next phase. You can use my configuration too, which is located at my home folder, called .shellrc",
        "I completed the steps. the metrics dashboard is deployed here: https://metrics.example.net/",
        "oh we also have skills Documents/work/skills",
        "check again on 10.0.12.7",
        "ok the client id is 8812-abc.apps.example.com, update the env example",
        "Hello buddy, welcome to the repo. It's a fresh repo for us to work out of.",
        "update: work-laptop and home-desktop are seperate clients",
    ]
    # Text that merely runs on something, in a pasted story, is not about the operator's setup.
    story = "Pilot, the ship survived. Your ship runs on mission records, scattered across this planet."
    _found(tmp_path, "domain_fact", prompts, [story], "places")
