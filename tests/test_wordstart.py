"""`word_start_search` searches a pattern opening with ``\\b`` as its twin without it plus a boundary check;
these tests hold it to the pattern's own search."""

from __future__ import annotations

import gc
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import extractors.pipeline  # noqa: F401  (builds every cue table)
from extractors.cues import Cue
from extractors.wordstart import word_start_search


def _same(rx: re.Pattern[str], text: str) -> None:
    want = rx.search(text)
    got = word_start_search(rx)(text)
    assert (got and (got.span(), got.groups())) == (want and (want.span(), want.groups())), rx.pattern


def _cues() -> list[Cue]:
    return [o for o in gc.get_objects() if isinstance(o, Cue)]


def test_literal_twins_only() -> None:
    """A twin is made only where it opens with a literal (``\\bstill``, ``\\b(?:which|would)``)."""
    assert word_start_search(re.compile(r"\bstill\b", re.A)) != re.compile(r"\bstill\b", re.A).search
    rx = re.compile(r"\b(?:is|are) done\b", re.A)
    assert word_start_search(rx) == rx.search
    rx = re.compile(r"\bx", re.I)
    assert word_start_search(rx) == rx.search
    assert sum(c.find != c.rx.search for c in _cues()) > 20


def test_edges() -> None:
    for pat in (r"\bab", r"\bab\b|\bac", r"\ba(b)?", r"\ba\w*$"):
        for flags in (re.A, 0):
            rx = re.compile(pat, flags)
            for text in ("", "a", "ab", "xab ab", "éab ab", "_ab", "ab_", "xxab", "a b ab", "xab", "acab ac"):
                _same(rx, text)


WORDS = ["still", "not", "instead", "of", "rather", "than", "your", "idea", "is", "better", "which", "one"]
WORDS += ["would", "you", "like", "don't", "i'll", "let", "me", "x", "_", "é", ".", ",", "\n", "?", "2"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), max_size=25).map(
        lambda ws: "".join(ws) if len(ws) % 4 == 0 else " ".join(ws)
    )
)
def test_every_cue_twin_finds_what_its_pattern_finds(text: str) -> None:
    for c in _cues():
        if c.find != c.rx.search:
            _same(c.rx, text)
