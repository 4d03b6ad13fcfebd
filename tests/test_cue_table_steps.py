"""The cue tables' precomputed steps (`CueTable._steps`, the one-word candidate shortcut) find what
running every cue through `Cue.search` finds: same sum, same strongest offset, same matches in order;
the per-view memos of the previous message answer what the checks they remember answer."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors import assistant_voice, facts, goals, rules, truth  # noqa: F401  (tables built at import)
from extractors.cues import (
    REVIEW_PASTE,
    CueTable,
    claims_success,
    offers_choice,
    prev_claims_success,
    prev_offers_choice,
    review_paste,
)
from extractors.gate import tokens_of
from extractors.patterns import make_view, tail

TABLES = [o for o in gc.get_objects() if isinstance(o, CueTable)]
# Words of the cues themselves, so generated texts hit gates and regexes often.
WORDS = sorted({w for t in TABLES for c in t for conj in c.gates for part in conj for w in part})[:400]
TEXTS = st.lists(
    st.one_of(st.sampled_from(WORDS), st.sampled_from([" ", ", ", ". ", "\n", "!", "?", "'", "not", "2"])),
    max_size=40,
).map(" ".join)


def _naive(table: CueTable, text: str) -> list[tuple[int, int, int]]:
    tokens = tokens_of(text)
    out = []
    for i, c in enumerate(table.cues):
        m = c.search(text, tokens)
        if m is not None:
            out.append((i, m.start(), m.end()))
    return out


def test_tables_found() -> None:
    assert len(TABLES) >= 10


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(min_value=0, max_value=10_000))
def test_steps_equal_every_cue_searched(text: str, pick: int) -> None:
    table = TABLES[pick % len(TABLES)]
    tokens = tokens_of(text)
    expected = _naive(table, text)
    assert [(i, m.start(), m.end()) for i, m in table.matches(text, tokens)] == expected
    first = table.first(text, tokens)
    assert (first and (first[0], first[1].start(), first[1].end())) == (expected[0] if expected else None)
    total, best, pos = 0.0, 0.0, -1
    for i, start, _ in expected:
        w = table.cues[i].weight
        total += w
        if w > best:
            best, pos = w, start
    assert table.weigh(text, tokens) == (total, pos)
    assert sorted(table.candidates(tokens)) == list(table.candidates(tokens))


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(min_value=0, max_value=10_000))
def test_candidates_are_the_cues_whose_gate_holds(text: str, pick: int) -> None:
    """The table checks the gates in its own index: the cues whose own `GateCheck` (and, before it, the
    plain gate: some alternative with every part among the tokens) holds, in table order."""
    table = TABLES[pick % len(TABLES)]
    tokens = tokens_of(text)
    plain = [
        i
        for i, c in enumerate(table.cues)
        if not c.gates or any(all(not part.isdisjoint(tokens) for part in conj) for conj in c.gates)
    ]
    assert list(table.candidates(tokens)) == plain
    assert plain == [i for i, c in enumerate(table.cues) if not c.gates or c.checks.passes(tokens)]


@settings(max_examples=200, deadline=None)
@given(TEXTS, TEXTS)
def test_memos_of_the_previous_message_equal_the_checks(text: str, prev: str) -> None:
    """`prev_claims_success` / `prev_offers_choice` answer once per view what the checks answer."""
    v = make_view(text, prev)
    for _ in range(2):  # computed, then remembered
        assert prev_claims_success(v) == claims_success(v.prev, v.prev_tok)
        assert prev_offers_choice(v) == offers_choice(tail(v.prev, 900), v.prev_tok)


REVIEW_WORDS = ["review", "feedback", "comments", "comment", "reviewer's", "the bot", "bot", "@alice", "in"]
REVIEW_WORDS += [
    "src/app.py,",
    "around",
    "line",
    "valid",
    "points",
    "raised",
    "by",
    "on",
    "the",
    "pr",
    "code",
    ":",
]
REVIEW_WORDS += [
    "says",
    "flagged",
    "for",
    "of",
    "pull request",
    "both",
    "suggestion",
    "concerns",
    "remark",
    "x",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(REVIEW_WORDS), max_size=14).map(" ".join))
def test_review_paste_equals_the_pattern(text: str) -> None:
    assert review_paste(text) == (REVIEW_PASTE.search(text) is not None)


def test_review_paste_examples() -> None:
    for text in (
        "code review: rename it",
        "review of the pr",
        "in src/app.py, around line 3 the loop",
        "the bot says it leaks",
        "@alice flagged the race",
        "valid points raised by bob on the pr",
        "pr feedback is in",
    ):
        assert review_paste(text) and REVIEW_PASTE.search(text), text
    assert not review_paste("fix the parser please")
