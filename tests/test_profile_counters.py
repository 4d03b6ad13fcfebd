"""Profile counters of a chunk (extractors/profiles.py): machines, typed vocabulary, learned typos."""

from __future__ import annotations

from extractors.profiles import chunk_counters, learned_typos
from lib.context import Context
from lib.model import Message


def _msg(i: int, text: str, cwd: str | None, kind: str = "prompt") -> Message:
    return Message(f"u{i}", "s1", None, "user", kind, "2026-01-02T09:30:00Z", text, cwd=cwd)


def test_machine_counted_once_per_message_by_home_directory() -> None:
    cwds = ["/home/ana/p", "/Users/bo/q", "/home/ana/p", "C:\\Users\\cy\\r", "/srv/app", None, "/home/ana/p"]
    msgs = [_msg(i, "x", cwd, kind="tool_result") for i, cwd in enumerate(cwds)]
    c = chunk_counters(msgs, [])
    machines = {k[1]: n for k, n in c.items() if k[0] == "machine"}
    assert machines == {"linux|ana": 3, "macos|bo": 1, "windows|cy": 1}


def test_vocabulary_keeps_mixed_case_names_and_acronyms() -> None:
    m = _msg(
        1,
        "Fix parseConfig and the JSON loader in AeroSpace; Python says McD isnt Word, KUBERNETESAPI",
        "/home/a/p",
    )
    c = chunk_counters([m], [(m, Context())])
    vocab = {k[1] for k in c if k[0] == "vocab"}
    assert vocab == {"parseConfig", "JSON", "AeroSpace"}


def test_typos_are_learned_from_the_words_the_assistant_used() -> None:
    reference = "The Dispatcher reads the dispatcher queue; the DISPATCHER restarts. Configuration too."
    assert learned_typos("the dispacher hangs, check the configuraton", reference) == [
        ("dispacher", "dispatcher"),
        ("configuraton", "configuration"),
    ]
    assert learned_typos("teh dispatcher", None) == [("teh", "the")]


def test_every_test_runner_holds_a_checked_word() -> None:
    """The word check before the runner regex never hides a runner."""
    from extractors.profiles import _TEST_WORDS, TEST_RUNNERS

    assert all(any(w in runner for w in _TEST_WORDS) for runner in TEST_RUNNERS)
