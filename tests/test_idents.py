"""Identifier parts (index/store/idents.py): the C-level scan finds exactly the camel-case words
that reading every word would, whatever surrounds them (digits, punctuation, non-ASCII text)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.idents import identifier_parts

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
