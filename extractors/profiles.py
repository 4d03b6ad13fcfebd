"""Profile counters (X12–X17) from one chunk of messages: pure, additive, per source file.

The index sums these counters over files and materialises the profiles after every run, so a
profile is right after an incremental run and a re-read file can be subtracted exactly.
Counters are keyed (profile, key); values are additive numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from operator import ne

from extractors.folded import FoldedWords
from lib.context import Context
from lib.model import EDIT_TOOLS, Message

_WORD = re.compile(r"[A-Za-z][A-Za-z']+")
# `_WORD`'s matches of 5 characters or more (a match of `_WORD` is a whole run: none starts inside one).
_LONG_WORD = re.compile(r"[A-Za-z][A-Za-z']{4,}")
_HOME = re.compile(r"^(?:/Users/|/home/|[A-Za-z]:\\Users\\)([^/\\]+)")
_SSH = re.compile(r"\b(?:ssh|scp|rsync|mosh)\s+(?:-\S+\s+)*(?:[\w.-]+@)?([A-Za-z][\w-]{1,40})(?:[:\s]|$)")
_SSH_WORDS = ("ssh", "scp", "rsync", "mosh")  # every match holds one: a command without any skips the regex
_EXT = re.compile(r"\.([A-Za-z0-9]{1,6})$")

# Case-insensitive, searched on the lower-cased prompt where that finds the same (`extractors.folded`).
_POSITIVE = FoldedWords(
    r"thanks|thank you|perfect|great|awesome|excellent|nice|love it|works now|that works|"
    r"looks good|lgtm|well done|exactly"
)
_NEGATIVE = FoldedWords(
    r"wrong|broken|still (?:not|doesn'?t|failing)|doesn'?t work|not working|wtf|ugh|"
    r"again\?|useless|frustrat\w*|annoying|stop"
)
_PLEASE = FoldedWords(r"please|pls|plz")
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")

# Tools whose use says something about how the operator works.
PACKAGE_MANAGERS = (
    "uv",
    "pip",
    "poetry",
    "pipenv",
    "conda",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "cargo",
    "go",
    "brew",
    "apt",
    "apt-get",
    "winget",
    "choco",
)
TEST_RUNNERS = (
    "pytest",
    "unittest",
    "jest",
    "vitest",
    "mocha",
    "cargo test",
    "go test",
    "npm test",
    "pnpm test",
    "yarn test",
    "rspec",
    "phpunit",
)
_PM_RE = re.compile(
    r"(?:^|[;&|(]\s*|\b(?:sudo)\s+)("
    + "|".join(re.escape(p) for p in PACKAGE_MANAGERS)
    + r")\s+(?:install|add|sync|run|remove|update|upgrade|i|build|test)\b"
)
# Every match names a package manager: a command naming none (most) skips `_PM_RE`, which sre tries at
# every position. One scan (sre skips to the names' first letters), cheaper than a substring test per
# name; a name holding another ("pipenv", "pnpm", "apt-get") needs no alternative of its own.
_PM_NAMES = re.compile(
    "|".join(re.escape(p) for p in PACKAGE_MANAGERS if not any(q != p and q in p for q in PACKAGE_MANAGERS))
)
_TEST_RE = re.compile("|".join(re.escape(t) for t in TEST_RUNNERS))
_TEST_WORDS = (
    "test",
    "jest",
    "mocha",
    "rspec",
    "phpunit",
)  # one is in every runner's name: cheaper than the regex
_GIT_RE = re.compile(
    r"\bgit\s+(commit|push|rebase|merge|checkout|switch|stash|cherry-pick|worktree|pull|reset)\b"
)

# Common misspellings of English words (general knowledge, not learned from any corpus).
KNOWN_TYPOS = {
    "teh": "the",
    "recieve": "receive",
    "seperate": "separate",
    "definately": "definitely",
    "wierd": "weird",
    "occured": "occurred",
    "untill": "until",
    "wich": "which",
    "becuase": "because",
    "beacuse": "because",
    "thier": "their",
    "alot": "a lot",
    "adress": "address",
    "enviroment": "environment",
    "dependancy": "dependency",
    "dependancies": "dependencies",
    "succesful": "successful",
    "sucessful": "successful",
    "neccessary": "necessary",
    "necesary": "necessary",
    "accomodate": "accommodate",
    "existant": "existent",
    "paramter": "parameter",
    "paramters": "parameters",
    "fucntion": "function",
    "funtion": "function",
    "retrun": "return",
    "lenght": "length",
    "widht": "width",
    "heigth": "height",
    "calender": "calendar",
    "comit": "commit",
    "commmit": "commit",
    "pubilsh": "publish",
    "similiar": "similar",
    "tommorow": "tomorrow",
    "truely": "truly",
    "arguement": "argument",
    "begining": "beginning",
    "concious": "conscious",
    "goverment": "government",
    "independant": "independent",
    "occurence": "occurrence",
    "prefered": "preferred",
    "refered": "referred",
    "seperately": "separately",
    "threshhold": "threshold",
    "transfered": "transferred",
    "usefull": "useful",
    "writting": "writing",
    "doesnt": "doesn't",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "isnt": "isn't",
    "didnt": "didn't",
    "thats": "that's",
    "whats": "what's",
    "youre": "you're",
}


_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEAR = {
    c: {r[j] for j in (i - 1, i + 1) if 0 <= j < len(r)}
    | {rows[k][i + d] for k in (n - 1, n + 1) if 0 <= k < 3 for d in (-1, 0, 1) if 0 <= i + d < len(rows[k])}
    for rows in (_ROWS,)
    for n, r in enumerate(rows)
    for i, c in enumerate(r)
}


def one_edit(a: str, b: str) -> bool:
    """True when `a` looks like a slip of the fingers for `b`: two neighbouring letters swapped, a
    letter dropped or doubled inside the word, or a neighbouring key hit — never at the word's end,
    where a one-letter difference is usually another inflection (built/build, changed/changes)."""
    la, lb = len(a), len(b)
    if a == b or abs(la - lb) > 1:
        return False
    if la == lb:
        if sum(map(ne, a, b)) > 2:
            return False  # more letters differ than a swap or a slip changes (most pairs: counted in C)
        diff = [i for i in range(la) if a[i] != b[i]]
        if (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        ):
            return True
        return len(diff) == 1 and diff[0] < la - 2 and a[diff[0]] in _NEAR.get(b[diff[0]], set())
    short, long_ = (a, b) if la < lb else (b, a)
    if short[-2:] != long_[-2:]:
        return False  # a letter dropped or doubled before the last two leaves them in place
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :] and i < len(long_) - 2


def learned_typos(
    prompt: str, reference: str | None, found: list[str] | None = None
) -> list[tuple[str, str]]:
    """(typo, correction) pairs: known misspellings, plus words one edit away from a word the
    assistant just used (the reference text) that the reference never spells that way. ``found``:
    the prompt's `_WORD` matches when the caller has them already."""
    # (One lower() of the words joined: they are ASCII letters and apostrophes, no spaces.)
    words = " ".join(_WORD.findall(prompt) if found is None else found).lower().split()
    out = [(w, KNOWN_TYPOS[w]) for w in words if w in KNOWN_TYPOS]
    if not reference:
        return out
    own = Counter(words)
    # The words that may be typos of a reference word; without any, the reference need not be read.
    maybe = [w for w in own if len(w) >= 5 and own[w] == 1 and w not in KNOWN_TYPOS and "'" not in w]
    if not maybe:
        return out
    ref: dict[tuple[str, int], set[str]] = {}
    firsts = {w[0] for w in maybe}  # (a reference word is looked up by its first letter: others never are)
    if reference.isascii():  # lower-casing keeps ASCII text's words in place: one C call for them all
        long_words = set(_LONG_WORD.findall(reference.lower()))
    else:
        long_words = set(map(str.lower, _LONG_WORD.findall(reference)))
    for r in long_words:  # each distinct word once
        if r[0] in firsts:
            ref.setdefault((r[0], len(r)), set()).add(r)
    if not ref:
        return out
    for w in maybe:
        if w in ref.get((w[0], len(w)), ()):
            continue
        hits = [
            r
            for n in (len(w) - 1, len(w), len(w) + 1)
            for r in ref.get((w[0], n), ())
            if one_edit(w, r) and not (r.startswith(w) or w.startswith(r))
        ]  # not inflections
        if len(hits) == 1:
            out.append((w, hits[0]))
    return out


def chunk_counters(
    messages: Iterable[Message], prompts: Iterable[tuple[Message, Context]]
) -> Counter[tuple[str, str]]:
    """Counters for one chunk: `messages` are all stored messages, `prompts` the human prompts with context."""
    c: Counter[tuple[str, str]] = Counter()
    sessions: set[str] = set()
    machines: dict[str, tuple[str, str] | None] = {}  # cwd -> its counter (a chunk has few cwds)
    for m in messages:
        sessions.add(m.session_id)
        if m.cwd:
            if m.cwd not in machines:
                machines[m.cwd] = _machine(m.cwd)
            machine = machines[m.cwd]
            if machine:
                c[machine] += 1
        if m.kind == "tool_use" and m.tool_name:
            c[("tool", m.tool_name)] += 1
            if m.is_sidechain:
                c[("workflow", "subagent_tool_calls")] += 1
            target = m.tool_target or ""
            if m.tool_name == "Bash":
                if _PM_NAMES.search(target):
                    for pm in _PM_RE.findall(target):
                        c[("pkg", pm)] += 1
                if any(w in target for w in _TEST_WORDS):
                    for tr in _TEST_RE.findall(target):
                        c[("test_runner", tr)] += 1
                if "git" in target:  # in every match
                    for g in _GIT_RE.findall(target):
                        c[("git", g)] += 1
                if any(w in target for w in _SSH_WORDS):
                    for host in _SSH.findall(target):
                        c[("host", host.lower())] += 1
            elif m.tool_name in EDIT_TOOLS:
                ext = _EXT.search(target)
                if ext:
                    c[("lang", ext.group(1).lower())] += 1
                c[("workflow", "edits")] += 1
            elif m.tool_name in ("Task", "Agent"):
                c[("workflow", "subagents")] += 1
            elif m.tool_name == "TodoWrite":
                c[("workflow", "todo_updates")] += 1
            elif m.tool_name == "ExitPlanMode":
                c[("workflow", "plans")] += 1
        elif m.kind == "tool_result" and m.is_error:
            c[("workflow", "tool_errors")] += 1
        elif m.kind == "interrupt":
            c[("satisfaction", "interrupts")] += 1
        elif m.kind == "compact_boundary":
            c[("workflow", "compactions")] += 1
        elif m.kind == "command":
            c[("command", (m.text.split() or ["?"])[0][:40])] += 1
    for m, ctx in prompts:
        _voice(c, m, ctx)
    c[("workflow", "sessions_touched")] += len(sessions)
    return c


def _machine(cwd: str) -> tuple[str, str] | None:
    """The `machine` counter of a working directory under a home directory (operating system and user)."""
    home = _HOME.match(cwd)
    if not home:
        return None
    os_name = "windows" if ":\\" in cwd[:4] else ("macos" if cwd.startswith("/Users/") else "linux")
    return ("machine", f"{os_name}|{home.group(1)}")


def _voice(c: Counter[tuple[str, str]], m: Message, ctx: Context) -> None:
    text = m.text.strip()
    if not text:
        return
    words = _WORD.findall(text)
    c[("voice", "prompts")] += 1
    c[("voice", "words")] += len(words)
    c[("voice", "chars")] += len(text)
    if len(words) <= 8:
        c[("voice", "short_prompts")] += 1
    if len(words) >= 80:
        c[("voice", "long_prompts")] += 1
    if text[0].islower():
        c[("voice", "lowercase_start")] += 1
    if text[-1] not in ".!?)`\"'":
        c[("voice", "no_final_punct")] += 1
    if "?" in text:
        c[("voice", "questions")] += 1
    if "!" in text:
        c[("voice", "exclaims")] += 1
    low = text.lower()
    if _PLEASE.found(text, low):
        c[("voice", "please")] += 1
    if _EMOJI.search(text):
        c[("voice", "emoji")] += 1
    if words:
        c[("opener", words[0].lower()[:20])] += 1
    if m.ts and len(m.ts) >= 13:
        c[("hour", m.ts[11:13])] += 1
    for typo, fix in learned_typos(text, ctx.prev_assistant_text, words):
        c[("typo", f"{typo}>{fix}")] += 1
    if _POSITIVE.found(text, low):
        c[("satisfaction", "positive")] += 1
    if _NEGATIVE.found(text, low):
        c[("satisfaction", "negative")] += 1
    for w in words:
        if w.islower():
            continue  # (most words: neither test below can hold without an upper-case letter)
        # (`_WORD` is ASCII: a letter after the first is upper-case where lower() changes it)
        if len(w) >= 4 and w[1:].lower() != w[1:] and w.upper() != w:
            c[("vocab", w)] += 1  # mixed-case names the operator types: parseConfig, AeroSpace
        elif w.isupper() and 3 <= len(w) <= 12:
            c[("vocab", w)] += 1  # acronyms
