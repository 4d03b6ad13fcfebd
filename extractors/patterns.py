"""Shared text helpers and the per-utterance view the extractors read.

Everything here is precompiled at import time; per call the work is a few slices and splits over a
capped prefix of the text, so the pipeline stays cheap on long messages.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from extractors.gate import tokens_of, wordset
from lib.text import clip as clip_text

# How much of a message the cue regexes look at. Human prompts rarely carry intent past this; long
# assistant texts (reports, summaries) state their status near the top and bottom.
SCAN_CHARS = 1000
TAIL_CHARS = 300
CONTENT_CHARS = 300
# Of the other side's previous message, only its opening and its end are read.
PREV_HEAD = 250
PREV_TAIL = 700
_EMPTY: frozenset[str] = frozenset()

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9*`\"'(\[])|\n+")
# Cheap line tests for pasted output, code and logs (no regex on the hot path).
_NOISY_FIRST = frozenset("|>$@[{}()<%=\t\u276f\u279c\u2502\u250c\u2514\u251c\u256d\u2570")
_NOISY_PREFIX2 = ("--", "++", "-+", "+-", "=>", "$ ", "at ")
_NOISY_PREFIX3 = ("===", "___", "***", "~~~", "...")
_NOISY_PREFIX = _NOISY_PREFIX2 + _NOISY_PREFIX3
# The characters those prefixes open with: most lines open with none, and one set test is cheaper than the
# ten `startswith` tests of the tuple.
_PREFIX_FIRST = frozenset(p[0] for p in _NOISY_PREFIX)
_CODE_WORDS = wordset(
    "const let var def class import from function return if for while elif else try except catch public "
    "private async await fn pub impl struct enum"
)
_HEADER = re.compile(r"#{1,6} \S")
_TIMESTAMP = re.compile(r"\d{1,4}[:\-/]\d\d")
_LETTER_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ '"
_FUNCTION_WORDS = wordset(
    "the a an is are was were be to of and or but we i you it its this that these in for with on can could "
    "should would will please not no do does did my me our your if so why what how just now still also let "
    "lets don doesn isn im there here then than"
)
_SPEAKER_TAGS = frozenset(
    "user: agent: assistant: human: claude: ai: system: **user:** **assistant:**".split()
)
_TAGS = re.compile(r"<(ide_\w+|system-reminder|task-notification)>.*?</\1>", re.S)
_IMAGE = re.compile(r"\[Image #\d+\]")


# Log lines: "ERROR: ...", "WARN[0003] ...", "npm ERR! ...".
_LOG_LEVEL = re.compile(r"^(?:\w+ )?(?:ERROR|ERR!|WARN(?:ING)?|INFO|DEBUG|FATAL|TRACE|PANIC)\b")
# The first two letters of its levels (case-sensitive, as the pattern): a match has one of them at the start
# of the line or, after a first word (``\w+``: no space in it) and one space, at the start of the second
# word; a line of prose almost never, so that test rules the regex call out for nearly every line.
_LOG_HEADS = frozenset(("ER", "WA", "IN", "DE", "FA", "TR", "PA"))
_GERUND = re.compile(r"^\W*[A-Z]?[a-z]+ing\b")  # \s is in \W: "\W*\s*" backtracked quadratically


def status_line(stripped: str) -> bool:
    """A progress/status line printed by a tool ("🐳 Building container image...", "✔ Installing deps"):
    it opens with a symbol, then a gerund or an ellipsis ends it. Nobody types that as their words."""
    c = stripped[:1]
    if not c or c.isascii() or unicodedata.category(c) not in ("So", "Sk", "Sm"):
        return False
    return stripped.endswith(("...", "\u2026")) or bool(_GERUND.match(stripped[1:].lstrip()))


@lru_cache(maxsize=256)
def clip(text: str, limit: int = CONTENT_CHARS) -> str:
    """Collapse whitespace and cut at a word boundary (lib.text.clip), at the extractors' default length.
    Cached: extractors clip the same prose of one utterance again (a quarter of the calls)."""
    return clip_text(text, limit)


def prose_of(text: str, limit: int = SCAN_CHARS, announced_pastes: bool = True) -> str:
    """The human-language part of a message: no code fences, IDE tags or pasted log lines.

    ``announced_pastes``: after a line such as "Man page:" keep only questions (for what people type; an
    assistant's "Test output:" is followed by its own words again)."""
    head = text[: limit * 2]
    if "<" in head:
        head = _TAGS.sub(" ", head)
    if "```" in head:
        head = _FENCE.sub(" ", head)
    if "[Image" in head:
        head = _IMAGE.sub(" ", head)
    if "\n" not in head:
        one = head.strip()
        # A terse reply ("2", "C)", "local") is kept whatever it looks like (but not a tool's status line).
        if status_line(one):
            return ""
        if len(one) <= 40 or (len(head) < 400 and not _noisy_line(head, one, False)):
            return one
    keep: list[str] = []
    size = 0
    noisy_run = 0
    pasting = False
    for line in head.split("\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if pasting:
            # After "Man page:" / "the relevant CSS:" comes the artefact; only a question is the user again.
            if stripped[-1] != "?" or _noisy_line(line, stripped, True):
                continue
        elif announced_pastes and stripped[-1] == ":" and _introduces_paste(stripped):
            pasting = True
        if _noisy_line(line, stripped, bool(keep)):
            noisy_run += 1
            # A long run of pasted output: what follows is more paste, not the user's words.
            if noisy_run >= 6 and size:
                break
            continue
        noisy_run = 0
        keep.append(stripped)
        size += len(stripped) + 1
        if size >= limit:
            break
    return "\n".join(keep)[:limit]


_PASTE_NOUNS = frozenset(
    "page output log logs error errors trace traceback diff patch snippet css html json yaml xml config response "
    "docs documentation stdout stderr console".split()
)


def _introduces_paste(stripped: str) -> bool:
    """A line such as "Man page:" or "This is the relevant CSS:" announces pasted material."""
    words = stripped[:-1].split()
    return bool(words) and words[-1].strip("*`").lower() in _PASTE_NOUNS


def _noisy_line(line: str, stripped: str, after_prose: bool) -> bool:
    """Does this line look like pasted output, code or a log rather than someone's words?"""
    if not stripped:
        return True
    c = stripped[0]
    # (`status_line` needs a symbol first: not an ASCII character)
    if c in _NOISY_FIRST or (not c.isascii() and status_line(stripped)):
        return True
    if c == "#" and not _HEADER.match(stripped):
        return True
    if c in _PREFIX_FIRST and stripped.startswith(_NOISY_PREFIX):
        return True
    if stripped[-1] in ";{}":
        return True
    if "\t" in line:
        return True
    if "    " in stripped:  # (most lines hold no run of four spaces: one scan rules out the next two)
        if "        " in stripped:
            return True
        if stripped.count("    ") >= 2:
            # Aligned columns; but people also pad list items in a one-line reply with spaces.
            lowered = stripped.lower().split()
            if len(lowered) < 8 or len(_FUNCTION_WORDS.intersection(lowered)) < 2:
                return True
    if line.startswith("    ") and c not in "-*\u2022" and not c.isdigit():  # indented 4+
        return True
    raw = stripped.encode("utf-8", "replace")
    n = len(raw)
    letters = n - len(raw.translate(None, _LETTER_BYTES))
    if letters == 0 or (n >= 12 and letters < n * 0.6):
        return True
    if c.isdigit() and _TIMESTAMP.match(stripped):
        return True
    words = stripped.split()
    if (stripped[:2] in _LOG_HEADS or (len(words) > 1 and words[1][:2] in _LOG_HEADS)) and _LOG_LEVEL.match(
        stripped
    ):
        return True  # (tested after the other line tests: each of them can only answer True as well)
    if words[0] in _CODE_WORDS and stripped[-1] in ":{(=;,":
        return True
    if c in "TF" and stripped.startswith(("Traceback", 'File "')):
        return True
    if words[0][-1] in ":*" and words[0].lower() in _SPEAKER_TAGS:  # (every tag ends with one of those)
        # A quoted transcript ("User: ...", "Agent: ...") is material, not the sender's own words.
        return True
    if len(words) <= 3 and (words[0].endswith(":") or "=" in words[0]) and stripped[-1] not in ".?!":
        # "key: value" output; a lone "x=1" is a terse reply, but after the user's words it is pasted code.
        return len(words) > 1 or (after_prose and "=" in words[0])
    if after_prose and len(words) > 1 and stripped[-1] not in ".?!":
        # Log lines, headers and "key: value" output have no function words.
        return _FUNCTION_WORDS.isdisjoint(stripped.lower().split())
    return False


def says_nothing(line: str) -> bool:
    """No function word at all: a command or a header, not a sentence someone said."""
    return _FUNCTION_WORDS.isdisjoint(line.lower().split())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT_SPLIT.split(text) if s and s.strip()]


@lru_cache(maxsize=256)
def sentence_at(text: str, pos: int, limit: int = CONTENT_CHARS) -> str:
    """The sentence of ``text`` containing offset ``pos``, clipped. Cached: several extractors cite
    the sentence at the same cue of one utterance (over half the calls on the corpus)."""
    start = max(text.rfind("\n", 0, pos), max(text.rfind(". ", 0, pos), text.rfind("! ", 0, pos)) + 1)
    start = max(start, text.rfind("? ", 0, pos) + 1, 0)
    ends = [i for i in (text.find("\n", pos), text.find(". ", pos), text.find("? ", pos)) if i != -1]
    end = min(ends) + 1 if ends else len(text)
    return clip(text[start:end].strip(" .\n"), limit)


@dataclass(slots=True)
class View:
    """Precomputed forms of one utterance (and of the message it answers)."""

    text: str  # the raw text
    prose: str  # code/log-stripped head
    low: str  # prose lower-cased, apostrophes normalised
    first: str  # first prose line, lower-cased
    words: int  # words in the prose
    question: bool  # the prose ends with, or opens as, a question
    prev: str  # the other side's previous text, lower-cased head + tail ("" when unknown)
    prev_raw: str  # the other side's previous text as given
    tok: frozenset[str]  # \w+ tokens of ``low`` (gates for the cue regexes)
    prev_tok: frozenset[str]  # \w+ tokens of ``prev``
    paste_fail: int = -1  # memo: -1 unknown, 0/1 = the prompt is a pasted failure
    # memos of what the previous message did (-1 unknown, 0/1), asked by several extractors and the
    # features of one prompt: `cues.prev_claims_success`, `cues.prev_offers_choice`
    prev_success: int = -1
    prev_offers: int = -1


_WH_OPEN = re.compile(r"^(?:what|why|how|where|when|which|who)\b")
_WH_FIRST = frozenset("wh")  # (the letters its words open with: a set test rules most lines out first)
_Q_OPEN = re.compile(
    r"^(?:what|why|how|where|when|which|who|is|are|do|does|did|can|could|would|should|will|shall|has|have)\b"
)


def normalise(text: str) -> str:
    """Curly quotes as straight ones (an ASCII text has none: `str.isascii` is a flag test)."""
    if text.isascii():
        return text
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')


def as_typed(v: View, m: re.Match[str], group: str) -> str | None:
    """A group of a match over ``v.low`` in the case the user typed it ("HEAD", "PostgreSQL"): the cue
    regexes run on the lower-cased prose, which has the same offsets unless lower-casing changed its
    length (a few non-ASCII letters); then the lower-cased group is kept."""
    start, end = m.span(group)
    if start < 0:
        return None
    return v.prose[start:end] if len(v.prose) == len(v.low) else m.group(group)


_GREETING = re.compile(
    r"^(?:hey|hi|hello|yo|greetings|good (?:morning|afternoon|evening))\b[ ,!.]*"
    r"(?:claude|there|cc|buddy|mate|team|all|again)?[ ,!.:\-]*",
    re.I,
)


def make_view(text: str, prev: str | None, human: bool = True) -> View:
    """``human``: the text was typed by a person (pasted material is announced and then skipped)."""
    prose = prose_of(text, SCAN_CHARS, human)
    if prose[:1] in "hHyYgG":
        # "Hey Claude, can you ..." - openers are read after the greeting.
        bare = _GREETING.sub("", prose, count=1)
        if bare:
            prose = bare
    if len(text) > 3 * SCAN_CHARS:
        # Long reports state their outcome at the end too ("All 87 tests pass.").
        end = prose_of(text[-3 * TAIL_CHARS :], TAIL_CHARS)
        if end and end not in prose:
            prose = prose + "\n" + end
    low = normalise(prose).lower()
    nl = low.find("\n")
    first = low if nl == -1 else low[:nl]
    stripped = low.rstrip()
    # Users often drop the "?" after "how/why/what ..."; "can you ..." without one is a request.
    question = (
        stripped.endswith("?")
        or first[:1] in _WH_FIRST
        and _WH_OPEN.match(first) is not None
        or "?" in low[:300]
        and _Q_OPEN.match(first) is not None
    )
    prev_raw = prev or ""
    if len(prev_raw) > PREV_HEAD + PREV_TAIL + 200:
        prev_low = normalise(prev_raw[:PREV_HEAD] + "\n" + prev_raw[-PREV_TAIL:]).lower()
    else:
        prev_low = normalise(prev_raw).lower()
    return View(
        text=text,
        prose=prose,
        low=low,
        first=first,
        words=low.count(" ") + 1 if low else 0,
        question=question,
        prev=prev_low,
        prev_raw=prev_raw,
        tok=tokens_of(low),
        prev_tok=tokens_of(prev_low) if prev_low else _EMPTY,
    )


def tail(text: str, n: int = TAIL_CHARS) -> str:
    return text[-n:] if len(text) > n else text


class Hit:
    """One extractor finding before the pipeline stamps identity (uuid, ordinal) on it.

    ``content`` may be given as a function that cuts it: every candidate is reported for the
    confidence model, which keeps about one in ten (on the corpus), so the sentence of a dropped one is
    never cut. It is called once, when ``content`` is first read."""

    __slots__ = ("kind", "_content", "score", "context", "raw")

    def __init__(
        self,
        kind: str,
        content: str | Callable[[], str],
        score: float,
        context: dict[str, object],
        raw: float = 0.0,
    ) -> None:
        self.kind = kind
        self._content = content
        self.score = score
        self.context = context
        self.raw = raw  # the additive evidence behind ``score`` (a feature of the confidence model)

    @property
    def content(self) -> str:
        c = self._content
        if not isinstance(c, str):
            c = self._content = c()
        return c

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Hit({self.kind!r}, {self.content!r}, {self.score}, {self.context}, {self.raw})"


def squash(score: float) -> float:
    """Map an additive cue score onto a 0..1 confidence."""
    if score <= 0:
        return 0.0
    return round(min(0.99, 0.5 + 0.2 * score), 2)
