"""What the assistant's last turn offered, and whether the prompt takes one of it (decision evidence).

The labelling conventions (eval README) make dialogue structure decisive: picking among *offered*
alternatives is a decision, approving the one thing proposed is not, and a menu reply of a character
or two chooses nothing worth remembering. So the alternatives are read from the shape of the
assistant's closing turn, not from any team's vocabulary:

* an either-or question: "Want them as their own commit, or folded into the website commit?",
  "reset-to-nil per render vs. real stack ... Which do you want?";
* a labelled list (``1.`` / ``B)`` / ``**Option C**``) that the turn ends by asking about.

The prompt picks one when it names an offered label ("C but shorter", "do #2", "option 3", "the
second one"), all or none of them ("both", "neither"), or takes the distinctive words of exactly one
alternative ("folded in", "project-local, this is just a test"). Pure string work on capped tails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from extractors.patterns import normalise, tail
from lib.text import STOPWORDS

CHOICE_PREFIX = "alt:"
_ASK_TAIL = 400
_LIST_TAIL = 1800
_STEM = 5
_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}", re.A)
# Words that say nothing about which alternative is meant: function words, the assistant's offer
# phrasing and the vague "something else" tails.
_VAGUE = STOPWORDS | frozenset(
    "want wanted like would prefer rather should shall could also just first now then instead maybe "
    "thing things something else anything keep tweak tweaking more want me you your yours which one ones "
    "option options either way ready happy okay fine good better best".split()
)
_FIRST = re.compile(r"[.!?;\n]|\.\.|, (?:but|and|also|then)\b")
# (Not after "vs." or "e.g.": an abbreviation inside the sentence that offers the alternatives.)
_SENTENCE = re.compile(r"(?<=[.!?])(?<!\bvs\.)(?<!e\.g\.)(?<!i\.e\.)\s+|\n+")
# (One blank either side, not \s+: a run of blanks would be rescanned from each of its positions.)
_EITHER = re.compile(r",?[ \t](?:or|vs\.?|versus)[ \t]", re.A)
# A question that points at alternatives given just before it ("Which do you want?", "Which way?").
_WHICH = re.compile(
    r"\b(?:which|what) (?:one|way|approach|option|path|direction|do you|would you|of (?:these|them|the))|"
    r"\b(?:your call|say which|tell me which|let me know which|pick (?:one|a|the)|which\b[^?]{0,30}\?)",
    re.A,
)
# A question for information, not a choice: "do you have a direct IP or a hostname?", "is this the repo
# you meant, or ...?", "what's your main goal - X, Y or Z?".
_INFO_ASK = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:do you have|were you|are you (?:asking|referring|looking)|did you mean|is this the|"
    r"is that the|what(?:'s| is) your|could you (?:tell|clarify|provide)|can you (?:tell|clarify|provide))\b",
    re.A,
)
# An alternative that is only an opt-out: "something else", "a different one", "or not".
_VAGUE_ALT = re.compile(
    r"\b(?:something|anything|somewhere|someone) else\b|\bdifferent (?:one|thing|way|repo\w*|\w+ entirely)\b|"
    r"^\W*(?:not|no|nothing)\W*$|"
    # Holding off is no second course: "Want me to commit this, or hold off?", "... or want changes first?"
    r"\bhold off\b|^\W*(?:wait|not yet)\b|\bwant (?:any )?changes\b|\bchanges to (?:the|this) \w+ first\b",
    re.A,
)
# The end of the turn asks the user something (so a list above it is a menu, not a report): a "?" or
# one of these (`_asks`).
_ASK_WORDS = re.compile(
    r"\b(?:your call|say which|tell me which|let me know which|pick (?:one|a|the)|say the word|"
    r"which (?:one|way|approach|option)|(?:would|do) you prefer)\b",
    re.A,
)


def _asks(text: str) -> bool:
    """``text`` asks something: a "?" (a substring test; in one pattern with the words, sre would try
    every position for both) or one of `_ASK_WORDS`."""
    return "?" in text or _ASK_WORDS.search(text) is not None


# A labelled option line: "1. ...", "2) ...", "B) ...", "- **C** — ...", "**Option A:** ...", "(b) ...".
_LABELLED = re.compile(
    r"^[ \t>|]*(?:[-+][ \t]+)?(?:#{1,4}[ \t]+)?(?:option[ \t]+)?\(?([a-h]|\d{1,2})(?:[.):]|[ \t]+[-\u2013\u2014:])[ \t]*(\S[^\n]*)",
    re.M | re.I | re.A,
)
_WH = re.compile(r"\b(?:what|which|how|where|who|when|why)\b", re.A)
_WH_OPEN = re.compile(r"^\W*(?:(?:ok|okay|so|and|but|hmm)\W+){0,2}(?:what|how|why|where|who|when)\b", re.A)
# The closing ask points at a list above it.
_REFERS = re.compile(
    r"\b(?:which|these|those|one of|any of|option|options|above|following|listed|pick|choose|prefer|either|"
    r"your call|thoughts|what do you think)\b",
    re.A,
)
_PAREN_LABEL = re.compile(r"\(([a-h]|\d)\)", re.A)
# A number before a plural noun counts things ("if it can be like 2 stories", "use 3 colours"): no label.
_COUNT = r"(?!\s+(?!(?:is|was|does|sounds|looks|seems|works|makes|has)\b)[a-z]+s\b)"
# Naming an offered label in the reply: "option 3", "#2", "(b)", "go with 2", "do B".
_LABEL_REF = re.compile(
    r"(?:\b(?:option|proposal|approach|choice|variant|number)\s*|#|\()([a-h]|\d{1,2})\b"
    r"|\b(?:go with|do|take|pick|use|prefer|like)\s+([a-h]|\d{1,2})\b(?!['\-])" + _COUNT,
    re.A,
)
# A label opening the reply: "2", "C but ...", "1 does seem ...", "b)". Letters only when the operator
# typed them as capitals or on their own (not the article "a ...").
_LABEL_OPEN = re.compile(r"^\W*([a-h]|\d{1,2})" + _COUNT + r"(?:\W*$|[.),:;!]|\s+(?!['\-])\S)", re.I | re.A)
# "the second one", "let's do the first", "the latter": an offered alternative named by its place.
_ORDINAL = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:the (?:first|second|third|fourth|last)\b(?! (?:time|step|thing|part|ones)\b)|"
    r"(?:the )?(?:former|latter)\b|(?:first|second|third|last) (?:one|option)\b)",
    re.A,
)
_ALL = re.compile(
    r"^\W*(?:\w+\W+){0,2}?(?:both|neither|all of (?:them|these|those|it)|all (?:three|four|five|six|twelve|\d+))\b",
    re.A,
)


@dataclass(frozen=True, slots=True)
class Offer:
    """Alternatives put to the user: the distinctive word stems of each, and their labels when listed."""

    stems: tuple[frozenset[str], ...]
    labels: tuple[str, ...]  # "" for an unlabelled alternative
    listed: bool  # a labelled list rather than an either-or question
    # An either-or question's turn: the labels of a list above it stay nameable ("Which fix, or should
    # we move on?" - "option 4"); read only when the reply names a label.
    turn: str = ""

    def all_labels(self) -> frozenset[str]:
        named = frozenset(lab for lab in self.labels if lab)
        return named | frozenset(lab for lab, _ in _menu(self.turn)) if self.turn else named


def _unmark(text: str) -> str:
    """Markdown emphasis and code marks out (``**B**``, `` `flag` ``): plain replaces, cheaper than a regex."""
    return text.replace("*", "").replace("`", "").replace("__", "")


def _stems(text: str) -> frozenset[str]:
    return frozenset(w[:_STEM] for w in _WORD.findall(text) if w not in _VAGUE)


def _distinct(parts: list[str]) -> tuple[frozenset[str], ...]:
    """Each alternative's stems minus those two or more alternatives share."""
    stems = [_stems(p) for p in parts]
    seen: dict[str, int] = {}
    for s in stems:
        for w in s:
            seen[w] = seen.get(w, 0) + 1
    return tuple(frozenset(w for w in s if seen[w] == 1) for s in stems)


def _ask_index(sentences: list[str]) -> int:
    """The closing ask: the last sentence that asks something (a "?" or "tell me which"), or -1."""
    for i in range(len(sentences) - 1, -1, -1):
        if _asks(sentences[i]):
            return i
    return -1


def _either_or(sentences: list[str], i: int) -> list[str]:
    """The alternatives of the closing ask ``sentences[i]``: its own "X or Y", else (for a bare
    "which ...?") the "X or Y" / "X vs Y" of the one or two sentences before it."""
    q = sentences[i]
    if _INFO_ASK.match(q):
        return []
    parts = [p for p in _EITHER.split(q) if p.strip()]
    if len(parts) < 2 and _WHICH.search(q):
        for before in sentences[max(0, i - 2) : i][::-1]:
            parts = [p for p in _EITHER.split(before) if p.strip()]
            if len(parts) >= 2:
                break
    # "..., or is there something else?" / "or did you mean a different one?": one proposal and an opt-out.
    return parts if sum(not _VAGUE_ALT.search(p) for p in parts) >= 2 else []


def _last_list(listing: str) -> list[tuple[str, str]]:
    """The last run of labelled lines (labels in order, no restart), as (label, text) pairs."""
    runs: list[list[tuple[str, str]]] = []
    for m in _LABELLED.finditer(listing):
        lab, text = m.group(1).lower(), m.group(2).lower()
        if not runs or lab in {x for x, _ in runs[-1]} or lab in ("1", "a"):
            runs.append([])
        runs[-1].append((lab, text))
    return runs[-1] if runs else []


def _open_question(text: str) -> bool:
    """A wh-question: a wh-word before a "?" (searched up to the last "?", so each run is linear)."""
    q = text.rfind("?")
    return q > 0 and _WH.search(text, 0, q) is not None


@lru_cache(maxsize=64)
def _menu(turn: str) -> tuple[tuple[str, str], ...]:
    """The labelled options of the turn's last list, or () when it has none or it is a questionnaire."""
    options = _last_list(_unmark(normalise(tail(turn, _LIST_TAIL))))
    # A numbered run of open questions is a questionnaire (answering it informs, it does not choose);
    # "4. Build search functionality?" is still an option put as a question.
    if (
        len(options) < 2
        or len(options) > 12
        or sum(_open_question(t) for _, t in options) * 2 >= len(options)
    ):
        return ()
    return tuple(options)


@lru_cache(maxsize=64)
def offer_of(prev_raw: str) -> Offer | None:
    """The alternatives the assistant's turn ends by putting to the user, or None."""
    if not prev_raw:
        return None
    end = _unmark(normalise(tail(prev_raw, _ASK_TAIL)).lower())
    if not _asks(end):
        return None  # (most turns ask nothing: one search before any splitting)
    sentences = [s for s in _SENTENCE.split(end) if s.strip()][-4:]
    i = _ask_index(sentences)
    if i < 0:
        return None
    parts = _either_or(sentences, i)
    if parts:
        labs = []
        for p in parts:
            m = _PAREN_LABEL.search(p)
            labs.append(m.group(1) if m else "")
        return Offer(_distinct(parts), tuple(labs), False, prev_raw)
    # A list is the menu only when the closing ask points at it ("which of these", "option 2?").
    if not _REFERS.search(sentences[i]):
        return None
    options = _menu(prev_raw)
    if not options:
        return None
    return Offer(_distinct([t for _, t in options]), tuple(lab for lab, _ in options), True)


# A navigation menu: the turn ends by inviting a number or a letter to *look at* an entry, or a key to
# leave ("Reply with a number to view details", "`q` to exit"). A reply of a character or two to it
# browses a listing; it settles nothing between alternatives.
_NAVIGATE = re.compile(
    r"\b(?:reply|respond|enter|type|send|pick|choose|select)\b[^.\n?]{0,40}?\b(?:number|letter|index|key)\b"
    r"[^.\n?]{0,40}?\bto (?:view|see|open|show|display|read|inspect|expand|browse)\b|"
    r"(?:^|\W)q\W{0,2} to (?:exit|quit|leave|go back)\b",
    re.A,
)


def navigation_menu(prev_raw: str) -> bool:
    """The assistant's turn ends as a navigation menu over a listing (not alternatives for a decision)."""
    return _NAVIGATE.search(normalise(tail(prev_raw, _ASK_TAIL)).lower()) is not None


# The turn closes by proposing one course: "Would you like me to apply the fixes now?", "Say go and I'll
# plan it", or an either-or whose other side is an opt-out ("Go ahead, or want changes to the plan first?").
_ONE_ASK = re.compile(
    r"\b(?:would you like me to|do you want me to|want me to|shall i|say (?:go|the word))\b", re.A
)
_OR_TAIL = re.compile(r",?[ \t]or[ \t]([^?]{1,80})\?", re.A)


def proposes_one(prev_raw: str) -> bool:
    """The assistant's turn ends by proposing one course (a reply echoing it approves, it picks nothing)."""
    end = _unmark(normalise(tail(prev_raw, 200)).lower())
    if _ONE_ASK.search(end):
        return True
    m = _OR_TAIL.search(end)
    return m is not None and _VAGUE_ALT.search(m.group(1)) is not None


def _named_label(low: str, raw: str, offer: Offer) -> bool:
    """The reply names an offered label. ``raw`` is ``low`` before lower-casing (same offsets): a
    letter counts only as typed in capitals ("C but ...", "do B"), not as the article "a ..."."""
    m = _LABEL_OPEN.match(low)
    refs = list(_LABEL_REF.finditer(low[:300]))
    if m is None and not refs:
        return False
    offered = offer.all_labels()
    if m and m.group(1) in offered:
        lab, at = m.group(1), m.start(1)
        if lab.isdigit() or raw[at : at + 1].isupper() and (lab != "a" or raw[at + 1 : at + 2] in ")].:,;!"):
            return True
    for m in refs:
        if m.group(1) in offered:
            return True
        lab = m.group(2)
        if lab in offered and (lab.isdigit() or raw[m.start(2) : m.start(2) + 1].isupper()):
            return True
    return False


def _asks_back(low: str, first: str) -> bool:
    """The reply opens by asking ("how would you summarise the two levels", "X feels implausible?"): a
    question about an alternative weighs it, it does not take it."""
    return _WH_OPEN.match(first) is not None or low[len(first) : len(first) + 1] == "?"


def picks(low: str, raw: str, offer: Offer) -> str:
    """How the prompt takes one of ``offer``: "label", "all", "words" or "" (it does not)."""
    if _named_label(low, raw, offer):
        return "label"
    if _ALL.match(low):
        return "all"
    m = _ORDINAL.match(low)
    if m and len(offer.stems) >= 2:
        return "label"
    # The words of the reply's first sentence: what it opens with is what it answers.
    first = _FIRST.split(low[:300], maxsplit=1)[0]
    mine = _stems(first)
    if not mine or _asks_back(low, first):
        return ""
    hits = sorted((len(mine & s) for s in offer.stems), reverse=True)
    if hits[0] >= 1 and hits[0] > hits[1]:
        return "words"
    return ""


def choice_features(low: str, raw: str, prev_raw: str, words: int) -> dict[str, float]:
    """``alt:*`` features of a prompt against the assistant's turn before it (empty when nothing was
    offered): an offer was made, the prompt picks from it (and how), or it answers something else."""
    offer = offer_of(prev_raw)
    if offer is None:
        return {}
    f = {"alt:offered": 1.0, "alt:listed" if offer.listed else "alt:either_or": 1.0}
    how = picks(low, raw, offer)
    if how:
        f["alt:pick"] = 1.0
        f[f"alt:pick_{how}"] = 1.0
        if words <= 12:
            f["alt:pick_short"] = 1.0
    elif words <= 12:
        f["alt:other_short"] = 1.0
    return f
