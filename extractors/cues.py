"""Weighted cue tables shared by several extractors.

A :class:`Cue` is a precompiled regex, a weight and a token gate (:mod:`extractors.gate`). A
:class:`CueTable` indexes its cues by gate token, so scoring a message only visits the cues whose
words occur in it: one C-level set intersection, then a regex search per surviving cue. That keeps
the pipeline at tens of microseconds per message although it knows a few hundred cues.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from extractors.gate import Gates, wordset
from extractors.patterns import View, tail
from extractors.stored_gates import derived_gate, parse_gates

# Words too common to be worth indexing a cue under when the cue has a rarer required part.
_COMMON = wordset(
    "i im ill id ive you we it is are was the a an to of and or this that be not do does let me my in on for "
    "with so just now"
)


class Cue:
    """A regex with a weight and a token gate (see :mod:`extractors.gate`)."""

    __slots__ = ("rx", "weight", "gates", "checks", "pattern", "starts", "literal", "find")

    def __init__(
        self, pattern: str, weight: float = 1.0, flags: int = 0, need: str | None = None, literal: str = ""
    ) -> None:
        """``need`` overrides the derived gate: space-separated tokens of which one must occur, ``&``
        between parts that must all hold, ``|`` between alternatives. ``literal``: a substring the
        text must contain (for cues on symbols such as an emoji, which have no tokens)."""
        # ASCII word semantics: ``\b`` / ``\w`` need no Unicode category lookups (the cue words are
        # English), which makes every search markedly cheaper; tokens (gate.tokens_of) use the same.
        self.rx = re.compile(pattern, flags | re.ASCII)
        self.pattern = pattern
        self.weight = weight
        self.literal = literal
        self.gates: Gates = parse_gates(need) if need is not None else derived_gate(self.rx) or ()
        # A match opens with one of the first words of some alternative, so the search can start at
        # the first place one of them occurs (when there are few enough to look for).
        first: set[str] = set()
        if need is None:
            for conj in self.gates:
                first |= conj[0]
        # (Not for "^..." patterns: they may consume punctuation before the first word, and an anchored
        # search is cheap anyway.)
        if pattern.startswith("^"):
            first.clear()
        self.starts: tuple[str, ...] = tuple(sorted(first)) if 0 < len(first) <= 4 else ()
        self.checks = GateCheck(self.gates)
        # The search to run once the gate holds, worked out once: the bare regex search when there is
        # no literal or start word to look for first (a Python call less per search).
        self.find: Callable[[str], re.Match[str] | None] = (
            self.rx.search if not literal and not self.starts else self._run
        )

    @property
    def gated(self) -> bool:
        return bool(self.gates)

    def search(self, text: str, tokens: frozenset[str]) -> re.Match[str] | None:
        if self.gates and not self.checks.passes(tokens):
            return None
        return self.find(text)

    def _run(self, text: str) -> re.Match[str] | None:
        if self.literal and self.literal not in text:
            return None
        if self.starts:
            at = -1
            for w in self.starts:
                f = text.find(w)
                if f >= 0 and (at < 0 or f < at):
                    at = f
            if at < 0:
                return None
            return self.rx.search(text, at)
        return self.rx.search(text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Cue({self.pattern[:40]!r}, {self.weight})"


def _rarity(part: frozenset[str]) -> tuple[float, int]:
    """Sort key of a gate part: parts of rarer words (fewer of them common) first."""
    return (sum(w in _COMMON for w in part) / len(part), len(part))


class GateCheck:
    """A cue's gate, checked from the words that rule most alternatives out.

    A gate holds when some alternative has every part in the text's tokens. Most alternatives of a
    gate fail on their rarest part ("want" of "i want to"), so one intersection of those parts' words
    with the tokens leaves only the alternatives still possible (mostly none or one) to check further,
    instead of a set test per alternative."""

    __slots__ = ("lead", "by_word", "rest")

    def __init__(self, gates: Gates) -> None:
        by_word: dict[str, list[int]] = {}
        rest: list[tuple[frozenset[str], ...]] = []
        for i, conj in enumerate(gates):
            lead, *others = sorted(conj, key=_rarity)
            rest.append(tuple(others))
            for w in lead:
                by_word.setdefault(w, []).append(i)
        self.lead = frozenset(by_word)
        self.by_word = {w: tuple(v) for w, v in by_word.items()}
        self.rest = tuple(rest)

    def passes(self, tokens: frozenset[str]) -> bool:
        rest = self.rest
        by_word = self.by_word
        for w in self.lead.intersection(tokens):
            for i in by_word[w]:
                for part in rest[i]:
                    if part.isdisjoint(tokens):
                        break
                else:
                    return True
        return False


class CueTable:
    """An ordered set of cues, indexed by gate token."""

    __slots__ = ("cues", "_keys", "_index", "_always", "_steps")

    def __init__(self, items: tuple[Cue, ...]) -> None:
        self.cues = items
        # Under each lead word (a word of an alternative's rarest part, `GateCheck`), the cues with such
        # an alternative and the parts that alternative still needs: the table checks every gate in one
        # loop over the text's lead words, instead of a `GateCheck.passes` call per candidate cue (two
        # in three candidates failed it). A cue's entries under one word are adjacent, in table order.
        index: dict[str, list[tuple[int, tuple[frozenset[str], ...]]]] = {}
        always: list[int] = []
        for i, c in enumerate(items):
            if not c.gates:
                always.append(i)
                continue
            check = c.checks
            for w, alts in check.by_word.items():
                for a in alts:
                    index.setdefault(w, []).append((i, check.rest[a]))
        self._index = {w: tuple(v) for w, v in index.items()}
        self._keys = frozenset(index)
        self._always = tuple(always)
        self._steps = tuple((c, c.find) for c in items)  # per cue, the search to run

    def __iter__(self) -> Iterator[Cue]:
        return iter(self.cues)

    def __len__(self) -> int:
        return len(self.cues)

    def candidates(self, tokens: frozenset[str]) -> tuple[int, ...] | list[int]:
        """Indices (in table order) of the cues whose gate the tokens pass (the ones that may match)."""
        hit = self._keys.intersection(tokens)
        return self._gated(hit, tokens) if hit else self._always

    def _gated(self, hit: frozenset[str], tokens: frozenset[str]) -> tuple[int, ...] | list[int]:
        """`candidates` once some lead words (`hit`) are among the tokens."""
        index = self._index
        if len(hit) == 1 and not self._always:
            out: list[int] = []
            last = -1
            for i, rest in index[next(iter(hit))]:  # one word's entries, already in table order
                if i == last:
                    continue
                for part in rest:
                    if part.isdisjoint(tokens):
                        break
                else:
                    out.append(i)
                    last = i
            return out
        found = set(self._always)
        for w in hit:
            for i, rest in index[w]:
                if i in found:
                    continue
                for part in rest:
                    if part.isdisjoint(tokens):
                        break
                else:
                    found.add(i)
        return sorted(found)

    def _found(self, text: str, tokens: frozenset[str]) -> Iterator[tuple[int, Cue, re.Match[str]]]:
        """Every matching cue in table order: its index, the cue and its match."""
        steps = self._steps
        for i in self.candidates(tokens):
            c, search = steps[i]
            m = search(text)
            if m is not None:
                yield i, c, m

    def weigh(self, text: str, tokens: frozenset[str]) -> tuple[float, int]:
        """Sum of matching cue weights, and the offset of the strongest match (-1 when none). (The loop
        of `_found` written out: a generator per call cost more than the search of most tables.)"""
        total = 0.0
        best_w = 0.0
        pos = -1
        hit = self._keys.intersection(tokens)  # `candidates`, so that no lead word (2 in 5) costs no call
        if not hit and not self._always:
            return total, pos
        steps = self._steps
        for i in self._gated(hit, tokens) if hit else self._always:
            c, search = steps[i]
            m = search(text)
            if m is not None:
                w = c.weight
                total += w
                if w > best_w:
                    best_w, pos = w, m.start()
        return total, pos

    def matches(self, text: str, tokens: frozenset[str]) -> Iterator[tuple[int, re.Match[str]]]:
        """Every matching cue, in table order, with its match."""
        return ((i, m) for i, _, m in self._found(text, tokens))

    def first(self, text: str, tokens: frozenset[str]) -> tuple[int, re.Match[str]] | None:
        """Index and match of the first cue (in table order) that matches."""
        return next(((i, m) for i, _, m in self._found(text, tokens)), None)


def table(*items: Cue) -> CueTable:
    return CueTable(tuple(items))


Spec = tuple[str, float] | tuple[str, float, str]


def _make(spec: Spec | Cue) -> Cue:
    if isinstance(spec, Cue):
        return spec
    return Cue(spec[0], spec[1], need=spec[2]) if len(spec) == 3 else Cue(spec[0], spec[1])


def cues(*specs: Spec | Cue) -> CueTable:
    """A cue table from ``(pattern, weight)`` / ``(pattern, weight, need)`` tuples or ready cues."""
    return CueTable(tuple(_make(s) for s in specs))


# `weigh(table, text, tokens)`: the method itself, not a function around it (a Python call per use).
weigh = CueTable.weigh


# --- things going wrong (shared by corrections and failed attempts) ---------------------------------
NEG_VERB = (
    r"\b(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not|wasn'?t|aren'?t|won'?t|can'?t|cannot|couldn'?t|"
    r"still doesn'?t|still isn'?t|still not|never)"
)
FAIL_NOT_WORK = Cue(
    NEG_VERB + r"\s+(?:seem to\s+|really\s+|actually\s+|quite\s+|even\s+)?"
    r"(?:work|load|start|run|compile|build|help|fix|render|show|display|appear|change anything|"
    r"do anything|pass|connect|resolve|install|boot|sound|launch|open|trigger|apply|take effect|stay|stick|save|"
    r"persist|update|scroll|respond|close|reset|refresh)\b"
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
    return _FAILS.first(low, tokens) is not None


# Review feedback relayed by the user, whoever wrote it (a person, a review bot, a linter): "the reviewer
# flagged ...", "@someone says ...", "valid points raised by <anyone> on the PR" (endorsed: a bare "there's a
# comment from X on the PR" asks to look at it). The structure, not the
# reviewer's name: a cue naming one review tool would fit the teams that use it and nobody else.
REVIEW_RELAY = (
    r"(?:\b(?:reviewer'?s?|the review|(?:the |review |ai )?bot)|@[\w\-]+)\s+(?:says|said|flagged|notes|points out|"
    r"found|suggests|comments?)\b|"
    r"\b(?:valid|good|fair|great|important|real|legit|legitimate|solid|useful|relevant) (?:comments?|points?|"
    r"feedback|remarks?|findings?|suggestions?|concerns?) (?:raised |left |made |posted )?"
    r"(?:by|from) @?[\w\-]+ (?:on|in) (?:the |this |that |our )?(?:[\w\-]+ )?(?:pr|mr|pull request|review)\b"
)
# Pasted code-review feedback ("PR feedback: ...", "In src/x.ts around lines 76 to 82, ..."): its "avoid X" /
# "don't X" are remarks about the code under review, not the user's standing instructions.
REVIEW_PASTE = re.compile(
    r"^(?:pr |code )?(?:feedback|review|review comments?)\s*:|^(?:code )?review (?:for|of) (?:the )?(?:pr|mr|pull request)\b|"
    r"^in [\w@/.\-]+\.\w+,? (?:around|at|on|near) lines?\b|"
    + REVIEW_RELAY
    + r"|\b(?:pr|code|reviewer'?s?) (?:feedback|review comments?|comments)\b",
    re.A,
)
# Every match of REVIEW_PASTE holds one of these (or opens with "in "): most prompts hold none, and a
# substring test costs far less than the pattern, in which sre tries every position.
_REVIEW_HINTS = "review feedback comment bot @ point remark finding suggestion concern".split()


def review_paste(head: str) -> bool:
    """`REVIEW_PASTE.search(head)`, ruled out first by the words any match holds."""
    if not head.startswith("in ") and not any(h in head for h in _REVIEW_HINTS):
        return False
    return REVIEW_PASTE.search(head) is not None


# A turn that announces a new topic ("next thing I wanted to change ...", "pivoting really quickly, ...",
# "another thing, ...", "on a different note") is about something else than what the assistant just did:
# no correction of it, and often new work (a goal).
NEW_TOPIC = Cue(
    r"\b(?:next|another|one more|other|different) thing\b|\bpivot(?:ing)?\b|\bswitching gears\b|\bon a (?:different|"
    r"separate|side) note\b|\bunrelated(?: to this)?,|\bchanging (?:the )?(?:topic|subject)\b|\bmoving on\b"
)

# --- what the previous assistant message did --------------------------------------------------------
# The assistant said it worked. Single words are a token lookup; phrases need the regex.
SUCCESS_WORDS = wordset(
    "done complete completed fixed resolved works working pass passes passed passing success successful "
    "successfully ready restored clean green updated added created implemented"
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
    r"\b(?:which (?:one|option|approach|path|of these|would you|do you prefer|do you want|should (?:i|we))|"
    r"would you (?:like|prefer)\b"
    r"[^?\n]{0,120}\bor\b|or would you\b|prefer\b|option [a-z0-9]\b|options?:|"
    r"choose\b|pick\b|either\b|or (?:should|do) (?:i|we)\b|or (?:if )?you'?d (?:like|prefer|rather)\b|your call|vs\b)"
)
# A numbered / lettered list of options; starts with a literal newline so ``re`` can skip ahead.
# ([^\S\n]* after it, not \s*: each \n of a blank run would rescan the rest of the run.)
OFFERS_LIST = re.compile(r"\n[^\S\n]*(?:[-*]\s*)?(?:\*\*)?(?:option\s*)?(?:\d+|[a-h])[.):]\s")


def offers_choice(prev: str, tokens: frozenset[str]) -> bool:
    """The previous message put alternatives to the user (and is waiting for an answer)."""
    if _OFFERS_WORDS.search(prev, tokens) is not None:
        return True
    # A numbered list is only a menu when the message ends by asking something.
    return "?" in prev[-300:] and OFFERS_LIST.search(prev) is not None


def prev_claims_success(v: View) -> bool:
    """`claims_success` of the message a prompt answers, worked out once per view (the correction score
    and the features both ask)."""
    if v.prev_success < 0:
        v.prev_success = int(claims_success(v.prev, v.prev_tok))
    return v.prev_success == 1


def prev_offers_choice(v: View) -> bool:
    """`offers_choice` of the end of the message a prompt answers, once per view (decisions, features)."""
    if v.prev_offers < 0:
        v.prev_offers = int(offers_choice(tail(v.prev, 900), v.prev_tok))
    return v.prev_offers == 1


_FAILS = CueTable((FAIL_NOT_WORK, FAIL_NOT_ING, FAIL_STILL, FAIL_BROKE))
