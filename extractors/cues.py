"""Weighted cue tables shared by several extractors.

A cue is a precompiled regex and a weight; :func:`weigh` sums the weights of the cues that match
and remembers the first match, which extractors use to pick the sentence they store. Tables are
plain tuples so the per-call cost is one ``search`` per cue over an already capped, lower-cased
string.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extractors.gate import Gates, gate_of, is_anchored


class Cue:
    """A regex with a weight and a token gate (see :mod:`extractors.gate`)."""

    __slots__ = ("rx", "weight", "gates", "pattern")

    def __init__(self, pattern: str, weight: float = 1.0, flags: int = 0, need: str | None = None) -> None:
        """``need``: space-separated tokens to use as the gate when it cannot be derived."""
        self.rx = re.compile(pattern, flags)
        self.pattern = pattern
        self.weight = weight
        if need is not None:
            self.gates: Gates = (tuple(frozenset(g.split()) for g in need.split("&")),)
        elif is_anchored(self.rx):
            self.gates = ()
        else:
            self.gates = gate_of(self.rx) or ()

    @property
    def gated(self) -> bool:
        return bool(self.gates)

    def search(self, text: str, tokens: frozenset[str]) -> re.Match[str] | None:
        gates = self.gates
        if gates and not _passes(gates, tokens):
            return None
        return self.rx.search(text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Cue({self.pattern[:40]!r}, {self.weight})"


def _passes(gates: Gates, tokens: frozenset[str]) -> bool:
    for conj in gates:
        for part in conj:
            if part.isdisjoint(tokens):
                break
        else:
            return True
    return False


def cue(pattern: str, weight: float = 1.0) -> Cue:
    return Cue(pattern, weight)


def cues(*specs: tuple[str, float] | tuple[str, float, str]) -> tuple[Cue, ...]:
    """A cue table from ``(pattern, weight)`` or ``(pattern, weight, need)`` tuples."""
    return tuple(Cue(s[0], s[1], need=s[2] if len(s) > 2 else None) for s in specs)  # type: ignore[misc]


def weigh(table: Sequence[Cue], text: str, tokens: frozenset[str]) -> tuple[float, int]:
    """Sum of matching cue weights, and the offset of the strongest match (-1 when none)."""
    total = 0.0
    best_w = 0.0
    pos = -1
    for c in table:
        m = c.search(text, tokens)
        if m is not None:
            w = c.weight
            total += w
            if w > best_w:
                best_w, pos = w, m.start()
    return total, pos


def first(table: Sequence[Cue], text: str, tokens: frozenset[str]) -> tuple[int, re.Match[str]] | None:
    """Index and match of the first cue in ``table`` that matches."""
    for i, c in enumerate(table):
        m = c.search(text, tokens)
        if m is not None:
            return i, m
    return None


# --- things going wrong (shared by corrections and failed attempts) ---------------------------------
NEG_VERB = (
    r"\b(?:doesn't|does not|didn't|did not|isn't|is not|wasn't|aren't|won't|can't|cannot|couldn't|"
    r"still doesn't|still isn't|still not|never)"
)
FAIL_NOT_WORK = Cue(
    NEG_VERB + r"\s+(?:seem to\s+|really\s+|actually\s+|quite\s+|even\s+)?"
    r"(?:work|load|start|run|compile|build|help|fix|render|show|display|appear|change anything|"
    r"do anything|pass|connect|resolve|install|boot|sound|launch|open|trigger|apply|take effect)\b"
)
FAIL_NOT_ING = Cue(
    r"\bnot (?:working|loading|starting|showing|displaying|appearing|rendering|connecting|"
    r"resolving|building|compiling|passing|triggering|applied|fixed|solved|resolved)\b"
)
FAIL_STILL = Cue(
    r"\bstill\b[^.?!\n]{0,50}?(?:\bfail|\bbroken|\berror|\bnot\b|n't\b|\bsame\b|\bwrong|\bmissing|"
    r"\bhappen|\bcrash|\bgetting\b|\bshowing\b|\bshows\b|\bgrouped\b|\bthere\b|\bno\b|\bempty\b|"
    r"\bcurrent situation|\bstuck|\bhang|\btimes? ?out|\bred\b)"
)
FAIL_BROKE = Cue(
    r"\b(?:broke|broken|breaks|regress(?:ed|ion)|stopped working|no longer works?|"
    r"made it worse|worse than before)\b"
)
FAIL_WORDS = Cue(
    r"\b(?:fail(?:s|ed|ing|ure|ures)?|errors?|errored|crash(?:es|ed|ing)?|exception|unhappy|"
    r"timed? ?out|hangs?|stuck|panic(?:ked)?|segfault|traceback|denied|refused|red)\b"
)
GIVE_UP = Cue(
    r"\b(?:roll ?back|revert(?: it| that| this| the| to)?|undo (?:it|that|this|the)|go back to|"
    r"give up|giving up|concede|abandon|scrap (?:it|that|this)|back to the drawing|start over)\b"
)


def fails(low: str, tokens: frozenset[str]) -> bool:
    """The text reports that something does not work (still fails, broke, didn't load ...)."""
    return any(c.search(low, tokens) is not None for c in _FAILS)


# --- what the previous assistant message did --------------------------------------------------------
# The assistant said it worked. Single words are a token lookup; phrases need the regex.
SUCCESS_WORDS = frozenset(
    "done complete completed fixed resolved works working pass passes passed passing success successful "
    "successfully ready restored clean green updated added created implemented".split()
)
SUCCESS_PHRASES = Cue(
    r"\b(?:should (?:now )?(?:work|pass|be|fix)|now (?:works?|passes|shows|displays|renders|be|has|have|uses)|"
    r"production[- ]ready|all (?:checks|tests)|in place)\b"
)


def claims_success(text: str, tokens: frozenset[str]) -> bool:
    """Did this (assistant) text claim that something works, is done or passes?"""
    return not SUCCESS_WORDS.isdisjoint(tokens) or SUCCESS_PHRASES.search(text, tokens) is not None


PROPOSAL = Cue(
    r"\b(?:want me to|should i\b|would you like(?: me)? to|shall i\b|do you want me to|"
    r"i can (?:also )?\w+|ready to (?:commit|push|proceed)|let me know if|does that (?:sound|look|work))"
)
_OFFERS_WORDS = Cue(
    r"\b(?:which (?:one|would|do you|approach|option|path|of these|is|should)|would you (?:like|prefer)\b"
    r"[^?\n]{0,120}\bor\b|or would you\b|prefer\b|option [a-z0-9]\b|options?:|"
    r"choose\b|pick\b|either\b|or (?:should|do) (?:i|we)\b|your call|vs\b)"
)
# A numbered / lettered list of options; starts with a literal newline so ``re`` can skip ahead.
_OFFERS_LIST = re.compile(r"\n\s*(?:[-*]\s*)?(?:\*\*)?(?:option\s*)?(?:\d+|[a-h])[.):]\s")


def offers_choice(prev: str, tokens: frozenset[str]) -> bool:
    """The previous message put alternatives to the user (and is waiting for an answer)."""
    if _OFFERS_WORDS.search(prev, tokens) is not None:
        return True
    # A numbered list is only a menu when the message ends by asking something.
    return "?" in prev[-300:] and _OFFERS_LIST.search(prev) is not None


_FAILS = (FAIL_NOT_WORK, FAIL_NOT_ING, FAIL_STILL, FAIL_BROKE)
