"""`last_announced` runs the case-sensitive twin of `ANNOUNCED` on lower-cased text when that finds the
same spans; these tests hold it to the case-insensitive pattern itself."""

from __future__ import annotations

import re
import string
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.announced import ANNOUNCED, last_announced
from extractors.folded import CASE_ONLY as _CASE_ONLY


def _reference(text: str) -> str | None:
    last = None
    for last in ANNOUNCED.rx.finditer(text):  # noqa: B007
        pass
    return None if last is None else last.group(0)


def _every_char() -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def test_lower_casing_decides_every_atom_as_ignorecase_does() -> None:
    """For each character that lower-cases to one character and is not in `_CASE_ONLY`, every atom of
    the pattern matches it under IGNORECASE exactly when the plain atom matches its lower-case form."""
    chars = [c for c in _every_char() if len(c.lower()) == 1 and c not in _CASE_ONLY]
    letters = sorted(set(re.sub(r"[^a-z]", "", ANNOUNCED.rx.pattern)))
    any_letter = re.compile("[a-z]", re.I).fullmatch
    near = [c for c in chars if any_letter(c) or c.lower() in string.ascii_lowercase]
    for atom in [*letters, "'", " "]:
        ci, plain = re.compile(re.escape(atom), re.I).fullmatch, re.compile(re.escape(atom)).fullmatch
        assert [c for c in near if ci(c)] == [c for c in near if plain(c.lower())], atom
    for atom in (r"\s", r"[^.\n:]"):
        ci, plain = re.compile(atom, re.I).fullmatch, re.compile(atom).fullmatch
        assert all(bool(ci(c)) == bool(plain(c.lower())) for c in chars), atom


WORDS = [
    "let me",
    "Let Me",
    "I'll",
    "ill",
    "I will",
    "i'm going to",
    "Now I'll",
    "IM",
    "try",
    "Use",
    "SWITCH to",
]
WORDS += [
    "fix",
    "set up",
    "install",
    "the parser",
    "config",
    "x.y",
    "a:b",
    "\u0130",
    "\u0131",
    "\u017f",
    "\u212a",
]
WORDS += ["\u03a3", "\u00e9", "\U0001f600", "\n", ".", " ", "  ", "\u2026"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join))
def test_same_as_the_case_insensitive_pattern(text: str) -> None:
    assert last_announced(text) == _reference(text)


def test_announcements_found() -> None:
    text = "Ok. I'll switch to the streaming parser. Then LET ME TRY the ſlow path İn full"
    assert last_announced(text) == _reference(text) == "LET ME TRY the ſlow path İn full"
    assert last_announced("I'll use the new Config loader") == "I'll use the new Config loader"
