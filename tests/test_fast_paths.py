"""Cheaper forms of extractor steps hold to the forms they replace (same answers on the same input)."""

from __future__ import annotations

import gc
import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import extractors.pipeline  # noqa: F401  (builds every cue table)
from extractors.assistant_decisions import _HEADING, _INSTEAD, _says_instead
from extractors.choices import _ASK_WORDS, _asks
from extractors.confidence import ClassModel, models, probabilities
from extractors.cues import Cue
from extractors.gate import Gates
from extractors.patterns import Hit
from extractors.pipeline import _raws

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


def _cues() -> list[Cue]:
    return [o for o in gc.get_objects() if isinstance(o, Cue)]


def _passes_before(gates: Gates, tokens: frozenset[str]) -> bool:
    """The gate test `GateCheck` replaced: some alternative with every part among the tokens."""
    return any(all(not part.isdisjoint(tokens) for part in conj) for conj in gates)


GATE_WORDS = sorted({w for c in _cues() for conj in c.gates for part in conj for w in part})


@settings(max_examples=300, deadline=None)
@given(st.frozensets(st.sampled_from(GATE_WORDS), max_size=40))
def test_gate_check_equals_the_gate(tokens: frozenset[str]) -> None:
    for c in _cues():
        assert c.checks.passes(tokens) == _passes_before(c.gates, tokens), c.pattern


INSTEAD_WORDS = ["instead", "insteadof", "rather", "than", "rather than", "ratherthan", "x", "_", ".", "\n"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(INSTEAD_WORDS), max_size=10).map(
        lambda ws: "".join(ws[::2]) + " ".join(ws[1::2])
    )
)
def test_says_instead_equals_the_pattern(text: str) -> None:
    assert _says_instead(text) == (_INSTEAD.search(text) is not None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["decision", "goal", "progress"]), st.floats(-3, 3)), max_size=8))
def test_raws_equal_the_max_per_kind(pairs: list[tuple[str, float]]) -> None:
    hits = [Hit(kind, "", 0.0, {}, raw) for kind, raw in pairs]
    for kind in ("decision", "goal", "progress"):
        want = max((h.raw for h in hits if h.kind == kind), default=-1.0)
        assert _raws(hits).get(kind, -1.0) == want


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab '\"\u2019\u2018\u201c\u201d\u00e9\u2014")))
def test_normalise_equals_the_four_replaces(text: str) -> None:
    from extractors.patterns import normalise

    want = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    assert normalise(text) == want


def _probability_before(model: ClassModel, features: dict[str, float]) -> float:
    """A class model's probability as first written: every feature's term added, zeros too."""
    z = model.bias
    for name, x in features.items():
        z += model.weights.get(name, 0.0) * x
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def test_the_shipped_weights_are_finite() -> None:
    """What makes skipping a zero feature exact: a finite weight times zero adds a zero."""
    for role in models().values():
        for m in role.values():
            assert math.isfinite(m.bias) and all(math.isfinite(w) for w in m.weights.values())


FEATURE_VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 0.125, -1.0]), st.floats(-50, 50, allow_nan=False)
)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_probabilities_equal_each_class_model(data: st.DataObject) -> None:
    role = data.draw(st.sampled_from(sorted(models())))
    role_models = dict(models()[role])
    if data.draw(st.booleans()):
        # A class whose bias is a zero of either sign and which weighs nothing: its sum stays that zero.
        role_models["other"] = ClassModel(data.draw(st.sampled_from([0.0, -0.0])), {}, 0.5, 1.0, 0.5)
    names = sorted({n for m in role_models.values() for n in m.weights}) + ["not_a_feature"]
    features = data.draw(st.dictionaries(st.sampled_from(names), FEATURE_VALUES, max_size=40))
    assert probabilities(role_models, features) == {
        c: _probability_before(m, features) for c, m in role_models.items()
    }
