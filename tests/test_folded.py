"""`Folded` runs a case-insensitive pattern as its plain twin over the lower-cased text when that finds
the same; these tests hold it to the case-insensitive pattern itself."""

from __future__ import annotations

import re
import string
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.folded import CASE_ONLY, Folded, same_when_lowered
from extractors.profiles import _NEGATIVE, _PLEASE, _POSITIVE

FOLDED = (_POSITIVE, _NEGATIVE, _PLEASE)


def _every_char() -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def test_lower_casing_decides_every_atom_as_ignorecase_does() -> None:
    """For each character that lower-cases to one character and is not in `CASE_ONLY`, every atom of the
    folded patterns (their letters and punctuation, ``\\w``: ``\\b`` is made of it) matches it under
    IGNORECASE exactly when the plain atom matches its lower-case form."""
    chars = [c for c in _every_char() if len(c.lower()) == 1 and c not in CASE_ONLY]
    literals = sorted({c for f in FOLDED for c in re.sub(r"\\[bw]|[()|?:*\\]", "", f.rx.pattern)} | {"?"})
    assert set(literals) <= set(string.ascii_lowercase + " '?")
    for atom in literals:
        ci, plain = re.compile(re.escape(atom), re.I).fullmatch, re.compile(re.escape(atom)).fullmatch
        assert all(bool(ci(c)) == bool(plain(c.lower())) for c in chars), atom
    ci, plain = re.compile(r"\w", re.I).fullmatch, re.compile(r"\w").fullmatch
    assert all(bool(ci(c)) == bool(plain(c.lower())) for c in chars)


WORDS = ["thanks", "Thank You", "PERFECT", "great", "nice", "love it", "works now", "That Works", "lgtm"]
WORDS += ["wrong", "Broken", "still not", "doesn't work", "doesnt WORK", "again?", "Frustrating", "stop"]
WORDS += ["please", "PLS", "plz", "pleased", "stopped", "greatly", "x", "?", "'", "\n", "-", "_"]
WORDS += ["\u0130", "\u0131", "\u017f", "\u212a", "\u03a3", "\u00e9", "\U0001f600", "TH\u0130S", "\u017ftop"]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), max_size=20).map(
        lambda ws: "".join(ws) if len(ws) % 3 == 0 else " ".join(ws)
    )
)
def test_same_as_the_case_insensitive_pattern(text: str) -> None:
    low = text.lower()
    for f in FOLDED:
        assert f.found(text, low) == (f.rx.search(text) is not None), f.rx.pattern


def test_falls_back_where_lower_casing_moves_or_folds_characters() -> None:
    assert not same_when_lowered("\u0130 stop", "\u0130 stop".lower())  # İ lower-cases to two characters
    assert not same_when_lowered("\u017ftop", "\u017ftop")  # ſ matches s only under IGNORECASE
    assert same_when_lowered("STOP \u212a", "stop k")  # the Kelvin sign lower-cases to a plain k
    f = Folded(r"\bstop\b")
    assert f.found("\u017fTOP", "\u017ftop") and f.found("\u0130 STOP", "\u0130 STOP".lower())
    assert not f.found("stopped", "stopped")
