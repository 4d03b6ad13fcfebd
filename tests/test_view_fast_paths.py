"""Cheaper forms of the view's and the assistant decisions' steps hold to the forms they replace: the
line test with its log-level regex behind a two-letter test, the tokens of an ASCII text by translate
and split, the restatement test that lower-cases the prompt only when needed, and the cue gates given
by hand (every match passes them)."""

from __future__ import annotations

import gc
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors import assistant_decisions as ad
from extractors import assistant_voice as av
from extractors import rules
from extractors.assistant_decisions import _HEADING, _has_heading, _restates, _says_instead
from extractors.cues import Cue, CueTable
from extractors.decisions import overlap
from extractors.features import _clip, _evidence
from extractors.gate import tokens_of
from extractors.patterns import (
    _FUNCTION_WORDS,
    _LOG_LEVEL,
    _NOISY_PREFIX,
    _Q_OPEN,
    _SPEAKER_TAGS,
    _WH_OPEN,
    _noisy_line,
    clip,
    make_view,
    normalise,
    sentence_at,
)


def _noisy_line_before(line: str, stripped: str, after_prose: bool) -> bool:
    """`patterns._noisy_line` as it was. The tests that changed (the log-level regex, the prefix tuple,
    the eight spaces, the aligned columns and the speaker tag, each tested on every line that got that
    far, with no guard) could each only answer True, all before the first test that can answer False;
    so the old function was "any of them, or the tests that remain", and those are the new function
    whenever all of them are false (its guards only ever turn a test off)."""
    if not stripped:
        return True
    lowered = stripped.lower().split()
    if (
        _LOG_LEVEL.match(stripped)
        or stripped.startswith(_NOISY_PREFIX)
        or "        " in stripped
        or stripped.count("    ") >= 2
        and (len(lowered) < 8 or len(_FUNCTION_WORDS.intersection(lowered)) < 2)
        or stripped.split()[0].lower() in _SPEAKER_TAGS
    ):
        return True
    return _noisy_line(line, stripped, after_prose)


LINE_PARTS = [
    "ERROR", "ERR!", "WARN", "WARNING", "INFO", "DEBUG", "FATAL", "TRACE", "PANIC", "ER", "WA", "Er", "IN",
    "npm", "the", "we", "is", "fix", "it", "a", "x=1", "key:", "User:", "def", "const", "Traceback", 'File "',
    "12:30", "--", "++", "=>", "$", "at", "...", "===", "#", "##", "\u2022", "\u2714", "\u00e9", "\u2026",
    "user:", "**Assistant:**", "Claude:", "AI:",
    " ", " ", "  ", "    ", "\t", ":", ";", "{", "}", "(", ".", "?", "!", ",", "-", "*", "1", "_", "\u00a0",
]  # fmt: skip
LINES = st.lists(st.sampled_from(LINE_PARTS), min_size=1, max_size=14).map("".join)


@settings(max_examples=600, deadline=None)
@given(LINES, st.booleans())
def test_noisy_line_equals_the_form_before(line: str, after_prose: bool) -> None:
    stripped = line.strip()
    assert _noisy_line(line, stripped, after_prose) == _noisy_line_before(line, stripped, after_prose)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_noisy_line_equals_the_form_before_on_any_text(line: str) -> None:
    stripped = line.strip()
    for after_prose in (False, True):
        assert _noisy_line(line, stripped, after_prose) == _noisy_line_before(line, stripped, after_prose)


_WORD = re.compile(r"\w+", re.ASCII)


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(
        st.text(max_size=80),
        st.text(st.characters(max_codepoint=127), max_size=80),
        st.lists(
            st.sampled_from(["ab", "_", "9", " ", "\u00e9", "\u2014", "\U0001f600", "\ud800", "\udfff", "?"])
        ).map("".join),
    )
)
def test_tokens_equal_the_regex_tokens(text: str) -> None:
    """Lone surrogates too (not in `st.text`): the ASCII encoder's "replace" makes each a "?"."""
    assert tokens_of(text) == frozenset(_WORD.findall(text))


def _restates_before(sentence: str, prev_user: str) -> bool:
    prev = normalise(prev_user[:1500]).lower()
    if not (_says_instead(sentence) and _says_instead(prev)):
        return False
    return overlap(sentence, prev) >= 2


SWITCH_WORDS = "instead rather than of use redis postgres the cache let me x . \n Instead RATHER".split(" ")
SWITCH_TEXT = st.lists(st.sampled_from(SWITCH_WORDS + [" "]), max_size=16).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(SWITCH_TEXT, SWITCH_TEXT)
def test_restates_equals_the_form_before(sentence: str, prev_user: str) -> None:
    assert _restates(sentence, prev_user) == _restates_before(sentence, prev_user)


@settings(max_examples=300, deadline=None)
@given(SWITCH_TEXT, st.integers(min_value=0, max_value=200))
def test_a_sentence_that_says_instead_comes_from_prose_that_says_it(text: str, pos: int) -> None:
    """`assistant_decision` cuts the sentence for the restatement test only when the lower-cased prose
    holds "instead" or "rather": no sentence of other prose says "instead" / "rather than"."""
    v = make_view(text, None, human=False)
    for content in (sentence_at(v.prose, pos), clip(v.prose)):
        if _says_instead(content.lower()):
            assert "instead" in v.low or "rather" in v.low


# The cues whose gate is given by hand (`need`) in the assistant decisions' switch table, and words that
# make their regexes match often.
HAND_GATED = [c for c in ad._SWITCH if c.pattern.startswith((r"\b\w+ it is", r"\byour "))]
HAND_GATED += [c for c in rules._STANDING if "always" in c.pattern and "(?<!can )" in c.pattern]
GATE_WORDS = (
    "it is your version idea plan design solution s better cleaner stronger approved agreed recorded noted "
    "locked decided chosen approach option linear style always can not n't nt use run been".split()
)
GATE_PHRASES = [
    "your plan is better",
    "your design's cleaner",
    "your own idea is much stronger",
    "approved and recorded",
    "agreed, noted",
    "linear style it is",
    "decided approach",
    "always run",
    "we always\tuse",
]
GATE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(GATE_WORDS),
        st.sampled_from(GATE_PHRASES),
        st.sampled_from([" ", ", ", ". ", "'", "!", " -", ", since", "\n"]),
    ),
    max_size=14,
).map(" ".join)


def test_hand_gated_cues_found() -> None:
    assert len(HAND_GATED) == 3 and isinstance(ad._SWITCH, CueTable)


@settings(max_examples=600, deadline=None)
@given(GATE_TEXT)
def test_every_match_of_a_hand_gated_cue_passes_its_gate(text: str) -> None:
    tokens = tokens_of(text)
    for c in HAND_GATED:
        if c.rx.search(text) is not None:
            assert c.checks.passes(tokens), (c.pattern, text)


HEADING_PARTS = "#|##|#####| |\n|Decided|approach|VERDICT|x|choice:|#x|\u00e9".split("|")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(HEADING_PARTS), max_size=16).map("".join))
def test_has_heading_equals_the_pattern(text: str) -> None:
    assert _has_heading(text) == (_HEADING.search(text) is not None)


def _all_cues() -> list[Cue]:
    return [o for o in gc.get_objects() if isinstance(o, Cue)]


CUE_WORDS = sorted({w for c in _all_cues() for conj in c.gates for part in conj for w in part})[:300]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(CUE_WORDS), st.sampled_from([" ", ", ", ".", "\n", "'"])), max_size=30
    ),
    st.integers(min_value=0, max_value=100_000),
)
def test_a_cues_find_is_its_run(words: list[str], pick: int) -> None:
    """`Cue.find` (the bare regex search where there is nothing to look for first) finds what `_run` does."""
    text = " ".join(words)
    cues = _all_cues()
    for c in (cues[pick % len(cues)], cues[(pick * 7 + 3) % len(cues)]):
        a, b = c.find(text), c._run(text)
        assert (a and a.span()) == (b and b.span())


Q_WORDS = "what why how where who is are can could would do when which whatever hows ? . \n x".split(" ") + [
    " "
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(Q_WORDS), max_size=14).map(" ".join))
def test_question_equals_the_form_before(text: str) -> None:
    """The view's question test with its cheap parts first (a first letter, "?" in the head) answers as
    the regexes did before them."""
    v = make_view(text, None)
    before = (
        v.low.rstrip().endswith("?")
        or bool(_WH_OPEN.match(v.first))
        or bool(_Q_OPEN.match(v.first))
        and "?" in v.low[:300]
    )
    assert v.question == before


EVIDENCE = st.dictionaries(
    st.sampled_from(["correction", "decision", "goal", "progress", "fact"]),
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([-2.0, 4.0, -0.0, 0.0, -2, 4, 0, -3, 5]),
    ),
)


@settings(max_examples=400, deadline=None)
@given(EVIDENCE)
def test_evidence_features_equal_the_clipped_comprehension(evidence: dict[str, float]) -> None:
    before = {f"h:{k}": _clip(x) for k, x in evidence.items()}
    after = _evidence(evidence)
    assert [(k, repr(x), type(x)) for k, x in after.items()] == [
        (k, repr(x), type(x)) for k, x in before.items()
    ]


PLAN_PARTS = "next steps|i need|remaining|plan|:| |\n|\n\n|1.|2)|-|*|x|\t".split("|")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PLAN_PARTS), max_size=16).map("".join))
def test_plan_list_equals_the_form_before(low: str) -> None:
    before = any(
        low[max(0, m.start() - 12) : m.start()].endswith(av._PLAN_LABELS) for m in av._PLAN_LIST.finditer(low)
    )
    assert av._plan_list(low) == before
