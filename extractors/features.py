"""Features of one utterance for the confidence model (:mod:`extractors.confidence`).

The heuristics' additive evidence per class (the raw cue scores the extractors compute) plus what the
message and the one it answers look like: length, questions, whether the assistant had just claimed
success, proposed one thing, offered options or asked, the prompt's dialogue act against that turn
(approving a single proposal, picking one of several, a counter-suggestion asked as a question), and
how much of the prompt is pasted material. Common words of standing instructions (``w:<word>``) are
features of the rule model only, a class defined by such words ("always", "never", "from now on"); for
every other class per-word weights fitted on a few teams' phrasing did not carry to the teams held out
(leave-one-source-out, docs/eval.md), these few acts do. Pure and cheap: a handful of anchored regexes over the view the extractors already built.
"""

from __future__ import annotations

import math
import re

from extractors.choices import choice_features
from extractors.cues import PROPOSAL, prev_claims_success, prev_offers_choice
from extractors.dialogue import dialogue_features
from extractors.gate import wordset
from extractors.model import Utterance
from extractors.patterns import View, tail

# Common words of standing instructions and their scope (features of the rule model only; see above).
RULE_WORDS = wordset(
    "always never every everywhere whenever from now on anymore ever again any all each rule rules default "
    "policy must mustn should shouldn don do not no without before after until unless repo repos project "
    "projects going forward time times"
)
WORD_PREFIX = "w:"

# Dialogue acts of a prompt, read against what the assistant's previous turn did (proposed one thing,
# offered alternatives, claimed success, asked). General English; none names a project or a team.
_APPROVE = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|ok|okay|sure|fine|lgtm|agreed|approved|perfect|great|sounds good|looks good|"
    r"go ahead|go for it|do it|please do|proceed|send it|ship it|let'?s do it|let'?s go)\b"
)
# A reply naming one of several offered options: "2", "B)", "option 3", "#4", "3 is better", "both".
_PICK = re.compile(
    r"^\W*(?:option\s*)?(?:\d{1,2}|[a-h])(?:\W*$|[.):,]|\s+(?:is|and|but|then|with|sounds|looks|please|first)\b)|"
    r"\b(?:option|proposal|approach|plan|choice|variant|#)\s*(?:\d{1,2}|[a-h])\b|"
    r"^\W*(?:both|neither|all (?:of them|three|four|five|twelve)|the (?:first|second|third|last|former|latter)"
    r"(?: one)?)\b"
)
# A suggestion phrased as a question: pushes another way ("can we ...?", "what if ...", "why not ...").
_SUGGEST_Q = re.compile(
    r"^\W*(?:(?:but|so|and|ok|okay|hmm)\W+)?(?:can|could|should|shouldn'?t|would|wouldn'?t) (?:we|it|this|that|you just)\b|"
    r"^\W*(?:(?:but|so|and|ok|okay|hmm)\W+)?(?:what if|why not|how about|what about|isn'?t (?:it|there|that)|"
    r"doesn'?t (?:it|that)|wouldn'?t it)\b"
)


# A short imperative step ("please fix these lint errors", "push it"): an instruction, not an objective.
_STEP = re.compile(
    r"^\W*(?:please |now |ok |okay |then )?(?:add|make|fix|use|run|create|update|change|remove|delete|write|move|"
    r"rename|build|install|commit|push|deploy|review|check|test|continue|start|stop|try|show|explain|keep|leave|"
    r"drop|skip|revert|merge|rebase|open|read|look|find|replace|put|give|tell)\b"
)
_STEP_WORDS = 8


def _acts(v: View, prev_offers: bool) -> dict[str, float]:
    """Approval of a single proposal (none) vs picking among offered alternatives (a decision), and a
    counter-suggestion phrased as a question (pushback, not a neutral question)."""
    low = v.low
    f: dict[str, float] = {}
    approve = _APPROVE.match(low) is not None
    pick = _PICK.search(low[:300]) is not None
    suggest = v.question and _SUGGEST_Q.match(low) is not None
    if approve:
        f["act:approve"] = 1.0
        f["act:approve_bare" if v.words <= 4 else "act:approve_more"] = 1.0
        f["act:approve&offers" if prev_offers else "act:approve&single"] = 1.0
    if pick:
        f["act:pick"] = 1.0
        if prev_offers:
            f["act:pick&offers"] = 1.0
    if suggest:
        f["act:suggest_q"] = 1.0
    return f


# An offer in the assistant's voice ("would you like me to ...?") typed or pasted as a prompt: the
# assistant's words, not an objective the operator set.
_OFFER_VOICE = re.compile(r"^\W*(?:would you like me to|do you want me to|(?:shall|should) i|want me to)\b")


def offer_voice(v: View) -> bool:
    """The prompt is an offer phrased the way the assistant phrases them."""
    return _OFFER_VOICE.match(v.low) is not None


def short_step(v: View) -> bool:
    """A short imperative step ("please fix these lint errors", "push it"): an instruction, not an
    objective (eval README: mechanical steps are not goals)."""
    return v.words <= _STEP_WORDS and not v.question and _STEP.match(v.low) is not None


def _clip(x: float, lo: float = -2.0, hi: float = 4.0) -> float:
    return min(hi, max(lo, x))


# The feature name of each class's evidence, made once (an f-string per class and utterance before).
_EVIDENCE_NAMES: dict[str, str] = {}


def _evidence(evidence: dict[str, float]) -> dict[str, float]:
    """``h:<class>``: the heuristics' evidence, clipped to [-2, 4] (`_clip` written out: a call and two
    builtins per class cost more than the comparisons; same value, NaN and the bounds included)."""
    f: dict[str, float] = {}
    names = _EVIDENCE_NAMES
    for k, x in evidence.items():
        name = names.get(k)
        if name is None:
            name = names[k] = "h:" + k
        y = x if x > -2.0 else -2.0
        f[name] = y if y < 4.0 else 4.0
    return f


def _shape(v: View) -> dict[str, float]:
    words = v.words
    text_len = max(1, len(v.text))
    return {
        "log_words": math.log1p(words) / 5.0,
        "words<=3": float(words <= 3),
        "words<=12": float(words <= 12),
        "words>60": float(words > 60),
        "question": float(v.question),
        "pasted": _clip(1.0 - len(v.prose) / text_len, 0.0, 1.0),
        "no_prose": float(len(v.prose) < 0.1 * text_len and len(v.text) > 200),
    }


def user_features(u: Utterance, v: View, evidence: dict[str, float]) -> dict[str, float]:
    """Features of a human prompt; ``evidence``: the heuristics' raw score per class."""
    f = _evidence(evidence)
    f.update(_shape(v))
    prev = v.prev
    f["first"] = float(not prev)
    if prev:
        ptail = tail(prev, 700)
        f["prev_success"] = float(prev_claims_success(v))
        f["prev_offers"] = float(prev_offers_choice(v))
        f["prev_proposal"] = float(PROPOSAL.search(tail(prev, 400), v.prev_tok) is not None)
        f["prev_question"] = float("?" in ptail[-200:])
        f["prev_long"] = float(len(v.prev_raw) > 1500)
    f.update(_acts(v, bool(f.get("prev_offers"))))
    f["tool_error"] = float(any(t.is_error for t in u.recent_tools))
    f.update(dialogue_features(v))
    f.update(choice_features(v.low, v.prose, v.prev_raw, v.words))
    for w in RULE_WORDS.intersection(v.tok):
        f[WORD_PREFIX + w] = 1.0
    return f


def assistant_features(u: Utterance, v: View, evidence: dict[str, float]) -> dict[str, float]:
    """Features of an assistant text block; ``evidence``: the heuristics' raw score per class."""
    f = _evidence(evidence)
    f.update(_shape(v))
    errors = sum(1 for t in u.recent_tools if t.is_error)
    f["tool_errors"] = min(errors, 3) / 3.0
    f["tools"] = min(len(u.recent_tools), 8) / 8.0
    f["after_prompt"] = float(bool(u.prev_user_text))
    return f
