"""Cheaper forms of extractor steps hold to the forms they replace (same answers on the same input)."""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.assistant_decisions import _HEADING
from extractors.choices import _ASK_WORDS, _asks
from extractors.confidence import ClassModel

# `choices._asks` replaced this one pattern.
_ASKS_BEFORE = re.compile(r"\?|" + _ASK_WORDS.pattern, re.A)

ASK_WORDS = (
    "your call say which tell me let know pick one a the word way approach option would do you prefer".split()
)
ASK_WORDS += ["?", ".", "\n", "x", "which", "picks", "wayside"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ASK_WORDS), max_size=16).map(" ".join))
def test_asks_equals_the_one_pattern(text: str) -> None:
    assert _asks(text) == (_ASKS_BEFORE.search(text) is not None)


HEADING_WORDS = ["#", "##", "#####", " ", "\n", "Decided", "approach", "verdict", "x", "choice:", "#x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(HEADING_WORDS), max_size=14).map("".join))
def test_every_heading_match_holds_hash_space(text: str) -> None:
    if _HEADING.search(text):
        assert "# " in text


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-4, 4), max_size=8),
    st.dictionaries(st.sampled_from("abcdefghijkl"), st.floats(-2, 4), max_size=12),
    st.floats(-3, 3),
)
def test_probability_equals_the_full_dot_product(
    weights: dict[str, float], features: dict[str, float], bias: float
) -> None:
    """Skipping the features without a weight gives the very same float as adding 0.0 * x for them."""
    z = bias
    for name, x in features.items():
        z += weights.get(name, 0.0) * x
    want = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
    assert ClassModel(bias, weights, 0.5, 0.5).probability(features) == want


def test_gate_checks_are_the_gates_reordered() -> None:
    """`Cue.checks` tests each alternative's parts in another order: all of them must hold either way."""
    import gc

    import extractors.pipeline  # noqa: F401  (builds every cue table)
    from extractors.cues import Cue

    for c in (o for o in gc.get_objects() if isinstance(o, Cue)):
        assert len(c.checks) == len(c.gates)
        for mine, theirs in zip(c.checks, c.gates, strict=True):
            assert sorted(map(sorted, mine)) == sorted(map(sorted, theirs))
