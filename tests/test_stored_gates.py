"""The stored gates (`extractors/gates.json`) are the gates `gate_of` derives: every cue's, and nothing
else; a cue built from the file holds the derived gate; a pattern the file lacks is derived."""

from __future__ import annotations

import gc
import re

from hypothesis import given
from hypothesis import strategies as st

from extractors import stored_gates
from extractors.cues import Cue
from extractors.gate import gate_of
from extractors.stored_gates import asked, derive_all, derived_gate, parse_gates, spell

FIX = "the cues or gate.py changed: run `python -m extractors.stored_gates` and commit extractors/gates.json"


def test_the_file_is_every_cue_gate_derived_now() -> None:
    derived = derive_all()  # every extractor module loaded: every cue has asked for its gate
    assert len(derived) > 200
    assert stored_gates._stored() == derived, FIX


def test_cues_hold_the_derived_gate() -> None:
    derive_all()
    cues = [
        o for o in gc.get_objects() if isinstance(o, Cue) and o.pattern in asked and o.rx.flags == re.ASCII
    ]
    assert len(cues) > 200
    for c in cues:
        assert c.gates == (gate_of(c.rx) or ()), c.pattern


def test_a_pattern_not_stored_is_derived() -> None:
    rx = re.compile(r"\bthe (?:real )?(?:issue|bug) (?:is|was) not stored\b", re.ASCII)
    assert rx.pattern not in stored_gates._stored()
    assert derived_gate(rx) == gate_of(rx)
    assert derived_gate(re.compile(r"\bfail")) is None  # other flags (no re.ASCII): derived, not looked up


WORD = st.text("abcxyz_019", min_size=1, max_size=5)
GATES = st.lists(
    st.lists(st.frozensets(WORD, min_size=1, max_size=4), min_size=1, max_size=4).map(tuple),
    min_size=1,
    max_size=5,
).map(tuple)


@given(GATES)
def test_spelled_gates_parse_back(gates: tuple[tuple[frozenset[str], ...], ...]) -> None:
    assert parse_gates(spell(gates)) == gates
