"""The one ban/rule matcher (`check-banned`, the MCP `check_banned` tool and the PreToolUse hook): a
rule matches an action when enough of its core words (stemmed identifiers, not substrings) are in the
action. For a tool call the action is its *shape* (`tool_action`): a Bash command's programs, flags and
one-word arguments (not the prose of an `echo` or a commit message), an edit's path and the identifiers
it adds (imports, dotted calls), an MCP tool's name and short arguments.

Light on purpose: the PreToolUse hook runs before every tool call and imports only this module
and `lib/` (`bans_for_action`; SQLite through lib/sqlite.py)."""

from __future__ import annotations

import re
import shlex
from typing import Any

from lib import sqlite
from lib.memid import memory_id
from lib.project import project_key
from lib.text import STOPWORDS

_RAW_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = STOPWORDS | frozenset("always don't dont else it's never new now without".split())
_CLAUSE = re.compile(r"[,;:]| because | since | we decided | as we ")
BANNED_AT = 0.5  # match share for the verdict "banned" (check-banned), and for acting on a tool call
POSSIBLE_AT = 0.3

# A rule from another project reaches this one only when it is stated as the operator's own, for
# every project ("in every repo ...", "I never ...", or a bare "always ..." that names nothing of one
# project); a project's decisions stay there. "I like / I prefer" is a taste only when it is not about
# something at hand: "I like the islands", "I prefer this one" react to one project's work.
_AT_HAND = r"(?!\s+(?:the|this|that|these|those|it|its|your|both|how|what|where|when)\b)"
OPERATOR_WIDE = re.compile(
    r"\b(?:in|for|across|on) (?:every|all|any|each) (?:of my )?(?:repos?|repositor(?:y|ies)|projects?|"
    r"codebases?|sessions?)\b|\b(?:everywhere|globally|in general|as a rule)\b|"
    rf"\bi (?:always|never|use|prefer{_AT_HAND}|like{_AT_HAND})\b|"
    r"\bmy (?:machines?|laptop|setup|shell|editor|terminal)\b",
    re.I,
)
_GENERAL_OPENER = re.compile(r"^(?:please )?(?:always|never)\b", re.I)
# Words that tie a rule to one project's material: "this repo", a path, a file or an identifier.
_PROJECT_BOUND = re.compile(
    r"\b(?:this|the|our) (?:repo|repository|project|codebase|app|game|service|site|branch|module|package)\b|"
    r"[/`]|\w\.\w|\w_\w",
    re.I,
)

# Tool-call shapes.
_SPLIT_CMD = re.compile(r"\|\||&&|[;|&\n]|\$\(|`")
_MESSAGE_FLAGS = frozenset(("-m", "--message", "-c", "--body", "--title", "-F"))
# Bounded repeats only (an edit's text is arbitrary): linear on any input (tests/test_regex_fuzz.py).
_ADDED_IDENTS = re.compile(
    r"^[ \t]{0,40}(?:from[ \t]{1,8}([\w.]{1,100})[ \t]{1,8}import[ \t]{1,8}([\w, ]{1,200})|import[ \t]{1,8}([\w., ]{1,200}))"
    r"|\brequire\([ \t]{0,8}['\"]([^'\"\n]{1,100})['\"]|\bfrom[ \t]{1,8}['\"]([^'\"\n]{1,100})['\"]"  # JS
    r"|\b([A-Za-z_]\w{0,40}(?:\.[A-Za-z_]\w{0,40}){1,4})[ \t]{0,4}\(",  # dotted calls: time.sleep(
    re.M,
)
MAX_SCAN = 20_000  # characters of an edit's new text scanned for identifiers
MAX_ARG = 200  # an MCP argument longer than this is prose, not a shape


def tokens(text: str) -> set[str]:
    """Content words, lower-cased and lightly stemmed (tests→test, failing→fail); two-letter words only
    as acronyms (RQ, CI, DB)."""
    out = set()
    for raw in _RAW_WORD.findall(text):
        w = raw.lower()
        if len(w) < 3 and not (len(w) == 2 and raw.isupper()) or w in _STOP:
            continue
        for suf in ("ing", "ed", "es", "s"):
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                w = w[: -len(suf)]
                break
        out.add(w)
    return out


def _core(text: str) -> str:
    """The rule itself, without its justification ("don't use X, we decided Y" → "don't use X")."""
    head = _CLAUSE.split(" " + text.lower() + " ", maxsplit=1)[0]
    return head if len(tokens(head)) >= 1 else text


def match_score(
    rule: str, statement: str | None, query: set[str], whole: bool = False
) -> tuple[float, list[str]]:
    """Share of the rule's core words (or all its words) found in the query; longer words weigh more."""
    best: tuple[float, list[str]] = (0.0, [])
    for text in (rule, statement or ""):
        core = (tokens(text) if whole else tokens(_core(text))) if text else set()
        if not core:
            continue
        weight = {w: 1.0 + min(len(w), 10) / 5 for w in core}
        hit = sorted(core & query)
        score = sum(weight[w] for w in hit) / sum(weight.values())
        if score > best[0]:
            best = (round(score, 3), hit)
    return best


def ban_matches(content: str, statement: str | None, query: set[str]) -> tuple[float, list[str]] | None:
    """(score, words) when a ban at least possibly matches the action's words, else None."""
    score, words = match_score(content, statement, query)
    if score >= POSSIBLE_AT and any(len(w) >= 4 for w in words):
        return score, words
    return None


def operator_wide(text: str) -> bool:
    """Is a rule stated for the operator everywhere rather than for one project's work?"""
    text = text or ""
    if OPERATOR_WIDE.search(text):
        return True
    return bool(_GENERAL_OPENER.search(text.strip())) and not _PROJECT_BOUND.search(text)


# --- tool calls ---------------------------------------------------------------------------------------


def command_shape(command: str) -> str:
    """A shell command's programs, flags and one-word arguments, simple command by simple command:
    quoted prose (an echo, a commit message, a heredoc body) is not part of what the command does."""
    command = command.split("<<", 1)[0][:MAX_SCAN]
    words: list[str] = []
    for part in _SPLIT_CMD.split(command):
        try:
            argv = shlex.split(part, comments=True)
        except ValueError:
            argv = part.split()
        skip = False
        for arg in argv:
            if skip:
                skip = False
                continue
            if arg in _MESSAGE_FLAGS:
                skip = True
                continue
            if any(c.isspace() for c in arg):
                continue  # a quoted sentence
            words.append(arg)
    return " ".join(words)


def _added_text(tool: str, args: dict[str, Any]) -> str:
    parts = [args.get(k) for k in ("new_string", "content", "new_source")]
    for edit in args.get("edits") or []:
        if isinstance(edit, dict):
            parts.append(edit.get("new_string"))
    return "\n".join(p for p in parts if isinstance(p, str))[:MAX_SCAN]


def edit_shape(tool: str, args: dict[str, Any]) -> str:
    """An edit's file path and the identifiers its new text brings in (imports, dotted calls)."""
    path = args.get("file_path") or args.get("notebook_path") or ""
    idents = [str(path)] if isinstance(path, str) else []
    for m in _ADDED_IDENTS.finditer(_added_text(tool, args)):
        idents.extend(g for g in m.groups() if g)
    return " ".join(idents)


def tool_action(tool: str, args: Any) -> str:
    """The shape of a tool call that bans are matched against ("" when the tool is not one we check)."""
    if not isinstance(args, dict):
        return ""
    if tool == "Bash":
        cmd = args.get("command")
        return command_shape(cmd) if isinstance(cmd, str) else ""
    from lib.model import EDIT_TOOLS  # here: Bash, the common call, does not pay for lib.model

    if tool in EDIT_TOOLS:
        return edit_shape(tool, args)
    if tool.startswith("mcp__"):
        vals = [v for v in args.values() if isinstance(v, str) and len(v) <= MAX_ARG]
        return " ".join([tool.replace("__", " "), *vals])
    return ""


# --- the hook's query -------------------------------------------------------------------------------------


class BanHit:
    """A ban that matches a tool call. A plain class: the PreToolUse hook must not import dataclasses."""

    __slots__ = ("id", "content", "date", "session_id", "project_key", "score", "words")

    def __init__(
        self,
        id: str,  # noqa: A002 - lib.memid id: what `bans enforce` takes
        content: str,
        date: str | None,
        session_id: str | None,
        project_key: str | None,
        score: float,
        words: list[str],
    ) -> None:
        self.id = id
        self.content = content
        self.date = date
        self.session_id = session_id
        self.project_key = project_key
        self.score = score
        self.words = words


_BANS = """SELECT t.content, t.project_key, t.last_ts, t.session_id, e.context, t.mentions FROM bans t
           LEFT JOIN extractions e ON e.id = t.extraction_id WHERE t.active = 1"""


def _in_scope(project: str | None, key: str | None, content: str, statement: str) -> bool:
    """This project's ban, or another project's stated operator-wide."""
    return project == key or operator_wide(content + " " + statement)


def _hit(
    content: str, project: str | None, last: str | None, sid: str | None, score: float, words: list[str]
) -> BanHit:
    return BanHit(
        memory_id("ban", project, content), content, (last or "")[:10] or None, sid, project, score, words
    )


def bans_for_action(conn: sqlite.Connection, action: str, cwd: str | None) -> list[BanHit]:
    """Active bans of this project, and other projects' operator-wide ones, that match `action`
    (score ≥ BANNED_AT), best first. One scan of the small `bans` table; a substring pre-check keeps
    the word matching to the few candidates."""
    query = tokens(action)
    probes = [w for w in query if len(w) >= 4]
    if not probes:
        return []
    key = project_key(cwd) if cwd else None
    out: list[BanHit] = []
    for content, project, last, sid, ctx, _n in conn.execute(_BANS):
        low = (content + " " + (ctx or "")).lower()
        if not any(w in low for w in probes):
            continue
        statement = statement_of(ctx)
        hit = ban_matches(content, statement, query)
        if hit is None or hit[0] < BANNED_AT or not _in_scope(project, key, content, statement):
            continue
        out.append(_hit(content, project, last, sid, *hit))
    out.sort(key=lambda b: -b.score)
    return out


def scope_bans(conn: sqlite.Connection, cwd: str | None, ban_id: str | None = None) -> list[BanHit]:
    """The bans the PreToolUse hook checks in `cwd` (every active ban when `cwd` is None), most
    mentioned first; with `ban_id`, only that one."""
    key = project_key(cwd) if cwd else None
    rows = sorted(conn.execute(_BANS), key=lambda r: (-(r[5] or 0), r[2] or ""))
    out = []
    for content, project, last, sid, ctx, _n in rows:
        if cwd and not _in_scope(project, key, content, statement_of(ctx)):
            continue
        hit = _hit(content, project, last, sid, 0.0, [])
        if ban_id is None or hit.id == ban_id:
            out.append(hit)
    return out


def statement_of(context: str | None) -> str:
    """The full sentence a ban was cut from (in its extraction's context JSON)."""
    if not context or '"statement"' not in context:
        return ""
    import json

    try:
        data = json.loads(context)
    except ValueError:
        return ""
    return str(data.get("statement") or "") if isinstance(data, dict) else ""
