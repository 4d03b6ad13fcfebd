"""What the assistant says about its own work: self corrections (X3), failed attempts (X9) and
progress (X4).

Self correction: it admits an earlier mistake or wrong claim of its own and revises ("You're right - I
was wrong", "I missed the obvious", "Wait, that won't work", "I have duplicate sections now").
Failed attempt: an approach, fix or command it tried did not work (tool errors in the turn help).
Progress: a status statement - something completed or verified, what remains, next steps - not
narration of the next tool call and not diagnosis.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from extractors.cues import Cue, cues, weigh
from extractors.patterns import Hit, View, clip, sentence_at, squash, tail
from extractors.success_open import success_open

THRESHOLD = 1.0

_SELF = cues(
    (r"^\W{0,4}you'?re (?:absolutely |totally |completely |quite |exactly |so )?right\b", 1.0),
    (r"^\W{0,4}(?:good|great|fair|excellent|sharp) (?:catch|point|eye)\b", 0.7),
    (
        r"\bi was (?:wrong|mistaken|incorrect)\b|\bmy (?:mistake|bad|error|apologies|oversight)\b|"
        r"\bi apologi[sz]e\b|\bi made (?:a|an) (?:\w+ )?(?:error|mistake)\b|\bi (?:missed|overlooked|forgot|"
        r"misread|misunderstood|misinterpreted|misjudged|conflated|confused)\b|\bi should(?:n'?t)? have\b|"
        r"\bi (?:incorrectly|wrongly|mistakenly|accidentally|inadvertently|prematurely)\b|"
        r"\bi (?:introduced|broke|caused)\b|\bi (?:oversold|overstated|overclaimed|exaggerated|jumped)\b|"
        r"\b(?:that|this) was (?:wrong|incorrect|a mistake|my fault)\b|\bi was (?:too|being|overly)\b",
        1.2,
    ),
    (r"^\W{0,4}(?:sorry|apologies)\b", 0.6),
    (
        r"^\W{0,4}(?:wait|hmm|hmmm|actually|oops|whoops|hold on)\b[^.\n]{0,60}?(?:won'?t work|wrong|not right|"
        r"mistake|incorrect|that'?s not|i (?:think|see|need)|doesn'?t)",
        1.0,
    ),
    (r"\b(?:i|we) (?:now )?have (?:a )?duplicate\b|\bi (?:created|added|left) (?:a )?duplicate\b", 1.0),
    (
        r"\b(?:let me|i'?ll|i need to) (?:correct|fix|redo|revert|undo) (?:that|this|my|the mistake|it|these)\b",
        0.4,
    ),
    (r"\bhonestly,?\b|\bto be (?:honest|fair|clear)\b|\boverly (?:cautious|tentative|optimistic)\b", 0.4),
    (r"\bi (?:claimed|said|stated|told you)\b[^.\n]{0,80}?\bbut\b", 0.8),
    # Owning an earlier fault without the stock phrases: "a tracking miss of my own", "two real bugs in
    # my own fixes", "the fix is simpler than I thought", "I was conflating tools", "the line, which I
    # added, is deleted", "I'd written X without saying why".
    (
        r"\b(?:miss|mistake|mistakes|bug|bugs|error|errors|slip|oversight) of my own\b|"
        r"\bin my own (?:\w+ )?(?:fix|fixes|change|changes|code|edit|edits|work)\b|"
        r"\bthan i (?:first |originally |initially )?(?:thought|expected|assumed)\b|"
        r"\bi was (?:conflating|confusing|mixing up|misreading|overcomplicating|overthinking)\b|"
        r"\bwhich i (?:added|wrote|introduced)\b|\bi'?d written\b",
        1.0,
        "own than conflating confusing mixing misreading overcomplicating overthinking which written",
    ),
)
# "You're right" that merely agrees with the user's own claim about the world.
_MERE_AGREEMENT = re.compile(
    r"^\W{0,4}you'?re (?:absolutely )?right[^.!\n]{0,10}[.!]\s+(?:it|that|this) (?:is|does|was)\b"
)

_FAILED = cues(
    (
        r"\b(?:didn'?t|did not|doesn'?t|does not|isn'?t|is not|wasn'?t|still (?:not|doesn'?t|isn'?t))"
        r" (?:seem to |actually |quite )?(?:work|working|help|fix|resolve|take effect|apply|appear|load|pass|"
        r"exist|contain|show|render|persist|stick|trigger|change)\b",
        1.0,
    ),
    (
        r"\b(?:is|are|was|were|keeps?) (?:still )?(?:failing|erroring|timing out|crashing|broken|hanging)\b|"
        # (Not the hypothetical "if this still fails, ...".)
        r"\b(?<!if it )(?<!if this )(?<!if that )still (?:fail(?:s|ed|ing)?|error(?:s|ing)?|broken|getting|seeing|"
        r"shows|showing|returns|missing|there)\b|"
        r"\bfailing in\b|\b(?:broken|failing|failed|down|wrong) again\b",
        1.0,
    ),
    (
        r"\b(?:try|trying) (?:a )?(?:different|another|alternative|new|simpler) (?:approach|way|method|tack|fix)\b|"
        r"\blet me (?:try (?:again|another|something else|a different|the)|retry)\b|\bthat didn'?t\b|\bno luck\b|"
        # Its own earlier change fell short: "bugs in my own fixes", "a potential XSS in my QRCode
        # implementation", "my albedo nudge was too timid", "I'll revert the <base> tag".
        r"\b(?:bugs?|issues?|problems?|regressions?|errors?|mistakes?|flaws?|xss|leaks?) in my (?:own )?(?:\w+ )?"
        r"(?:fix|fixes|change|changes|implementation|code|patch|edit|edits|commit|approach)\b|"
        r"\bmy (?:\w+ ){0,2}(?:fix|change|nudge|tweak|attempt|approach|patch|edit|workaround) (?:was|wasn'?t|isn'?t|"
        r"didn'?t) (?:too|not|enough|quite|sufficient|strong)\b|"
        r"\b(?:let me|i'?ll|i will|i need to|we need to) (?:revert|roll back|undo|back out) (?:the|my|that|this|these)\b",
        1.0,
    ),
    (
        r"\bcouldn'?t (?:find|locate|connect|install|build|start|resolve|read|access|get|reach|run|complete)\b|"
        r"\b(?:i )?can'?t (?:do|run|access|prompt|connect|reach|install|use)\b|\bunable to\b|\bnot able to\b",
        0.9,
    ),
    (r"\b(?:recreate|redo|retry|try again|re-run|rerun|refresh)\b|\bwhat happened\b", 0.3),
    (r"\brefus(?:es|ed|ing) (?:the |all |our |my )?connections?\b", 0.8),
    (
        r"\b(?:not appearing|not showing|not being (?:applied|used|picked up)|no effect|same error|same issue|"
        r"same problem|still the same|says otherwise)\b|\b(?:are|is) (?:still )?missing\b",
        0.8,
    ),
    (
        r"\bencounter(?:ing|ed)? (?:an? )?(?:\w+ )?(?:issue|error|problem|bug)\b|\bran into\b|"
        r"\bhit (?:an? )?(?:issue|error|snag|wall|bug)\b|\b(?:appears|seems) to be (?:blocking|broken|failing)\b",
        0.8,
    ),
    (r"\b(?:failed|fails)\b|\bis failing\b|\berror(?:ed|s)? (?:out|again)\b", 0.5),
    # "Config error - blocky doesn't accept CIDR", "Build failed: ...": the outcome stated first.
    (
        r"^\W{0,4}(?:[\w.-]+ ){0,2}(?:error|failed|failure|fails)\s*(?:\u2014|--|-|:)\s",
        1.0,
        "error failed failure fails",
    ),
    (
        r"\b(?:that|this|the (?:fix|change|patch|approach|workaround))(?: also)? (?:didn'?t|did not|doesn'?t|won'?t) "
        r"(?:help|work|fix|change)\b|\bno change\b|\bhas no effect\b|\bnot taking effect\b|"
        r"\bisn'?t being (?:picked up|applied|used)\b|\b(?:still|again) (?:the same|seeing|getting|hitting)\b",
        1.0,
    ),
    (r"\b(?:reverting|reverted|rolled back|rolling back|backing out|undoing)\b", 0.7),
    (r"\b(?:blocking|blocked|permission (?:issues?|denied)|timeouts?|times out|timed out|rejected)\b", 0.4),
    (
        r"\b(?:roll(?:ing)? back|revert(?:ing)? (?:to|the|my)|restore (?:the )?(?:previous|original)|back out)\b",
        0.6,
    ),
    (
        r"\b(?:wasn'?t|isn'?t|aren'?t) (?:\w+ )?(?:enough|sufficient|correct|right)\b|\bneeds? a different\b",
        0.5,
    ),
)
_ERRORISH = Cue(
    r"\b(?:errors?|errored|fail|fails|failed|failing|failure|issues?|problems?|wrong|broke|broken|doesn'?t|"
    r"isn'?t|didn'?t|can'?t|couldn'?t)\b"
)
_FIX_THAT = Cue(r"\b(?:let me|i'?ll|i need to) (?:fix|correct|address|handle) (?:that|this|it|those|these)\b")
_DIAGNOSIS = re.compile(
    r"^\W{0,4}(?:found (?:it|the (?:issue|problem|bug|cause))|i see (?:the|what)|the (?:root )?cause)\b"
)

# The assistant reports a change of its own that should now hold ("I've switched the submodule to HTTPS",
# "this should work now", "ready to commit", "the next CI run should be green"): a failure the operator
# reports right after it is that attempt failing, not a bug in what was there before.
_CHANGE_REPORT = re.compile(
    r"\b(?:i'?ve|i have|we'?ve|we have) (?:now |just |also )?(?:\w+ )?(?:changed|switched|fixed|updated|added|"
    r"replaced|removed|moved|set|configured|rewrote|reworked|adjusted|modified|implemented|patched|installed|"
    r"restarted|rebuilt|reverted|made)\b|"
    r"^\W{0,6}(?:changed|switched|fixed|updated|added|replaced|removed|moved|rewrote|reworked|adjusted|modified|"
    r"patched|installed|rebuilt|reverted)\b|"
    r"\bshould (?:now )?(?:work|fix|load|resolve|render|pass|be (?:fixed|working|resolved|gone|green))\b|"
    r"\b(?:try|run|reload|refresh|restart|rebuild) (?:it |that |the \w+ )?(?:again|now)\b|\b(?:will|should) now\b|"
    r"\bnow (?:works|loads|shows|correctly|properly|uses)\b|\bready to (?:commit|deploy|test|go|merge|push)\b",
    re.M,
)


def reports_change(prev: str) -> bool:
    """The (lower-cased) assistant text ends by reporting a change it made as done or about to work."""
    return _CHANGE_REPORT.search(tail(prev, 800)) is not None


_PROGRESS = cues(
    (
        r"^\W{0,6}(?:all )?(?:done|complete|completed|finished|fixed|success|committed|pushed|merged|installed|"
        r"deployed|updated|created|rebase successful|clean (?:compile|build)|build succeeds|tests? pass|"
        r"excellent progress|great progress|good progress)\b",
        1.2,
    ),
    (
        r"\b(?:all|the) (?:\d+ )?(?:\w+ )?(?:tests?|checks?|specs?|subtasks?|tasks?) (?:are |were )?(?:now )?"
        r"(?:pass|passing|passed|green|succeed|closed|done|complete)\b|\b\d+ of \d+ (?:tests? )?pass\b|"
        r"\b\d+ tests?, 0 failures\b|\bno (?:new )?(?:\w+ )?(?:issues|errors|warnings|failures)\b|"
        r"\b(?:tests?|build|compile|lint|typecheck|ci) (?:now )?(?:pass(?:es)?|succeeds|is clean|is green)\b",
        1.0,
        "test tests check checks spec specs subtask subtasks task tasks & pass passing passed green succeed closed "
        "done complete | of & pass | failures | no & issues errors warnings failures | tests test build compile "
        "lint typecheck ci & pass passes succeeds clean green",
    ),
    (
        r"\bsuccessful(?:ly)?\b|\b(?:is|are) now (?:\w+ )?(?:working|passing|complete|installed|configured|active|"
        r"live|fixed|done|available|running)\b|\bnow (?:works|passes|compiles|builds)\b|\b(?:has|have) been (?:\w+ )?"
        r"(?:created|added|fixed|updated|installed|removed|merged|pushed|committed|completed|resolved|fetched|"
        r"built|generated|downloaded|applied|configured|deployed)\b",
        0.9,
    ),
    (
        r"\b(?:is|are) (?:now )?(?:removed|added|created|installed|fixed|merged|pushed|staged|"
        r"committed|done|complete|enabled|disabled|cleaned up|in place|activated|configured)\b",
        0.8,
        "removed added created installed fixed merged pushed staged committed done complete enabled disabled "
        "cleaned place activated configured",
    ),
    (
        r"\b(?:i'?ve|i have|we'?ve|we have) (?:now )?(?:successfully )?(?:created|added|fixed|updated|"
        r"implemented|completed|built|installed|written|refactored|removed|migrated|configured|set up|"
        r"resolved|finished|solved|merged|pushed|committed|cleaned)\b",
        0.9,
    ),
    (
        r"^(?![^.\n]{0,60}\b(?:won'?t|doesn'?t|isn'?t|not|can'?t|because|if)\b)"
        r"^[^.\n]{0,60}\b(?:activated|installed|created|updated|merged|pushed|committed|closed|deployed|resolved)"
        r"(?: \w+ly| successfully| fine| ok)?[.!]",
        1.0,
        "activated installed created updated merged pushed committed closed deployed resolved",
    ),
    # "Round 1 complete.", "spotter-fum.3 done.", "All clean.", "Key A converted successfully.": a status line.
    (
        r"^(?![^.\n]{0,50}\b(?:won'?t|doesn'?t|isn'?t|not|can'?t|because|if|when|until)\b)"
        r"(?:[^.!?\n]|\.(?=\w)){0,50}?\b(?:done|"
        r"complete|completed|finished|succeeded|dispatched|clean|green|\w+ed successfully)[.!]",
        1.2,
        "done complete completed finished succeeded dispatched clean green successfully",
    ),
    # A status head before a colon or a comma: "Build fixed, tests pushed.", "PR opened and merged: <link>",
    # "Review complete, fixes applied ...", "All green: ..." (a line of what stands, then the detail).
    (
        r"^\W{0,4}(?:[\w-]+ ){0,3}(?:created|complete|completed|applied|landed|reviewed|merged|shipped|pushed|"
        r"committed|done|green|fixed|passed|passing|finished)(?:[:,]| -)",
        1.0,
        "created complete completed applied landed reviewed merged shipped pushed committed done green fixed "
        "passed passing finished",
    ),
    (r"\b(?:is|are) (?:now working|working now)\b", 0.3),
    # Opening with what was done ("I've added margin-bottom to ...") reports it rather than narrating a plan.
    (
        r"^\W{0,4}(?:i'?ve|i have|we'?ve|we have) (?:now |just )?(?:successfully )?(?:created|added|fixed|updated|"
        r"implemented|completed|built|installed|written|refactored|removed|migrated|configured|resolved|finished|"
        r"merged|pushed|committed|cleaned|converted|moved|renamed|replaced)\b",
        0.3,
    ),
    Cue(
        r"\u2705\s*(?:\*\*)?\s*(?:[a-z]+ )?(?:\w+ed|done|complete|success\w*|pass\w*|ready)\b",
        0.7,
        literal="\u2705",
    ),
    Cue(
        r"^#+ .*(?:complete[d]?|done|success\w*|summary of (?:changes|work)|results?)\b",
        0.7,
        need="complete completed done success successful successfully summary results result",
    ),
    (r"\b(?:works|is active|is running|is up|is live|is enabled|succeeded)\b", 0.5),
    (
        r"\balmost there\b|\bonly (?:one|\d+) (?:test|tests|issue|issues|error|errors|failure|failures) (?:left|remaining|is failing|are failing)\b",
        0.6,
    ),
    (
        r"^\W{0,4}(?:fixed|added|updated|removed|created|implemented|refactored|renamed|moved|replaced|installed|"
        r"configured|merged|deployed|cleaned up|wired|enabled|disabled|migrated) (?:the |a |an |all |\w+)",
        0.9,
    ),
    (
        r"\bhere'?s (?:a summary of )?what (?:i|we) (?:did|changed|fixed|added)\b|\b(?:summary of|the) changes\b|"
        r"\bchanges made\b|\bwhat was (?:done|fixed|added|changed)\b|\bi'?ve made the following\b",
        0.8,
    ),
    (
        r"\b(?:works|working|passes|passing|green) now\b|\bis (?:now )?working\b|\bstep \d+ (?:is )?(?:complete|done)\b",
        0.8,
    ),
    (
        r"\bnext steps?\b|\bremaining\b|\bwhat'?s left\b|\bstill to do\b|\bto do:|\bi need:|\bin order:",
        0.5,
    ),
    (r"\b(?:committed|pushed|merged|deployed|published|released|rebased)\b", 0.5),
    (r"\bprogress\b|\bmilestone\b|\bstatus:", 0.4),
)
_APPROVING = re.compile(r"^\W{0,4}(?:good|great|perfect|excellent|nice|ok(?:ay)?|awesome)\b")
# A plan announced as a list ("I need: 1. ... 2. ...") is a list of next steps, not narration.
# (Searched from each colon - a literal the regex engine can skip to - then the label before it is checked.)
_PLAN_LIST = re.compile(r":[^\S\n]*\n\s*(?:\d+[.)]|[-*])\s")  # one \s* on each side of the \n: linear
_PLAN_LABELS = (
    "i need",
    "in order",
    "next step",
    "steps",
    "plan",
    "todo",
    "to do",
    "remaining",
    "what's left",
    "whats left",
)
_NARRATION = re.compile(
    r"^\W{0,4}(?:(?:now|next|first|ok(?:ay)?|great|perfect|good)[!,.]?\s+)?(?:let me|i'?ll|let'?s|i will|i need to|i'?m going to)\b"
)
_LIST = re.compile(
    r"\n[^\S\n]*(?:\d+[.)]|[-*])\s+\S"
)  # not \n\s*: each \n would rescan the blank lines after it


def _plan_list(low: str) -> bool:
    """A plan announced as a list: "Next steps:" / "I need:" / "Remaining:" followed by list items. (Every
    match holds a colon and a newline: two `memchr` scans rule most texts out before the pattern.)"""
    return (
        ":" in low
        and "\n" in low
        and any(
            low[max(0, m.start() - 12) : m.start()].endswith(_PLAN_LABELS) for m in _PLAN_LIST.finditer(low)
        )
    )


def self_correction(
    v: View, prev_user_was_correction: Callable[[], bool], floor: float = THRESHOLD
) -> list[Hit]:
    """``prev_user_was_correction`` is only called when the verdict hangs on it."""
    low = v.low
    if not low:
        return []
    score, pos = weigh(_SELF, low[:900], v.tok)
    if score <= 0 and floor > 0:
        return []
    if THRESHOLD - 0.3 <= score < THRESHOLD + 0.6 and prev_user_was_correction():
        score += 0.3
    if _MERE_AGREEMENT.match(low) and score < 1.5:
        score -= 0.6
    if score < floor:
        return []
    return [Hit("self_correction", lambda: sentence_at(v.prose, max(pos, 0)), squash(score), {}, score)]


# A failure reported in the first sentence of the assistant's text (within its first 60 characters)
# is what the text is about; the same words later are often a hypothetical ("Try again. If this still
# fails, …") or a recap.
HEAD_REPORT = 60
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def _first_sentence_end(low: str, cap: int) -> int:
    m = _SENTENCE_END.search(low, 0, cap)
    return m.start() if m else cap


def failed_attempt(v: View, tool_errors: int, last_error: str, floor: float = THRESHOLD) -> list[Hit]:
    low = v.low
    if not low:
        return []
    score, pos = weigh(_FAILED, low[:900], v.tok)
    if tool_errors:
        # Right after a failing tool call, talk of errors or of fixing "that" reports the failure.
        if _ERRORISH.search(low[:500], v.tok):
            score += 0.6 if tool_errors == 1 else 0.8
        if _FIX_THAT.search(low[:300], v.tok):
            score += 0.3
    if _DIAGNOSIS.match(low):
        score -= 0.5
    if success_open(low):
        score -= 1.0
    elif 0 <= pos < _first_sentence_end(low, HEAD_REPORT):
        score += 0.4  # the text opens by reporting the failure ("Still failing.", "Config error —")
    if score < floor:
        return []
    ctx: dict[str, object] = {}
    if last_error:
        ctx["tool_error"] = clip(last_error, 200)
    return [Hit("failed_attempt", lambda: sentence_at(v.prose, max(pos, 0)), squash(score), ctx, score)]


def progress(v: View, floor: float = THRESHOLD) -> list[Hit]:
    low = v.low
    if not low:
        return []
    text = low if len(low) <= 1000 else low[:700] + "\n" + tail(low, 300)
    score, pos = weigh(_PROGRESS, text, v.tok)
    if score <= 0 and floor > 0:
        return []
    plan = _plan_list(low)
    if plan:
        score += 0.6
    elif score >= 0.4 and _LIST.search(v.prose):
        score += 0.3
    if _APPROVING.match(low):
        score += 0.3
    if _NARRATION.match(low) and score < 1.2 and not plan:
        score -= 0.6
    if _DIAGNOSIS.match(low):
        score -= 0.4
    if score < floor:
        return []
    return [Hit("progress", lambda: _progress_content(v.prose, pos), squash(score), {}, score)]


def _progress_content(prose: str, pos: int) -> str:
    first = sentence_at(prose, 0)
    if len(first) >= 25:
        return first
    if pos > len(first):
        return sentence_at(prose, pos)
    return clip(prose, 240)  # "Done." alone says little; keep what follows
