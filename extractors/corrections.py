"""Corrections (X1) and model corrections (X7): the user rejects or redirects the assistant.

A correction is read against the assistant's previous message: pushback right after the assistant
claimed success ("Done, all green" -> "why is lint failing?") is the clearest signal; openers such as
"no", "wrong", "not quite"; reports that something still or now fails; challenges ("are you sure",
"do we even need X"); declined proposals; pasted review feedback. Pushback opens the turn: a cue found
only deep in a long prompt counts half, and a hypothesis, a check of one's own understanding or a new
topic finds no fault with the last turn. A model correction is a correction that also names the
approach being rejected (from the prompt itself or from what the assistant announced it would do).
"""

from __future__ import annotations

import re

from extractors.announced import last_announced
from extractors.cues import (
    FAIL_BROKE,
    FAIL_NOT_ING,
    FAIL_NOT_WORK,
    FAIL_STILL,
    FAIL_WORDS,
    NEW_TOPIC,
    PROPOSAL,
    REVIEW_RELAY,
    Cue,
    cues,
    fails,
    prev_claims_success,
    weigh,
)
from extractors.patterns import Hit, View, clip, says_nothing, sentence_at, squash, tail
from extractors.pushback import DELEGATED, TRY_IT, pushback_score

THRESHOLD = 1.0
# Corrections are said up front; deep inside a long spec, "failed" or "deprecated" is content.
BODY_CHARS = 700
# Pushback is said up front ("no, ...", "that still fails", "too dark"); cues found only past the first
# HEAD_CHARS of a longer prompt (a brainstorm, a spec, a pasted draft that mentions "broken" or "I don't
# like") count TAIL_SHARE of their weight. Held out, every source's average precision rose or held.
HEAD_CHARS = 150
TAIL_SHARE = 0.5

_OPENERS = cues(
    (r"^(?:no+|nope|nah)\b(?!\s+(?:worries|problem|rush|need to (?:apologi[sz]e|worry)))", 1.3),
    (
        r"^(?:wrong|incorrect|not quite|not really|not exactly|not yet|that'?s not|this is not|"
        r"that is not|this isn'?t|that isn'?t|it'?s not|it isn'?t|not what|not like that)\b",
        1.2,
    ),
    (r"^(?:wait|hold on|hold up|hang on|stop|oops|whoops|whoa|u+[hm]+|e+r+m*|ugh|wtf|h+m+|huh)\b", 0.6),
    (r"^(?:actually|but|well|so)\b", 0.3),
    (r"^(?:oh|ah+|ok(?:ay)?)[.,!]*\s+(?:no|but|uh|um|hm+|wait|hold)\b", 0.6),
)

_BODY = cues(
    (FAIL_NOT_WORK.pattern, 1.0),
    (FAIL_NOT_ING.pattern, 0.9),
    (FAIL_STILL.pattern, 1.0),
    (FAIL_BROKE.pattern, 0.9),
    (
        r"\bwe lost\b|\byou (?:forgot|missed|broke|deleted|removed|ignored|skipped|overwrote|reverted|"
        r"dropped|lost|changed)\b|\byou (?:didn'?t|did not|haven'?t|have not|never|still)\b",
        1.0,
    ),
    (
        r"\b(?:that'?s|this is|that is|it'?s|this'?s|these are|those are|it is) (?:\w+ )?(?:wrong|"
        r"not right|incorrect|not correct|not what|backwards|the wrong|not the|not a|not an|not how)\b",
        1.1,
    ),
    (r"\bnot what i\b|\bi (?:said|asked (?:you|for)|told you|meant)\b|\bas i said\b", 1.0),
    (
        r"\bwhy (?:did|would|are|do|have|were) you\b|\bwhy (?:is|was) (?:it|this|that) (?:still )?(?:not|so)\b",
        0.8,
    ),
    (
        r"\bwhy (?:is|are|does|do|did|isn'?t|doesn'?t|don'?t|aren'?t)\b[^?\n]{0,80}?(?:fail|broken|"
        r"\berror|still|\bnot\b|n't\b|wrong|happy|missing|empty|slow|checking|only|weird|strange|odd\b)",
        0.9,
    ),
    (r"\bare you sure\b|\bis that (?:right|correct|true)\b|\bdid you (?:actually|really|even)\b", 1.0),
    # Pasted or relayed review feedback ("Review: ...", "In src/x.ts around lines 3 to 9, ...", "the
    # reviewer flagged ..."), not a request that merely mentions review comments ("reply to each PR comment").
    (
        REVIEW_RELAY + r"|^(?:review|feedback|pr feedback|code review)\s*:|"
        r"^in [\w@/.\-]+\.\w+,? (?:around|at|on|near) lines?\b",
        1.2,
        "says said flagged notes points found suggests comment comments pr mr pull review feedback in",
    ),
    (
        r"\b(?:is|are|was|were) not (?:correct|right|accurate|true|how)\b|\b(?:isn'?t|aren'?t|wasn'?t) (?:correct|"
        r"right|accurate|true)\b",
        1.1,
    ),
    # A counter-proposal: "rather than modifying A, could we call X?"
    (
        r"\b(?:rather than|instead of)\b[^?\n]{0,120}?\b(?:could|can|should|shall|why not|what if)\b (?:we|you|it|i)\b",
        0.8,
        "rather instead",
    ),
    (r"^you (?:run|do|try|fix|check|handle|test|execute|make|restart) (?:it|this|that|them)\b", 1.0),
    (r"\byourself\b", 0.4),
    (r"\bi'?ve noticed (?:that )?you\b|\byou (?:keep|always|constantly|repeatedly|tend to) \w+", 0.9),
    (r"\bbut\b[^.\n]{0,40}?(?:n't\b|\bnot\b|\bfail|\berror|\bbroke|\bwrong|\bslow\b|\bstill\b)", 0.5),
    (r"\bnever\b|\bdon'?t ever\b|\bstop (?:\w+ing|it|that)\b", 0.6),
    (r"\bthe (?:real |actual |root |main )?(?:issue|problem|bug|cause) (?:is|was|here|seems)\b", 0.9),
    (
        r"\bi don'?t think (?:we|that|this|it|you|so|the)\b|\bi doubt\b|\bi'?m not sure (?:that|this|it)\b",
        0.8,
    ),
    (
        r"\bdo (?:we|you|i) (?:even|really|actually) need\b|\bwhy not (?:just )?\b|\bis (?:that|this|it) (?:even )?necessary\b",
        1.0,
    ),
    (
        r"\b(?:less|more) (?:work|code|elegant)\b|\b(?:simpler|cleaner|better|easier|more robust) "
        r"(?:way|approach|solution|fix|option)\b",
        0.6,
    ),
    # Finding fault with a quality, whatever the quality: "too faded", "still too hard", "not gold
    # enough", "doesn't seem to end in the right colour", "that has already been fixed".
    # (Not under a modal of possibility: "the secondary might be too small" weighs an option.)
    (
        r"\btoo (?<!might be too )(?<!may be too )(?<!could be too )(?<!would be too )(?<!will be too )"
        r"(?!(?:please|and|but|so|then|as|if|i|we|you|is|are|was|were|it|that|this|the|a|an|to|of|in|"
        r"on|at|for|with|by|from|now|here|there|though|btw)\b)[a-z]{3,}",
        0.8,
    ),
    (r"\bnot (?:\w+ ){1,2}enough\b", 0.8),
    # The output is still not as asked ("still too hard", "still has a different colour"): a correction
    # of the result, not a report that an attempt failed.
    (r"\bstill\b[^.?!\n]{0,30}?\b(?:too|different|the same)\b", 0.8),
    (
        r"(?:\bnot\b|n't\b)[^.?!\n]{0,30}?\b(?:correct(?:ly)?|right|properly)\b|"
        r"\b(?:doesn'?t|does not|don'?t|do not|didn'?t|isn'?t|aren'?t) (?:seem|appear) to\b|"
        r"\b(?:seems?|appears?) to (?:not\b|(?:be )?(?:gone|broken|missing|wrong|off|lost|ignored)\b)",
        0.8,
        "correct correctly right properly seem appear seems appears",
    ),
    (
        r"\b(?:pretty|very|really|quite|kind of|kinda|a bit|a little|so|rather|way too|too) (?:harsh|ugly|dull|"
        r"bland|faded|weird|confusing|cluttered|crowded|messy|hard|clunky|awkward|jarring|boring|flat|off)\b",
        0.7,
    ),
    (r"\bshould be (?:more|less|a (?:little|bit) \w+|\w{3,}er)\b", 0.5),
    (r"\balready (?:been )?(?:fixed|done|there|exists?|implemented|merged|handled|solved|in place)\b", 0.7),
    (
        r"\bwhy (?:are|were|do|did|is|don'?t|aren'?t|didn'?t|can'?t|wouldn'?t) we\b|"
        r"\bi don'?t (?:get|understand) (?:that|it|this|why)\b",
        0.7,
    ),
    (
        r"\b(?:doesn'?t|does not|don'?t|didn'?t) (?:look|sound|feel|seem) (?:right|good|correct|like)\b|"
        r"\bsounds? the same\b|\blooks? (?:wrong|off|weird|broken|bad|ugly|identical|the same)\b|"
        r"\b(?:feels|seems) (?:implausible|wrong|off|overkill|excessive|ancient|outdated)\b|"
        r"\b(?:ancient|outdated|deprecated|obsolete|overkill|hacky|brittle)\b",
        0.9,
    ),
    (r"\b(?:oops|whoops|nope|wtf|wth|ugh|sigh)\b|\bno[.,!]+(?:\s|$)", 0.9),
    (r"\bworked (?:fine |perfectly |well )?(?:before|earlier|yesterday)\b|\bused to (?:work|be|show)\b", 0.9),
    (r"\bthere'?s no\b|\bthere is no\b|\bnothing (?:happens|changed|shows)\b", 0.4),
    (r"\bplease (?:fix|revert|undo|remove|restore|put back|don'?t)\b|\bfix (?:this|these|that|it)\b", 0.6),
    (r"\b(?:revert|undo|roll ?back|put (?:it )?back|restore it|go back)\b", 0.6),
    (r"\binstead\b|\brather than\b", 0.4),
    (r"\bshould(?:n'?t| not)? (?:be|have|use|run|match|look|say)\b|\bsupposed to\b|\bexpected\b", 0.4),
    (
        r"\bi (?:see|count|get|got|still see|can see|only see|don'?t see|can'?t see)\b[^.\n]{0,40}?"
        r"(?:uncommitted|errors?|failures?|warnings?|nothing|\bno\b|empty|blank|same|without|\d+ \w+)",
        0.9,
    ),
    (
        r"\bi didn'?t (?:find|like|want|ask|need)\b|\bnot (?:helpful|useful|needed|necessary|"
        r"what we want)\b|\bunnecessary\b|\bi don'?t (?:like|want|need)\b",
        0.8,
    ),
    (r"\bwe don'?t (?:want|need)\b", 0.6),
    (
        r"\b(?:fail(?:s|ed|ing)|errored|unhappy|uncommitted|pedantic|complain(?:s|ing)|timed? ?out|blocked)\b",
        0.3,
    ),
    # (Not the operator's own gap: "what am I missing?", "I think I'm missing a setup step".)
    (
        r"\b(?:missing|disappeared|vanished|lost)\b(?<!am i missing)(?<!i am missing)(?<!i'm missing)(?<!im missing)|"
        r"\bis gone\b|\bare gone\b",
        0.5,
    ),
    (
        r"\bmaybe we should\b|\bcould (?:we|you) (?:just )?(?:reuse|use|instead)\b|\bcan'?t (?:we|you) "
        r"(?:just )?\w+|\bshouldn'?t (?:we|it|this|that)\b|\bwhat about using\b",
        0.6,
    ),
    (
        r"\b(?:you can|you could|just) (?:use|set|call|reuse)\b(?:[^.\n]|\.(?=\S)){0,80}?"
        r"\b(?:less|simpler|easier|instead|already)\b",
        0.8,
    ),
    (r"\bi think (?:the|it'?s|its|this is|that'?s) (?:the )?(?:library|issue|problem|\w+ is)\b", 0.5),
    (r"\b(?:annoying|frustrating|ridiculous|useless|pointless)\b|\bagain\?", 0.5),
)
_PRAISE = re.compile(
    r"^(?:thanks|thank you|great|perfect|excellent|awesome|nice|cool|good job|well done|love it|"
    r"looks good|lgtm|amazing|brilliant)\b"
)
# The user reports a failing state (stronger than the bare word "error").
_FAIL_STATE = Cue(
    r"\b(?:fail(?:s|ed|ing)|errored|erroring|crash(?:es|ed|ing)|unhappy|uncommitted|timed? ?out|hangs|"
    r"hanging|stuck|throws|throwing|pedantic|complain(?:s|ing)|blocked|refused|denied|rejected)\b|\b(?:an?|the|same|this|new|more|"
    r"these|some) (?:errors?|exceptions?|warnings?|issues)\b|\berror:|\bexception:|\bexit code [1-9]"
)
_NOT_FOUND_CLAIM = Cue(
    r"\b(?:doesn'?t exist|does not exist|couldn'?t find|could not find|can'?t find|cannot find|not found|"
    r"no such|isn'?t (?:available|installed)|is not a git repo|not a git repository|couldn'?t locate|"
    r"unable to (?:find|locate))"
)
# No leading \b: a literal-first alternation lets ``re`` skip ahead fast over long pastes.
_PASTE_FAIL = re.compile(
    r"(?:error|err!|failed|failure|fatal|exception|traceback|panic|denied|refused|blocked|exit code [1-9])"
)
_ANSWER_LIST = re.compile(r"^(?:1[.):]|a[.):]|q1\b)")
_TASK_SPEC = re.compile(
    r"^(?:analy[sz]e|implement|create|build|write|generate|research|design|audit|review|document|"
    r"set up|setup|add|make|develop|refactor|migrate|investigate|explore|execute)\b"
)
_LOCATION = Cue(
    r"\b(?:is|are|it'?s|lives|sits|located|installed|stored|exists?) (?:in|at|under|on|inside)\b|"
    r"\b(?:already exists?|does exist|is there|it'?s there)\b"
)
_ASKS_INFO = Cue(
    r"\b(?:could you clarify|can you clarify|please provide|please confirm|which (?:one|repo|file|path|directory)|"
    r"what (?:is|would|are)|where is|i need to understand|to proceed,? i need|is [\"\w]+ the)\b"
)
_FIX_BROKEN = Cue(r"\b(?:fix|repair|restore)\s+(?:the\s+|all\s+(?:the\s+)?|any\s+|those\s+)?broken\b")
# Hesitation before a statement ("umm, we have changes in our working copy") or a "but ...?" question
# ("but this is a CLI, so what cache could be stale?") pushes back on what was just said or done.
_HESITANT = re.compile(r"^(?:u+[hm]+|e+r+m*|h+m+|huh)\b[^?]*$")
_BUT_QUESTION = re.compile(r"^(?:but|and yet|then how|then why)\b[^\n]{0,300}\?")
# Asking to act on review comments is a task, not a correction of the assistant.
_REVIEW_TASK = Cue(
    r"\b(?:respond|reply|answer|address|resolve|go through|look at|check|handle|fix|read|review|triage)\b"
    r"[^.?!\n]{0,40}?\b(?:review |pr )?comments?\b",
    need="comment comments",
)
_DECLINE = re.compile(r"^(?:no+|nope|nah|don'?t|do not|please don'?t|not now|not yet|never mind|nevermind)\b")
# A hypothesis offered as a question ("could it be that the gradients are too far apart?") investigates
# with the assistant; it does not reject what the assistant did.
_HYPOTHESIS_Q = Cue(
    r"(?:^|[.!?]\s+)(?:could|can|might|may|would|is) it (?:be|have been) (?:that|because|due to)\b",
    need="it & be been",
)
# Checking one's own understanding ("I'm guessing X won't work for previews, right?", "if I understand it
# correctly, the keys are kept by the relay?") asks for confirmation; it rejects nothing.
_CHECKING = Cue(
    r"\bi(?:'m| am) (?:guessing|assuming)\b|\bi (?:assume|suppose)\b|\bif i (?:understand|read|get) (?:it|this|that|you)\b"
)
_INFO_Q = re.compile(
    r"^(?:what (?:is|are|does)|how (?:do|does|can|would)|where (?:is|are|do)|is there|can you explain)\b"
)

# Naming the rejected approach.
_REJECTED_IN_PROMPT = (
    re.compile(r"\binstead of ([^.,;!?\n]{3,80})"),
    re.compile(r"\brather than ([^.,;!?\n]{3,80})"),
    re.compile(
        r"\b(?:don'?t|do not|stop|no need to) (?:use|using|call|calling|add|adding|loop|looping) ([^.,;!?\n]{3,80})"
    ),
    re.compile(r"\bdo (?:we|you) (?:even|really) need ([^.,;!?\n]{3,80})"),
    re.compile(r"\bi don'?t think we need (?:to )?([^.,;!?\n]{3,80})"),
    re.compile(r"\bnot ([a-z0-9_./`'\-]+(?: [a-z0-9_./`'\-]+){0,3}), (?:but |use |it'?s |the )"),
)


def correction_score(v: View, tool_error: bool) -> tuple[float, int]:
    """Additive evidence that the prompt rejects or redirects the assistant, and where."""
    low, tok = v.low, v.tok
    if not low:
        return 0.0, -1
    opener, _ = weigh(_OPENERS, low[:80], tok)
    body, pos = weigh(_BODY, low[:BODY_CHARS], tok)
    if len(low) > HEAD_CHARS and body > 0:
        head = weigh(_BODY, low[:HEAD_CHARS], tok)[0]
        body = head + TAIL_SHARE * max(0.0, body - head)
    score = opener + body + pushback_score(v)
    if pos < 0 and opener:
        pos = 0
    if body and _FIX_BROKEN.search(low, tok):
        score -= 0.9
    prev, ptok = v.prev, v.prev_tok
    if prev:
        prev_tail = tail(prev, 700)
        if prev_claims_success(v) or TRY_IT.search(prev_tail, ptok):
            if _FAIL_STATE.search(low, tok) or fails(low, tok):
                score += 0.8
            elif body >= 0.5:
                score += 0.4
        if pasted_failure(v):
            score += 1.0
        if low.startswith("you ") and DELEGATED.search(prev_tail, ptok):
            score += 0.5
        if (
            not v.question
            and v.words <= 25
            and _NOT_FOUND_CLAIM.search(prev_tail, ptok)
            and _LOCATION.search(low, tok)
            and not _ASKS_INFO.search(tail(prev, 300), ptok)
        ):
            score += 1.0
        if _DECLINE.match(low) and PROPOSAL.search(tail(prev, 400), ptok):
            score += 0.6
        if _HESITANT.match(low):
            score += 0.5
        if _BUT_QUESTION.match(low):
            score += 0.5
        if tool_error and FAIL_WORDS.search(low, tok):
            score += 0.2
    else:
        # Nothing said yet in this thread that could be rejected.
        score -= 0.3
    if prev and _ANSWER_LIST.match(low) and _ASKS_INFO.search(tail(prev, 600), ptok):
        # Point-by-point answers to the assistant's clarifying questions.
        score -= 0.6
    if (v.words > 25 or len(v.text) > 400) and _TASK_SPEC.match(low):
        # A task spec (its prose may be short when the rest is a pasted or bulleted brief).
        score -= 1.0
    if _REVIEW_TASK.search(low[:300], tok) and not _PASTE_FAIL.search(low[:300]):
        score -= 0.8
    if _PRAISE.match(low) and opener == 0:
        score -= 0.8
    if _INFO_Q.match(low) and score < 1.5:
        score -= 0.4
    if NEW_TOPIC.search(low[:150], tok):
        score -= 0.8
    if v.question and _CHECKING.search(low[:300], tok):
        score -= 0.6
    if _HYPOTHESIS_Q.search(low[:600], tok):
        score -= 1.0
    return score, pos


def pasted_failure(v: View) -> bool:
    """The prompt is mostly pasted output, and that output reports a failure."""
    if v.paste_fail < 0:
        if len(v.text) - len(v.prose) < 150 or v.words > 80 or _TASK_SPEC.match(v.low):
            # (A brief that opens "Analyze ..." goes on with its checklist, not with pasted output.)
            v.paste_fail = 0
        else:
            v.paste_fail = int(_PASTE_FAIL.search(v.text[:4000].lower()) is not None)
    return v.paste_fail == 1


_RELAY = re.compile(REVIEW_RELAY, re.A)


def _past_mention(v: View, content: str) -> str:
    """A sentence that only says review feedback exists ("some valid points raised by X on the PR") tells
    a later session nothing, and reads as if the reviewer's words were the user's: what the user says
    of it follows, so the correction is that (the whole prompt when little follows)."""
    m = _RELAY.search(content.lower())
    if m is None or len(content) - m.end() > 20:
        return content  # "the reviewer flagged that the cache key ignores the locale" says what
    at = v.prose.find(content)
    rest = v.prose[at + len(content) :].lstrip(" .!?\n") if at >= 0 else ""
    return clip(rest) if len(rest) >= 40 else clip(v.prose or v.text)


def _paste_named(v: View, content: str) -> str:
    """When the user's only words are the command whose failing output they pasted ("npm run start" and
    its log), the correction is that failure, said to be pasted: the command line is no one's words."""
    if len(content.split()) > 5 or not says_nothing(content) or not pasted_failure(v):
        return content
    for line in v.text.splitlines():
        if _PASTE_FAIL.search(line.lower()):
            return clip("pasted output: " + line.strip())
    return content


def rejected_approach(v: View) -> str | None:
    for rx in _REJECTED_IN_PROMPT:
        m = rx.search(v.low)
        if m:
            return clip(m.group(1), 120)
    if v.prev_raw:
        last = last_announced(tail(v.prev_raw, 900))
        if last is not None:
            return clip(last, 160)
    return None


def extract_corrections(
    v: View, tool_error: bool, scored: tuple[float, int] | None = None, floor: float = THRESHOLD
) -> list[Hit]:
    """``scored``: a :func:`correction_score` result already computed for this view; ``floor``: the
    least evidence that yields a hit (the pipeline asks for every candidate and lets the confidence
    model decide)."""
    score, pos = scored if scored is not None else correction_score(v, tool_error)
    if score < floor:
        return []
    content = sentence_at(v.prose, max(pos, 0)) if pos > 0 else clip(v.prose or v.text)
    content = _past_mention(v, content)
    if len(content) < 40:
        # "No, that's wrong." alone says nothing a later session can use: keep what follows it.
        content = clip(v.prose or v.text)
    content = _paste_named(v, content)
    ctx: dict[str, object] = {}
    if v.prev_raw:
        ctx["rejected"] = clip(tail(v.prev_raw, 400), 200)
    hits = [Hit("correction", content, squash(score - THRESHOLD + 1.0), ctx, score)]
    approach = rejected_approach(v)
    if approach:
        mctx = dict(ctx)
        mctx["rejected_approach"] = approach
        hits.append(Hit("model_correction", content, squash(score - THRESHOLD + 0.8), mctx, score))
    return hits
