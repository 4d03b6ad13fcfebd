"""Durable preferences and facts about the operator, told apart from verdicts on the thing at hand
(issue 11, preference class): small transcripts the tests write, read as the indexer reads them."""

from __future__ import annotations

from pathlib import Path

from test_extract_families import _kinds, _prompts, _session

from extractors.model import Extraction

SHOWN = "I rewrote the intro copy and moved the map to the top. Reload to see it. Want me to commit?"
PREFERENCE = {"implicit_preference", "domain_fact"}


def _after_shown(tmp_path: Path, prompts: list[str], name: str) -> dict[str, list[Extraction]]:
    _session(tmp_path, [(SHOWN, p) for p in prompts], name)
    return _prompts(tmp_path)


def test_a_verdict_on_the_thing_at_hand_is_not_a_preference(tmp_path: Path) -> None:
    verdicts = [
        "i like this but some of it sounds a little complicated",
        "yeah i like that, commit and push",
        "i dont like the idea of using the map for this",
        "ew i hate all of those. it sounds too generated",
        "i like the islands but the planet got whiter",
    ]
    tastes = [
        "too many words + i dont like emdashes",
        "I like using small commits with long messages",
        "I like it when the tests read like documentation",
        # A verdict backed by the operator's own experience with the thing says something durable.
        "I very much like this idea, and I used it already with some success in another project.",
    ]
    got = _after_shown(tmp_path, verdicts + tastes, "verdicts")
    for p in verdicts:
        assert not _kinds(got[p]) & PREFERENCE, p
    for p in tastes:
        assert "implicit_preference" in _kinds(got[p]), p


def test_preferences_said_of_things_in_general(tmp_path: Path) -> None:
    prompts = [
        "New item: review our tooling each session. Free off the shelf tools are always preferred.",
        "I am just playing with ideas and trying to keep this as serverless as possible.",
        "name it env[xxx] with [xxx] being the python version",
        "you need to prefix them with acme- before publishing",
    ]
    got = _after_shown(tmp_path, prompts, "general")
    for p in prompts:
        assert "implicit_preference" in _kinds(got[p]), p
    # The name of one thing is a one-off instruction, not a convention.
    one_name = "oops, please fix the name of the shortcut. just call it Tmux Main"
    got = _after_shown(tmp_path, [one_name], "one-name")
    assert "implicit_preference" not in _kinds(got[one_name])


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
    got = _after_shown(tmp_path, prompts, "places")
    for p in prompts:
        assert "domain_fact" in _kinds(got[p]), p
    # Text that merely runs on something, in a pasted story, is not about the operator's setup.
    story = "Pilot, the ship survived. Your ship runs on mission records, scattered across this planet."
    got = _after_shown(tmp_path, [story], "story")
    assert "domain_fact" not in _kinds(got[story])
