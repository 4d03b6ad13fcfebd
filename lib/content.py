"""Content normalisation (W5): message content -> (kind, searchable text, tool fields).

`thinking` blocks are dropped here and never leave this module. Envelopes that are not the
human's own words (meta text, command echoes, reminders, compact summaries, interrupts) get
their own kinds so extractors can ignore them.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from lib.injected import LEGACY_CUE, MARK, strip_ours

TOOL_RESULT_CAP = 2000
TOOL_INPUT_CAP = 1200
TEXT_CAP = 60000

_REMINDER = re.compile(r"<(system-reminder|ide_selection|ide_opened_file|ide_diagnostics)>.*?</\1>", re.S)
# An unclosed span (cut by a size cap, or never closed) is private to the end of the text.
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)
_CMD_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_CMD_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_TAG = re.compile(r"</?[a-z][a-z0-9-]*>")
COMPACT_PREFIX = "This session is being continued from a previous conversation"
_INTERRUPT = "[Request interrupted by user"


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_private(text: str) -> str:
    """`<private>…</private>` spans are never stored (S3); terminal colour codes are noise."""
    if "<" in text and ("<private>" in text or "<PRIVATE>" in text):  # (memchr rules most texts out)
        text = _PRIVATE.sub("[private]", text)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def message_text(text: str) -> str:
    """What the walker stores of every message's text: `strip_ours(strip_private(text))[0]` cut at
    TEXT_CAP, in one call with their guards tested here (two calls and a tuple per message were ~1 % of
    parsing; most texts hold none of the marks, and few reach the cap)."""
    if "<" in text and ("<private>" in text or "<PRIVATE>" in text) or "\x1b" in text:
        text = strip_private(text)
    if MARK in text or LEGACY_CUE in text:
        text = strip_ours(text)[0]
    return text if len(text) <= TEXT_CAP else cut(text, TEXT_CAP)


def classify_user_text(text: str, *, is_meta: bool, is_compact: bool) -> tuple[str, str]:
    """Return (kind, cleaned text) for a user string/text content."""
    if is_compact or text.startswith(COMPACT_PREFIX):
        return "compact_summary", text
    if is_meta:
        return "meta", text
    head = text[:200]
    if "<command-name>" in head or "<command-message>" in head:
        name = _CMD_NAME.search(text)
        args = _CMD_ARGS.search(text)
        cleaned = " ".join(
            x for x in ((name.group(1).strip() if name else ""), (args.group(1).strip() if args else "")) if x
        )
        return "command", cleaned or _TAG.sub(" ", text).strip()
    if (
        head.startswith("<local-command-")
        or head.startswith("<bash-stdout>")
        or head.startswith("<bash-stderr>")
    ):
        return "command_output", _TAG.sub(" ", text).strip()
    if head.startswith("<bash-input>"):
        return "bash_input", _TAG.sub("", text).strip()
    if text.startswith(_INTERRUPT):
        return "interrupt", text
    if "<system-reminder>" in text or "<ide_" in text:
        rest = _REMINDER.sub("", text).strip()
        if not rest:
            return "system_reminder", text
        text = rest
    if (
        head.startswith("<user-prompt-submit-hook>")
        or head.startswith("Caveat: The messages below")
        or head.lstrip().startswith("<task-notification>")  # a background agent's report, sent as a turn
    ):
        return "meta", text
    return "prompt", text


def block_text(content: Any) -> str:
    """Text of a content list (user text blocks, tool_result content): text joined, images and
    documents as placeholders; a plain string is returned as is."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "text":
                parts.append(str(b.get("text") or ""))
            elif t in ("image", "document"):
                parts.append(f"[{t}]")
            elif t == "tool_reference":
                parts.append(str(b.get("tool_name") or b.get("name") or ""))
        return "\n".join(parts)
    return ""


def tool_summary(name: str, inp: Any) -> tuple[str | None, str]:
    """(target, searchable text) for a tool call: the command or file it acted on, plus input."""
    if not isinstance(inp, dict):
        return None, f"{name}"
    target: str | None = None
    if "command" in inp and isinstance(inp["command"], str):
        target = cut(inp["command"], 300)
    if not target:  # (the loop below can change only an empty target: a command skips it)
        for key in ("file_path", "notebook_path", "path", "url", "pattern", "query", "skill"):
            v = inp.get(key)
            if isinstance(v, str) and v:
                target = cut(v, 300)
                break
    if name in ("Task", "Agent"):
        target = cut(str(inp.get("subagent_type") or inp.get("description") or ""), 300) or None
    if name == "TodoWrite" and isinstance(inp.get("todos"), list):
        items = [
            f"[{t.get('status', '')}] {t.get('content', '')}" for t in inp["todos"] if isinstance(t, dict)
        ]
        return None, f"{name}: " + cut("; ".join(items), TOOL_INPUT_CAP)
    if name in ("Edit", "MultiEdit", "Write"):
        body = inp.get("new_string") or inp.get("content") or ""
        if name == "MultiEdit" and isinstance(inp.get("edits"), list):
            body = "\n".join(str(e.get("new_string", "")) for e in inp["edits"] if isinstance(e, dict))
        return target, f"{name} {target or ''}\n{cut(str(body), TOOL_INPUT_CAP)}"
    if name == "Bash":
        desc = inp.get("description") or ""
        return target, cut(f"{name}: {inp.get('command', '')}\n{desc}", TOOL_INPUT_CAP)
    try:
        dumped = orjson.dumps(inp).decode("utf-8", "replace")
    except orjson.JSONEncodeError:  # integers beyond 64 bits (lines recovered by the stdlib decoder)
        dumped = str(inp)
    return target, f"{name}: {cut(dumped, TOOL_INPUT_CAP)}"


TOOL_RESULT_TAIL = 500  # of TOOL_RESULT_CAP: a test run's summary, a command's last error line


def cut_ends(text: str, cap: int, tail: int = TOOL_RESULT_TAIL) -> str:
    """A tool result over `cap`: its start and its last `tail` chars (what a test run or a build
    reports last), the middle replaced by " … "; both cuts fall between words, like `cut`, so no
    token is stored in part. Not `lib.text.clip`, which squashes to one line for display."""
    if len(text) <= cap:
        return text
    end = text[len(text) - tail :]
    for i in range(min(_CUT_BACK, len(end))):
        if end[i] in _BOUNDARY:
            end = end[i:]
            break
    return cut(text, cap - tail) + " … " + end


_BOUNDARY = frozenset(" \t\r\n\"'`,;&|<>()[]{}")
_CUT_BACK = 160


def cut(text: str, cap: int) -> str:
    """`text[:cap]`, moved back to the end of the last whole word when one straddles the cap: a token
    cut short no longer has the shape the scrubber recognises, and would be stored in part."""
    if len(text) <= cap:
        return text
    if text[cap - 1] in _BOUNDARY or text[cap] in _BOUNDARY:
        return text[:cap]
    for i in range(cap - 1, max(0, cap - _CUT_BACK) - 1, -1):
        if text[i] in _BOUNDARY:
            return text[: i + 1]
    return text[:cap]


_TODO = re.compile(
    r"\[(pending|in_progress|completed)\]\s*(.*?)(?=;\s*\[(?:pending|in_progress|completed)\]|$)", re.S
)


def todo_items(text: str) -> list[tuple[str, str]]:
    """(status, content) of each item of a stored TodoWrite call, as `tool_target` writes it
    (`TodoWrite: [status] content; [status] content`): the one reader of that format."""
    body = text.split(":", 1)[1] if text.startswith("TodoWrite") else text
    return [(s, " ".join(c.split()).rstrip(" ;")) for s, c in _TODO.findall(body)]


def prompt_key(text: str) -> str:
    """Stable key for matching a subagent's first prompt to the Task call that sent it."""
    return hashlib.blake2b(
        " ".join(text.split())[:2000].encode("utf-8", "replace"), digest_size=8
    ).hexdigest()
