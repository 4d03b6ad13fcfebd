"""Cheap pre-filters for cue regexes.

Python's ``re`` cannot skip ahead for a pattern that opens with ``\\b`` and an alternation, so each
such search costs microseconds per kilobyte. Most cues cannot match most messages, and whether they
*can* is decidable from the words of the message: a cue ``\\b(?:doesn't|does not) work`` needs the
token ``doesn`` or ``does``. :func:`gate_of` derives that token set from the compiled pattern (via the
standard library's regex parser); :func:`tokens_of` splits a message into the same kind of tokens
once. A cue whose gate is disjoint from the message's tokens is skipped without running the regex.
When a gate cannot be derived safely the cue simply always runs.
"""

from __future__ import annotations

import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import re._constants as _c
    import re._parser as _p
else:  # pragma: no cover - Python 3.10
    import sre_constants as _c
    import sre_parse as _p

_MAX_GATE = 64


def wordset(words: str) -> frozenset[str]:
    """A frozenset from a space-separated word list."""
    return frozenset(words.split())


# Every ASCII character that is not a word character, as a space: an ASCII text translated by it splits
# into exactly its ``\\w+`` tokens (ASCII).
_SEPARATORS = str.maketrans({chr(i): " " for i in range(128) if not (chr(i).isalnum() or i == 95)})


def tokens_of(text: str) -> frozenset[str]:
    """The ASCII ``\\w+`` tokens of ``text`` (which should already be lower-cased).

    ASCII, like the cue regexes (compiled with ``re.ASCII``), so a gate never hides a match. The text is
    translated and split (C loops without a match object per token: 7 % cheaper than ``\\w+`` on an
    ASCII text, 15 % on others); any other character than ASCII separates tokens, as it does for the
    regex, so a text that has some is first made ASCII with each of them as a "?" (`str.isascii` is a
    flag test)."""
    if not text.isascii():
        text = text.encode("ascii", "replace").decode("ascii")
    return frozenset(text.translate(_SEPARATORS).split())


def _is_word_char(code: int) -> bool:
    # ASCII, as in ``tokens_of`` and the ``re.ASCII`` cue regexes.
    return code < 128 and (chr(code).isalnum() or code == 95)


_ZERO_WIDTH = {_c.AT, _c.ASSERT, _c.ASSERT_NOT}


class _NoGate(Exception):
    pass


def _walk(nodes: Any, states: set[tuple[str, bool]]) -> set[tuple[str, bool]]:
    """Advance (prefix, ended) states over a node sequence; raise _NoGate when unsure."""
    for op, av in nodes:
        live = {s for s in states if not s[1]}
        if not live:
            return states
        done = states - live
        if op is _c.LITERAL:
            # A separator (the apostrophe too: \w+ tokens stop there) ends a started token.
            live = {(p + chr(av), False) for p, _ in live} if _is_word_char(av) else _end(live)
        elif op in _ZERO_WIDTH:
            if op is _c.AT and av is _c.AT_BOUNDARY:
                live = {(p, bool(p)) for p, _ in live}
        elif op is _c.SUBPATTERN:
            live = _walk(av[-1], live)
        elif op is _c.BRANCH:
            out: set[tuple[str, bool]] = set()
            for alt in av[1]:
                out |= _walk(alt, set(live))
            live = out
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            lo, hi, sub = av
            if lo == 0 and hi == 1:
                live = live | _walk(sub, set(live))
            elif _only_non_word(sub):
                live = _end(live) if lo > 0 else live | _end(live)
            else:
                raise _NoGate
        elif op is _c.IN:
            if _only_non_word([(op, av)]):
                live = _end(live)
            elif all(sop is _c.LITERAL and _is_word_char(sav) for sop, sav in av) and len(av) <= 8:
                live = {(p + chr(sav), False) for p, _ in live for _sop, sav in av}
            else:
                raise _NoGate
        else:
            raise _NoGate
        states = done | live
        if len(states) > _MAX_GATE:
            raise _NoGate
    return states


def _end(states: set[tuple[str, bool]]) -> set[tuple[str, bool]]:
    return {(p, bool(p)) for p, _ in states}


def _only_non_word(nodes: Any) -> bool:
    for op, av in nodes:
        if op is _c.LITERAL:
            if _is_word_char(av):
                return False
        elif op is _c.IN:
            for sop, sav in av:
                if sop is _c.LITERAL:
                    if _is_word_char(sav):
                        return False
                elif sop is _c.CATEGORY:
                    if sav not in (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD):
                        return False
                else:
                    return False
        else:
            return False
    return True


Gates = tuple[tuple[frozenset[str], ...], ...]
_MAX_ALTERNATIVES = 48


def gate_of(rx: re.Pattern[str]) -> Gates | None:
    """When the pattern can match, as token sets: any alternative whose sets all meet the text.

    The result is a disjunction of conjunctions: ``\\bthe (?:issue|bug) is|\\bflaky\\b`` gives
    ``(({the}, {issue, bug}, {is}), ({flaky},))``. Only alternatives that open at a word boundary
    (``\\b`` or ``^``) are gated, and a conjunction stops at the first part that is not a spelled-out
    word (``\\w+``, ``.``, a class of letters). None when some alternative cannot be gated at all.
    """
    if rx.flags & re.IGNORECASE:
        return None  # tokens come from lower-cased text; keep case-folding cues ungated
    try:
        nodes = list(_p.parse(rx.pattern, rx.flags).data)
    except Exception:  # pragma: no cover - defensive
        return None
    try:
        seqs = _expand(nodes, 0)
    except _NoGate:
        return None
    out: list[tuple[frozenset[str], ...]] = []
    for seq in seqs:
        if not seq:
            return None
        op, av = seq[0]
        if op is not _c.AT or av not in (_c.AT_BOUNDARY, _c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
            return None
        conj = _sequence_gates(seq[1:])
        if not conj:
            return None
        out.append(tuple(conj))
    return tuple(dict.fromkeys(out)) or None


def _expand(nodes: list[Any], depth: int) -> list[list[Any]]:
    """Split a leading alternation (after an optional boundary) into whole sequences."""
    if not nodes or depth > 4:
        return [nodes]
    op, av = nodes[0]
    if op is _c.BRANCH:
        seqs: list[list[Any]] = []
        for alt in av[1]:
            seqs.extend(_expand(list(alt) + nodes[1:], depth + 1))
            if len(seqs) > _MAX_ALTERNATIVES:
                raise _NoGate
        return seqs
    if op is _c.SUBPATTERN and av[-1] and list(av[-1])[0][0] in (_c.BRANCH, _c.AT, _c.SUBPATTERN):
        return _expand(list(av[-1]) + nodes[1:], depth + 1)
    if op is _c.AT and len(nodes) > 1 and nodes[1][0] in (_c.BRANCH, _c.SUBPATTERN):
        return [
            [nodes[0], *seq] if not (seq and seq[0][0] is _c.AT) else seq
            for seq in _expand(nodes[1:], depth + 1)
        ]
    return [nodes]


def _sequence_gates(nodes: list[Any]) -> list[frozenset[str]]:
    gates: list[frozenset[str]] = []
    states: set[tuple[str, bool]] = {("", False)}
    for node in nodes:
        try:
            states = _walk([node], states)
        except _NoGate:
            break
        if all(ended for _, ended in states):
            words = {p for p, _ in states}
            if "" in words:
                break
            gates.append(frozenset(words))
            states = {("", False)}
    # A word still open at the end of the pattern may continue in the text ("\\bfail" in "failing").
    return gates
