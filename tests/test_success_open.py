"""`success_open` answers as `SUCCESS_OPEN.match` does: the fast path asks only the cheap alternatives
when the head of the text holds none of the last alternative's words."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.success_open import _HEAD, _WORDS, SUCCESS_OPEN, success_open

_PIECES = (
    *_WORDS,
    "excellent",
    "perfect",
    "great",
    "done",
    "almost there",
    "all ",
    "complete",
    "set",
    "fix",
    "fixe",
    "pushed_",
    "xlanded",
    "all tests passed",
    "all checks passing",
    "now",
    "the build",
    " ",
    "  ",
    ".",
    "!",
    "?",
    "\n",
    ",",
    "—",
    "** ",
    "✅ ",
    "é",
    "x" * 30,
    "y" * 59,
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_success_open_equals_the_pattern(pieces: list[str]) -> None:
    low = "".join(pieces)
    assert success_open(low) == (SUCCESS_OPEN.match(low) is not None)


def test_the_last_alternative_at_its_bounds() -> None:
    """A success word starting at each offset around the last one the pattern allows (6 + 60), after
    punctuation, letters or both, with and without the sentence end it needs."""
    for word in _WORDS:
        for lead in range(0, _HEAD - len(word) + 4):
            for fill in ("x", "-", " "):
                for pre in ("", "!!", "** ", "\u2014 "):
                    for end in (".", "", " ok!", " a b c\n."):
                        low = pre + fill * lead + " " + word + end
                        assert success_open(low) == (SUCCESS_OPEN.match(low) is not None), low


def test_examples() -> None:
    assert success_open("excellent! we've fixed the loader.")
    assert success_open("network is fully operational!")
    assert success_open("verdict landed, exploit fixed, everything pushed.")
    assert success_open("almost there")
    assert not success_open("the loader still fails on the second run.")
    assert not success_open("x" * 70 + " fixed it.")
