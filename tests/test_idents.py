"""Identifier parts (index/store/idents.py): the C-level scan finds exactly the camel-case words
that reading every word would, whatever surrounds them (digits, punctuation, non-ASCII text)."""

from __future__ import annotations

import itertools
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.idents import _CLASS, identifier_parts

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def every_word(text: str) -> str:
    """The definition, word by word: every word with an upper-case letter after its first and a
    lower-case one, split into its parts (texts under the 400-part cap)."""
    parts: set[str] = set()
    for word in set(_WORD.findall(text)):
        if word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()):
            continue
        parts.update(p.lower() for p in _PART.findall(word) if len(p) > 1)
    return " ".join(sorted(parts))


def test_camel_and_pascal_case_are_split() -> None:
    assert identifier_parts("call parseConfig then HTTPServerError") == "config error http parse server"


def test_plain_words_give_nothing() -> None:
    assert identifier_parts("Parse the CONFIG file, then word and Word2x again") == ""


def test_digits_between_the_letters() -> None:
    # a lower-case letter, digits, an upper-case one; upper-case letters with digits between them
    assert identifier_parts("utf8Decode x A1Bcd y AB1cd") == "ab bcd cd decode utf"
    assert identifier_parts("12fooBar") == "bar foo"  # leading digits are not part of the word
    assert identifier_parts("Ab1C") == "ab"  # single-letter parts are dropped


def test_non_ascii_and_punctuation_separate_words() -> None:
    assert identifier_parts("éparseConfigé snake_caseName dotted.fieldName") == "case config field name parse"


_ALPHABET = "aAbBzZ09_ .-é\n"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_same_parts_as_reading_every_word(text: str) -> None:
    assert identifier_parts(text) == every_word(text)


def _before(text: str) -> str:
    """The scan as it was before the per-file memo (2026-11-29), the reference for the cap's order."""
    data = text.encode("utf-8", "replace")
    cls = data.translate(_CLASS)
    runs: set[bytes] = set()
    for place in (b"aA", b"AAa"):
        at = cls.find(place)
        while at >= 0:
            end = cls.find(b" ", at)
            end = len(cls) if end < 0 else end
            runs.add(data[cls.rfind(b" ", 0, at) + 1 : end])
            at = cls.find(place, end)
    words = {w for w in (r.decode("ascii").lstrip("0123456789") for r in runs) if len(w) >= 4}
    seen: dict[str, None] = {}
    for word in sorted(words):
        if word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()):
            continue
        for part in _PART.findall(word):
            if len(part) > 1:
                seen[part.lower()] = None
        if len(seen) >= 400:
            break
    return " ".join(sorted(seen))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=_ALPHABET, max_size=60), max_size=8))
def test_a_files_memo_changes_nothing(texts: list[str]) -> None:
    memo: dict[bytes, tuple[str, ...]] = {}
    for text in texts:
        assert identifier_parts(text, memo) == identifier_parts(text) == _before(text)


@settings(max_examples=20, deadline=None)
@given(st.randoms(use_true_random=False))
def test_past_the_cap_the_same_parts_as_before(rnd: random.Random) -> None:
    """512 distinct parts in camel-case pairs, in any order: the first 400 in word order are kept."""
    syllables = ["".join(p) for p in itertools.product("abcdefgh", repeat=3)]
    rnd.shuffle(syllables)
    text = " ".join(a + b.title() for a, b in zip(syllables[::2], syllables[1::2]))
    got = identifier_parts(text, {})
    assert got == _before(text) and len(got.split()) >= 400
