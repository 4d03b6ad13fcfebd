"""Decisions (X2): a choice between alternatives is made or announced.

User side: picking an option the assistant offered ("2", "C sounds best", "install usage4claude"),
"X instead of Y", "let's go with / use / skip ...", accepting a recommendation, dropping or deferring
something. Assistant side: an announced approach switch or choice with a reason ("npm is blocked, let
me build from the local clone"), not a recommendation still waiting for the user.
"""

from __future__ import annotations

import re

from extractors.cues import Cue, cues, offers_choice, weigh
from extractors.gate import tokens_of
from extractors.patterns import Hit, View, clip, sentence_at, squash, tail

THRESHOLD = 1.0

_USER = cues(
    (
        r"\blet'?s (?:go with|use|do|try|stick with|keep|switch|skip|drop|move on|note|just|go for|"
        r"go ahead with|start with|pick|choose|not|leave|park|defer|postpone|stay with|target)\b",
        1.2,
    ),
    (r"\b(?:go|going) with\b|\bopt(?:ing)? for\b", 1.0),
    (r"\binstead of\b|\brather than\b|\binstead\b", 0.8),
    (r"\b(?:i|we)'?ll (?:go|take|use|stick|keep|skip|drop|leave)\b", 1.0),
    (r"\bsounds? (?:best|good|better|right|great)\b|\b(?:is|looks) (?:the )?best\b", 0.6),
    (
        r"\b(?:i like|i prefer|i'?d prefer|i'?d rather|i'?d go|i choose|i pick|prefer) (?:your|the|option|that|"
        r"this|it|a|an|to|using)\b",
        0.8,
    ),
    (r"\byour (?:rec|recommendation|recommended|suggestion|suggested|proposal|proposed)\b", 0.9),
    (r"\bskip(?:ping)? (?:\d|it\b|that\b|this\b|the\b|those\b|these\b|for now)", 1.0),
    (
        r"\bnever ?mind\b|\bforget (?:it|about (?:it|that|this))\b|\bleave it\b|\bdrop (?:it|that|this)\b|"
        r"\bmove on\b|\bpark (?:it|this|that)\b",
        1.0,
    ),
    (r"\bforce[- ]push\b", 1.0),
    (
        r"\bwe (?:should|will|'ll|are going to|'re going to|want to|need to) (?:use|go|switch|run|keep|stick|"
        r"drop|do|move|build|start|make|implement|investigate|change|have|try|solve)\b",
        0.8,
    ),
    (r"\bi think (?:we|the|it|they)\b[^.?\n]{0,60}?\b(?:should|want|need|needs|has to|have to)\b", 0.8),
    (r"\b(?:we|you) don'?t need (?:to )?\b|\bno need (?:to|for)\b|\bnot needed\b", 0.8),
    (r"\bnot doing\b|\bwe'?re not\b|\bwe won'?t\b|\bwon'?t be (?:doing|using)\b|\bwe explicitly\b", 0.8),
    (r"\bjust (?:pick|use|launch|do|go|keep|take|picking|using)\b", 0.6),
    (r"\b(?:option|approach|choice|path|plan|variant) (?:[a-h]|\d+)\b", 1.0),
    (r"\bfully separable\b|\bseparate(?:ly)? from\b|\bsame (?:agent|thing|tool|approach)\b", 0.4),
    (r"\bdo (?:it|that|this|both|all|them)\b|\bapply (?:them|these|it|all)\b|\bgo ahead\b|\bproceed\b", 0.3),
)
_PICK = re.compile(
    r"^(?:option\s*|choice\s*|#)?(?:\d{1,2}|[a-h])(?:\s*[.),:&+]|\s+(?:and|&|then|first|please|sounds|is|for)\b|\s*$)"
    r"|^(?:the )?(?:first|second|third|fourth|last|former|latter)(?: one| option)?\b|^both\b"
)
_BARE_ACK = re.compile(r"^(?:y|yes|yeah|yep|yup|ok|okay|sure|go|go ahead|do it|please|continue|proceed|thanks|thank you)[.! ]*$")
_OPTION_LINE = re.compile(
    r"^[ \t]*(?:[-*\u2022|]|\d{1,2}[.):]|[a-hA-H][.):]|\*\*(?:option|\d|[a-h])|option\b)[^\n]*",
    re.M | re.I,
)
_INFO_OPENER = re.compile(r"^(?:what|why|how|where|who|which|is|are|does|do|did|has|have)\b")
_WORD = re.compile(r"[a-z][a-z0-9_\-]{3,}")
_STOP = frozenset(
    ["this", "that", "with", "from", "have", "will", "would", "like", "your", "what", "when", "then", "them", "they", "there", "these", "those", "want", "need", "make", "sure", "just", "please", "also", "into", "should", "could", "about", "over", "after", "before", "here", "more", "some", "only", "each", "which", "while", "where"]
)

_ASSISTANT = cues(
    (r"\b(?:instead|rather than)\b", 0.7),
    (r"\b(?:better|different|simpler|cleaner|alternative|another|new|radically different|right) approach\b", 0.8),
    (
        r"\b(?:i'?ll|i will|let me|i'?m going to|we'?ll|i'?ve decided to|i decided to) (?:go with|use|switch to|"
        r"stick with|opt for|take|build|fall back|try|bypass|skip|drop|keep|amend|create)\b",
        0.4,
    ),
    (r"\b(?:decided|decision|choosing|chose|opting|opted|going with|settled on|switching to|switched to)\b", 0.9),
    (r"\bgood (?:choice|call|idea|point|observation)\b", 0.6),
    (
        r"\b(?:since|because|as|given)\b[^.\n]{0,100}?\b(?:let me|i'?ll|i will|i should|we can)\b",
        0.5,
        "since because as given & let i ill we",
    ),
    (
        r"\b(?:let me|i'?ll|i will)\b[^.\n]{0,100}?\b(?:since|because|so that|that way)\b",
        0.5,
        "let i ill & since because that",
    ),
    (r"\bkey (?:architectural |design )?(?:shift|decision|change|choice)\b|\bwe bypassed\b|\bwe chose\b", 1.0),
    (r"\b(?:blocked|not available|unavailable|doesn'?t support|won'?t work|isn'?t working)\b[^.\n]{0,60}?(?:let me|i'?ll)\b", 0.6),
    (r"\bclose enough\b|\bgood enough\b|\bwithin (?:range|budget|the target)\b", 0.6),
    (r"^(?:##+ )?(?:here'?s the (?:picture|plan)|the plan|plan:|approach:|decision:)", 0.6),
    (r"\bwait,? (?:i think )?(?:the )?(?:better|simpler|right)\b|\bactually,? (?:a )?(?:better|simpler)\b", 0.8),
    (r"\bper (?:the|your) (?:instructions|workflow|guidelines)\b|\bper the user'?s\b", 0.4),
)
_CHOSEN = Cue(r"\b(?:use|go with|switch to) (.{2,60}?) instead of (.{2,60}?)(?:[.,;!?\n]|$)")
_WAITING = Cue(
    r"\b(?:would you like|which (?:would|do) you|which (?:one|option|approach)|do you want|want me to|should i\b|"
    r"let me know which|your call|what do you think|shall i|does that sound|or would you prefer|prefer\?|"
    r"which path|your preference)"
)


def _overlap(user_low: str, options: str) -> int:
    """How many content words of the reply name something in the offered options."""
    words = {w for w in _WORD.findall(user_low) if w not in _STOP}
    if not words:
        return 0
    return len(words & tokens_of(options))


def _option_lines(prev_raw: str) -> str:
    """The lines of the previous message that present options (list items, table rows, "Option X")."""
    out = [m.group(0) for m in _OPTION_LINE.finditer(tail(prev_raw, 1500))]
    return "\n".join(out).lower()


def user_decision(v: View) -> list[Hit]:
    low = v.low
    if not low:
        return []
    score, pos = weigh(_USER, low[:900], v.tok)
    prev_tail = tail(v.prev, 900)
    # Only a short reply, or one that already sounds like a choice, can be a pick from a list.
    offers = bool(prev_tail) and (v.words <= 25 or score > 0) and offers_choice(prev_tail, v.prev_tok)
    if _PICK.match(low) and v.words <= 25 and (offers or v.words <= 3):
        # "2", "C)", "option 3", "the second one" - a bare pick even when the list was not found.
        score += 1.5 if offers else 1.0
        pos = 0
    elif offers:
        if v.words <= 12 and not v.question and not _BARE_ACK.match(low):
            options = _option_lines(v.prev_raw) + "\n" + tail(v.prev, 300)
            overlap = _overlap(low, options)
            if overlap:
                score += 0.6 + 0.3 * min(overlap, 2)
                pos = 0
        if score > 0:
            score += 0.2
    if v.question and _INFO_OPENER.match(low) and score < 2.0:
        score -= 0.4
    if score < THRESHOLD:
        return []
    content = sentence_at(v.prose, pos) if pos > 0 else clip(v.prose)
    ctx: dict[str, object] = {}
    if offers:
        ctx["options_from"] = clip(tail(v.prev_raw, 300), 200)
    m = _CHOSEN.search(low, v.tok)
    if m:
        ctx["chosen"], ctx["rejected"] = clip(m.group(1), 60), clip(m.group(2), 60)
    return [Hit("decision", content, squash(score - THRESHOLD + 1.0), ctx)]


def assistant_decision(v: View) -> list[Hit]:
    low = v.low
    if not low:
        return []
    score, pos = weigh(_ASSISTANT, low[:1200], v.tok)
    if score < THRESHOLD:
        return []
    if _WAITING.search(tail(low, 300), v.tok):
        score -= 1.0
        if score < THRESHOLD:
            return []
    content = sentence_at(v.prose, max(pos, 0)) if pos > 0 else clip(v.prose)
    return [Hit("decision", content, squash(score - THRESHOLD + 0.9), {})]
