"""Decisions (X2): a choice between alternatives is made or announced.

User side: picking an option the assistant offered ("2", "C sounds best", "install usage4claude"),
"X instead of Y", "let's go with / use / skip ...", accepting a recommendation, dropping or deferring
something. Answers to clarifying questions (a path, "1. /Users/me/repo 2. both ways") supply
information and are not picks; a new instruction that merely shares words with a descriptive list is not
one either. The assistant side is :mod:`extractors.assistant_decisions`.
"""

from __future__ import annotations

import re

from extractors.choices import offer_of, picks, proposes_one
from extractors.cues import OFFERS_LIST, Cue, cues, prev_offers_choice, weigh
from extractors.gate import tokens_of
from extractors.patterns import Hit, View, clip, sentence_at, squash, tail
from lib.text import STOPWORDS

THRESHOLD = 1.0

_USER = cues(
    (
        # (Not "let's keep working", "let's pick back up", "let's leave a note", "let's just analyze", "let's
        # do a deep dive": carrying on or starting something, not choosing.)
        r"\blet'?s (?:go with|use|do(?! an? | some )|try|stick with|keep(?! (?:working|going|at|on)\b)|switch|skip|"
        r"drop|move on|note|just (?:use|do|go|keep|skip|drop|leave|launch|pick|stick|try)|go for|go ahead with|"
        r"start with|pick(?! (?:back|up)\b)|choose|not|leave (?:it|that|this|them|the|out|as)|park|defer|"
        r"postpone|stay with|target)\b",
        1.2,
    ),
    (r"\b(?:go|going) with\b|\bopt(?:ing)? for\b", 1.0),
    (
        r"\b(?:let'?s|we'?ll|we will|i'?ll|(?:maybe|then|so) we|we can) (?:do|handle|tackle|fix|revisit) (?:\w+ )?"
        r"(?:first|later|next|separately)\b",
        0.8,
    ),
    (
        r"\b(?:not|no) (?:worth|needed|necessary) (?:it|now|anymore|for now)?\b|\bnot a priority\b|\bleave (?:it|that|this|them) (?:as is|alone|for now)\b",
        0.8,
    ),
    (r"^(?:please |ok(?:ay)?,? |yes,? |sure,? )?(?:go for|pick|choose|stick with|switch to)\b", 0.9),
    (r"^(?:please |ok(?:ay)?,? |yes,? |sure,? )?use\b", 0.6),
    (
        r"\b(?:is|are|sounds|seems|looks) (?:fine|better|good enough|the way to go|the right call)\b|\bworks for me\b",
        0.6,
    ),
    (
        r"\b(?:defer|postpone|out of scope|not now|next time|later on|for later|won'?t fix)\b|\bdon'?t bother\b",
        0.6,
    ),
    # (Not "yes, please add it" / "ok let's get a PR up": approving the one thing proposed chooses nothing;
    # held out such openers were decisions no more often than any prompt.)
    (
        r"\breplace (?:it|them|this|that|these|those|the \w+) with\b|\bswitch (?:it |this |that )?(?:to|over to)\b",
        0.4,
    ),
    (r"\b(?:maybe|perhaps) we (?:should|could)\b|\bhow about (?:using|we)\b|\bwhat about using\b", 0.4),
    (r"\binstead of\b|\brather than\b|\binstead\b", 0.8),
    # "don't block the commit, instead redact it": the rejected and the chosen course in one breath.
    (r"\b(?:don'?t|dont|do not|not|never|no)\b[^.?!\n]{0,80}?,\s*(?:but\s+)?instead\b", 0.5, "instead"),
    (r"\b(?:i|we)'?ll (?:go|take|use|stick|keep|skip|drop|leave)\b", 1.0),
    (r"\bsounds? (?:best|good|better|right|great)\b|\b(?:is|looks) (?:the )?best\b", 0.6),
    (
        r"\b(?:i like(?! (?:this|that|it)\b)|i prefer|i'?d prefer|i'?d rather|i'?d go|i choose|i pick|prefer) (?:your|the|option|that|"
        r"this|it|a|an|to|using)\b",
        0.8,
    ),
    # A course stated as the speaker's own: "I would like to use one common client id", "I want to use option
    # B" (2 of 2 over both sets, two sources).
    (
        r"\b(?:i (?:would|'d) (?:like to|rather|prefer to)|i want to) (?:use|go with|switch to|stick with|stay with)\b",
        1.0,
    ),
    # A course narrowed to one of its options: "I would only render it in the website build", "scan should
    # primarily use the picker; the upload is a fallback" (2 of 2, two sources; not "only X should be done",
    # a prompt labelled decision once and goal twice).
    (
        r"\bi (?:would|'d) only\b|\b(?:should|would|will) primarily\b|\b(?:is|as|be) (?:a|the|just a|only a) fallback\b",
        1.0,
        "only primarily fallback",
    ),
    (r"\byour (?:rec|recommendation|recommended|suggestion|suggested|proposal|proposed)\b", 0.9),
    (r"\bskip(?:ping)? (?:\d|it\b|that\b|this\b|the\b|those\b|these\b|for now)", 1.0),
    # Dropping something as an order: "six groups, drop the compare harness", "ignore lack of backup
    # config", "no leave level 3 alone" (not "we just drop the car onto the track": a verb of placing).
    (
        r"(?:^|[.,;!:]\s*|\b(?:and|then|no)\s+)(?:drop|ignore|leave out|defer|postpone|shelve|park) "
        r"(?:the|those|these|all|any|lack)\b|\bignore (?:it|that|this|them)\b|\bleave (?:\w+ ){1,3}alone\b",
        1.0,
        "drop ignore leave defer postpone shelve park",
    ),
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
    # Ruling one course out: "I don't like the idea of caching it", "there's no reason to keep the flag",
    # "so we might not need to rebuild" (the same as "we don't need to", hedged).
    (
        r"\b(?:don'?t|dont|do not) (?:really )?like the idea of\b|\bnot a fan of\b|"
        r"\bno reason to (?:have|keep|use|add|ship|do|go)\b|\b(?:might|may|probably) not need (?:to|it|that|this)\b",
        0.8,
    ),
    (r"\bnot doing\b|\bwe're not\b|\bwe won'?t\b|\bwon'?t be (?:doing|using)\b|\bwe explicitly\b", 0.8),
    (r"\bjust (?:pick|use|launch|do|go|keep|take|picking|using)\b", 0.6),
    (r"\b(?:option|approach|choice|path|plan|variant) (?:[a-h]|\d+)\b", 1.0),
    # An item of a numbered list named for the work: "do #2 and do this for all ...", "can we handle #4
    # quickly?" (4 of 4 over both sets, two sources; also where no offer was found, as after a listing).
    (
        r"\b(?:do|handle|take|tackle|go with|pick|start with) #\d{1,2}\b",
        1.0,
        "do handle take tackle go pick start",
    ),
    (r"\bfully separable\b|\bseparate(?:ly)? from\b|\bsame (?:agent|thing|tool|approach)\b", 0.4),
    (r"\bdo (?:it|that|this|both|all|them)\b|\bapply (?:them|these|it|all)\b|\bgo ahead\b|\bproceed\b", 0.3),
)
_PICK = re.compile(
    r"^(?:option\s*|choice\s*|#)?(?:\d{1,2}|[a-h])(?:\s*[.),:&+]|\s+(?:and|&|then|first|please|sounds|is|for)\b|\s*$)"
    r"|^(?:the )?(?:first|second|third|fourth|last|former|latter)(?: one| option)?\b(?! ones\b)|^(?:both|neither|none of|all of)\b"
)
_BARE_ACK = re.compile(
    r"^(?:y|yes|yeah|yep|yup|ok|okay|sure|go|go ahead|do it|please|continue|proceed|thanks|thank you)[.! ]*$"
)
_OPTION_LINE = re.compile(
    r"^[ \t]*(?:[-*\u2022|]|\d{1,2}[.):]|[a-hA-H][.):]|\*\*(?:option|\d|[a-h])|option\b)[^\n]*",
    re.M | re.I,
)
# Item-wise picks in a numbered answer ("1.A  2. apple look  3. B  5. A + B"): each item answers with a letter.
_ITEM_PICK = re.compile(r"(?:^|\s)\d{1,2}\s*[.):]\s*[a-h](?:\s*[+&,/]\s*[a-h])*\s*(?=\d{1,2}\s*[.):]|\n|$)")
# The previous message asked for information (clarifying questions), so the reply supplies it.
_CLARIFY = Cue(
    r"\b(?:could you (?:please )?(?:clarify|help me understand|tell me|provide|share|confirm)|"
    r"can you (?:please )?(?:clarify|tell me|provide|share|confirm)|help me understand|"
    r"were you (?:asking|referring|thinking|looking)|did you mean|are you referring|do you mean|"
    r"(?:which|what) \w+ (?:are you referring|do you mean|did you mean)|please (?:provide|share|confirm|clarify)|"
    r"i need (?:to know|more (?:info|information|details|context)))\b"
)
# "1. /Users/me/repo  2. sync both ways": numbered answers to numbered questions.
_ANSWER_ITEM = re.compile(r"^\d{1,2}\s*[.)]\s+\S")
# The question itself points at a list above it.
_REFERS_TO_LIST = re.compile(r"\b(?:which|these|those|one of|option|options|above|following|listed)\b", re.A)
# A reply that is only a path or a URL says where something is; it does not choose.
_PATH_REPLY = re.compile(r"^['\"`]?(?:~?/|[a-z]:\\|https?://|\d\.\s+(?:~?/|[a-z]:\\))\S*")
_INFO_OPENER = re.compile(r"^(?:what|why|how|where|who|which|is|are|does|do|did|has|have)\b")
# An idea floated for the assistant to weigh settles nothing: a hypothetical opening the prompt ("ok, so
# what if we moved X ..."), question mark or not, or a course asked as a question ("but X would work,
# no?", "or the render uses 20 instead of 30?").
_WHAT_IF = re.compile(
    r"^\W*(?:(?:but|so|and|ok|okay|hmm|well)\W+){0,2}(?:what if|wouldn'?t it|would it not)\b", re.A
)
_FLOAT = re.compile(
    r"^\W*or\b[^?]{0,200}\?\s*$|,\s*(?:no|right|or not)\?\s*$|\b(?:would|could) (?:that|this|it) (?:not )?work\?",
    re.A,
)
_WORD = re.compile(r"[a-z][a-z0-9_\-]{3,}")
# Words that name nothing offered: the shared function words plus the verbs of wanting.
_STOP = STOPWORDS | frozenset(("like", "want", "need", "sure"))

# An order or a suggestion that ends on "instead" swaps the course in hand for the one it names ("have the
# other reviewer check the plan instead", "replace them with one link instead?"); read on the whole text,
# since the head's cut could fall right after the word.
_SWAP_END = Cue(r"\binstead *(?:[.!?]+(?:\s|$)|$)")
_CHOSEN = Cue(r"\b(?:use|go with|switch to) (.{2,60}?) instead of (.{2,60}?)(?:[.,;!?\n]|$)")
# A pick among offered alternatives is a decision by the eval conventions, whatever words it uses.
# A choice is stated at the head of a reply ("let's go with B, and also ..."); the same cues deep in a
# long brainstorm are ideas being floated (held out, both sets: decision average precision +0.015).
_HEAD = 300
_PICK_WEIGHT = {"label": 1.0, "all": 1.0, "words": 1.0}


def overlap(user_low: str, options: str) -> int:
    """How many content words of the reply name something in the offered options."""
    words = {w for w in _WORD.findall(user_low) if w not in _STOP}
    if not words:
        return 0
    return len(words & tokens_of(options))


def _option_lines(prev_raw: str) -> str:
    """The lines of the previous message that present options (list items, table rows, "Option X")."""
    # A numbered list of questions is a questionnaire: answering it is giving information, not choosing.
    out = [m.group(0) for m in _OPTION_LINE.finditer(tail(prev_raw, 1500)) if "?" not in m.group(0)]
    return "\n".join(out).lower()


def _options_text(v: View) -> str:
    """What the previous message offered: its last question, plus its list when that question points at one
    ("which of these ...", "option 2?") or the list is numbered."""
    prev_tail = tail(v.prev, 400)
    q = prev_tail.rfind("?")
    if q < 0:
        question = tail(prev_tail, 300)
    else:
        start = max(prev_tail.rfind(". ", 0, q), prev_tail.rfind("\n", 0, q), prev_tail.rfind("? ", 0, q))
        question = prev_tail[start + 1 :]
    if not (OFFERS_LIST.search(v.prev) or _REFERS_TO_LIST.search(question)):
        return question
    return _option_lines(v.prev_raw) + "\n" + question


def user_decision(v: View, floor: float = THRESHOLD) -> list[Hit]:
    low = v.low
    if not low:
        return []
    score, pos = weigh(_USER, low[:_HEAD], v.tok)
    swap = _SWAP_END.search(low, v.tok)
    if swap and swap.start() < _HEAD:
        score += 0.6
    prev_tail = tail(v.prev, 900)
    # Only a short reply, or one that already sounds like a choice, can be a pick from a list.
    offers = bool(prev_tail) and (v.words <= 25 or score > 0) and prev_offers_choice(v)

    def clarify() -> bool:
        return bool(prev_tail) and _CLARIFY.search(tail(v.prev, 600), v.prev_tok) is not None

    if (
        _PICK.match(low)
        and v.words <= 25
        and (offers or v.words <= 3)
        and not (_ANSWER_ITEM.match(low) and not _ITEM_PICK.match(low) and clarify())
    ):
        # "2", "C)", "option 3", "the second one" - a bare pick even when the list was not found.
        score += 1.5 if offers else 1.0
        pos = 0
    elif low[0].isdigit() and len(_ITEM_PICK.findall(low[:600])) >= 2:
        # Several items of an interview answered with a letter each: options were picked.
        score += 1.5
        pos = 0
    elif offers:
        if (
            v.words <= 12
            and not v.question
            and not _BARE_ACK.match(low)
            and not _PATH_REPLY.match(low)
            and not clarify()
            and not (offer_of(v.prev_raw) is None and proposes_one(v.prev_raw))
        ):
            shared = overlap(low, _options_text(v))
            if shared:
                score += 0.6 + 0.3 * min(shared, 2)
                pos = 0
        if score > 0:
            score += 0.2
    offer = offer_of(v.prev_raw)
    how = picks(low, v.prose, offer) if offer is not None else ""
    if how:
        # Takes one of the alternatives the assistant's turn put to the user (extractors.choices).
        score += _PICK_WEIGHT[how]
        pos = 0
    if v.question and _INFO_OPENER.match(low) and score < 2.0:
        score -= 0.4
    elif score < 2.0 and (_WHAT_IF.match(low) or v.question and _FLOAT.search(low[:600])):
        score -= 0.6
    if score < floor:
        return []
    content = sentence_at(v.prose, pos) if pos > 0 else clip(v.prose)
    ctx: dict[str, object] = {}
    if offers:
        ctx["options_from"] = clip(tail(v.prev_raw, 300), 200)
    m = _CHOSEN.search(low, v.tok)
    if m:
        ctx["chosen"], ctx["rejected"] = clip(m.group(1), 60), clip(m.group(2), 60)
    return [Hit("decision", content, squash(score - THRESHOLD + 1.0), ctx, score)]
