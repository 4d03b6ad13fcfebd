"""Build one session's digest (S1) from rows the ingest already wrote: what was asked, investigated,
learned, decided and completed, what is next, which files were read and edited. No LLM; each item
keeps the uuid of the message it comes from.

Sources: `messages` (prompts, tool calls and their results: files, searches, commands, commits,
passing test runs, the plan of the last TodoWrite), `extractions` (facts, decisions, corrections,
rules, progress, failed attempts, goals). Rows are read in
(ts, uuid) order, never by autoincrement id, so an incremental index builds the same digest as a
full one (`tests/test_properties.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from index.store.digest_rules import (
    GIT_COMMIT,
    command_key,
    commit_subject,
    observation_type,
    passing_run,
    relative,
    runs_tests,
)
from index.store.textstore import unpack
from lib import sqlite
from lib.content import todo_items
from lib.model import EDIT_TOOLS
from lib.text import clip

READ_TOOLS = ("Read", "NotebookRead")
SEARCH_TOOLS = ("Grep", "Glob", "WebSearch", "WebFetch")
ITEM_CHARS = 1000  # one stored item's text: a pasted log in a prompt cannot fill the table

_SENT = re.compile(r"(?<=[.!?])[^\S\n]+|\n+")
_NEXT = re.compile(
    r"\b(next step|next,|remaining|todo|still need|follow[- ]up|left to|we should|you (?:can|could|should|"
    r"may want to)(?!'t|n't| not)|would you like|want me to|shall i)\b",
    re.I,
)
# The last answer only says what it will do next: the request it answers is still open.
_INTENT = re.compile(
    r"(?:^|[.!:]\s+)(?:let me|i'll|i will|i need to|need to|now i|next,? i|i'm going to)\b[^.!?]*[.:]?$",
    re.I,
)
# The last answer reports the last request done: "Done.", "Fixed and committed", "Pushed", "Ready for…".
_DONE = re.compile(
    r"^\W{0,4}(?:done|fixed|pushed|committed|merged|amended|resolved|complete[d]?|all set|ready for|"
    r"updated|created|added|implemented)\b|\b(?:is|are|now) (?:complete|done|fixed|resolved|clean)\b",
    re.I,
)
# Extraction kind -> (section, item kind).
_EXTRACTED = {
    "domain_fact": ("learned", "fact"),
    "self_correction": ("learned", "discovery"),
    "failed_attempt": ("learned", "failed"),
    "decision": ("decisions", "decision"),
    "standing_decision": ("decisions", "decision"),
    "standing_order": ("rules", "rule"),  # an order settles no choice: it is a rule, as bans are
    "correction": ("corrections", "correction"),
    "model_correction": ("corrections", "correction"),
    "ban": ("rules", "rule"),
    "progress": ("completed", "progress"),
    "goal_progress": ("completed", "progress"),
}


@dataclass(slots=True)
class Item:
    section: str
    kind: str
    text: str
    uuid: str | None
    ts: str | None
    detail: str | None = None
    obs_type: str | None = None
    n: int = 1


@dataclass(slots=True)
class Digest:
    session_id: str
    meta: dict[str, Any]
    items: list[Item] = field(default_factory=list)


def _rows(conn: sqlite.Connection, sql: str, args: Iterable[Any]) -> list[tuple[Any, ...]]:
    return conn.execute(sql, tuple(args)).fetchall()


def _bodies(conn: sqlite.Connection, uuids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(uuids), 500):
        part = uuids[i : i + 500]
        for uuid, body in conn.execute(
            f"SELECT uuid, body FROM messages WHERE uuid IN ({','.join('?' * len(part))})", part
        ):
            out[uuid] = unpack(body)
    return out


def build(conn: sqlite.Connection, sid: str) -> Digest | None:
    """The digest of one session, or None when the session is not indexed."""
    meta_row = conn.execute(
        """SELECT project_key, cwd, title, first_ts, last_ts, n_prompts, n_tool_calls, models
           FROM sessions WHERE session_id = ?""",
        (sid,),
    ).fetchone()
    if meta_row is None:
        return None
    key, cwd, title, first, last, prompts, tool_calls, models = meta_row
    tok = conn.execute(
        """SELECT count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
                  sum(cache_creation_tokens) FROM turns WHERE session_id = ?""",
        (sid,),
    ).fetchone()
    d = Digest(
        sid,
        {
            "project_key": key,
            "cwd": cwd,
            "title": title,
            "first_ts": first,
            "last_ts": last,
            "turns": prompts or 0,
            "api_calls": tok[0] or 0,
            "tool_calls": tool_calls or 0,
            "models": models,
            "input_tokens": tok[1] or 0,
            "output_tokens": tok[2] or 0,
            "cache_read_tokens": tok[3] or 0,
            "cache_write_tokens": tok[4] or 0,
        },
    )
    msgs = _rows(
        conn,
        """SELECT uuid, kind, ts, tool_name, tool_target, tool_use_id, is_error, agent_id, is_sidechain, on_main
           FROM messages WHERE session_id = ? ORDER BY ts, uuid""",
        (sid,),
    )
    _tools(conn, d, msgs, cwd)
    _extracted(conn, d)
    _conversation(conn, d, msgs)
    return d


def _group(groups: dict[tuple[str, str], Item], key: tuple[str, str], make: Item) -> None:
    have = groups.get(key)
    if have is None:
        groups[key] = make
    else:
        have.n += 1


def _run_kinds(command: str) -> tuple[bool, bool]:
    """(a `git commit`, a test run): "commit" is in every command GIT_COMMIT matches, and most
    commands are neither, so the cheap test spares most regex searches."""
    return "commit" in command and GIT_COMMIT.search(command) is not None, runs_tests(command)


def _tools(conn: sqlite.Connection, d: Digest, msgs: list[tuple[Any, ...]], cwd: str | None) -> None:
    """Files read and edited, searches, commands (grouped by what they run), commits, passing tests,
    and the plan of the last TodoWrite of the main thread."""
    results = {m[5]: m for m in msgs if m[1] == "tool_result" and m[5]}
    groups: dict[tuple[str, str], Item] = {}
    bash: list[tuple[Any, ...]] = []
    todo: str | None = None
    for m in msgs:
        uuid, kind, ts, name, target, _tuid, _err, agent, _side, _main = m
        if kind != "tool_use" or not name or not target and name != "TodoWrite":
            continue
        if name in READ_TOOLS or name in EDIT_TOOLS:
            section = "files_edited" if name in EDIT_TOOLS else "files_read"
            _group(groups, (section, target), Item(section, name, relative(target, cwd), uuid, ts, target))
        elif name in SEARCH_TOOLS:
            _group(
                groups,
                ("search", f"{name} {target}"),
                Item("investigated", "search", f"{name} {target}", uuid, ts),
            )
        elif name == "Bash":
            bash.append(m)
        elif name == "TodoWrite" and agent is None:
            todo = uuid
    cut = _bodies(
        conn, [m[0] for m in bash if len(m[4]) >= 140]
    )  # the target may be cut (300 chars, back to a word): read the body
    commands = {m[0]: cut[m[0]].removeprefix("Bash: ") if m[0] in cut else m[4] for m in bash}
    # (a commit, a test run) for each command whose result is known, each pattern tried once
    runs = {m[0]: _run_kinds(commands[m[0]]) for m in bash if m[5] in results}
    wanted = [results[m[5]][0] for m in bash if any(runs.get(m[0], ()))]
    outputs = _bodies(conn, wanted + ([todo] if todo else []))
    failed = 0
    for uuid, _kind, ts, _name, _target, tuid, *_ in bash:
        cmd = commands[uuid]
        ck = command_key(cmd)
        _group(groups, ("command", ck), Item("investigated", "command", ck, uuid, ts))
        res = results.get(tuid)
        if res is None:
            continue
        failed += bool(res[6])
        out = outputs.get(res[0], "")
        commit, test = runs[uuid]
        if commit and not res[6]:
            subject = commit_subject(cmd, out)
            d.items.append(
                Item(
                    "completed",
                    "commit",
                    subject,
                    uuid,
                    ts,
                    clip(cmd, 300),
                    observation_type("commit", subject),
                )
            )
        elif test and (hit := passing_run(cmd, bool(res[6]), out)):
            line = out[out.rfind("\n", 0, hit.start()) + 1 :].split("\n", 1)[0]
            d.items.append(
                Item("completed", "tests", f"{ck}: {clip(line.strip('= '), 160)}", uuid, ts, clip(cmd, 300))
            )
    d.items.extend(groups.values())
    if todo:
        for status, text in todo_items(outputs.get(todo, "")):
            if status != "completed":
                d.items.append(Item("next", "plan", clip(text, ITEM_CHARS), todo, None, status))
    counts = {
        s: sum(1 for k in groups if k[0] == s) for s in ("files_read", "files_edited", "search", "command")
    }
    d.meta["counts"] = {**counts, "commands_run": len(bash), "commands_failed": failed}


def _extracted(conn: sqlite.Connection, d: Digest) -> None:
    """Facts, discoveries, failed attempts (with their cause), decisions, corrections, rules and
    progress from the extractions, and the goal the session set and left open or finished. Only the
    session's own rows: a later session (which may pause its goal in the project's goal stack) never
    changes an earlier session's digest."""
    seen: set[tuple[str, str]] = set()
    goal: Item | None = None  # the session's goal still open at its end
    for kind, content, context, uuid, ts in conn.execute(
        """SELECT kind, content, context, source_uuid, ts FROM extractions WHERE session_id = ?
           ORDER BY ts, source_uuid, ordinal, kind""",
        (d.session_id,),
    ):
        if kind == "goal" or (kind == "goal_progress" and goal is not None):
            status = orjson.loads(context or "{}").get("status") or "active"
            if kind == "goal":
                goal = Item("goal", "goal", clip(content, ITEM_CHARS), uuid, ts, status)
            if status == "done" and goal is not None:
                d.items.append(Item("completed", "goal", goal.text, uuid, ts, "done", "feature"))
            goal = goal if status in ("active", "blocked") else None
        if kind not in _EXTRACTED:
            continue
        section, ikind = _EXTRACTED[kind]
        norm = " ".join(content.lower().split())[:120]
        if (section, norm) in seen:
            continue
        seen.add((section, norm))
        ctx = orjson.loads(context or "{}")
        detail = ctx.get("error") if ikind == "failed" else ctx.get("rejected_approach")
        text = clip(content, ITEM_CHARS)
        d.items.append(
            Item(
                section,
                ikind,
                text,
                uuid,
                ts,
                clip(str(detail), 300) if detail else None,
                observation_type(ikind, text),
            )
        )
    if goal is not None:
        d.items.append(goal)


def _conversation(conn: sqlite.Connection, d: Digest, msgs: list[tuple[Any, ...]]) -> None:
    """The request (first real prompt of the main thread), the last prompt, how the session ended,
    and the next steps that come from the conversation: the last unfinished request and what the
    last answer proposed."""
    prompts = [m for m in msgs if m[1] == "prompt" and m[7] is None and not m[8]]
    answers = [m for m in msgs if m[1] == "text" and m[7] is None and not m[8] and m[9]]
    ends = prompts[:6] + prompts[-6:] + answers[-1:]
    body = _bodies(conn, list(dict.fromkeys(m[0] for m in ends)))
    real = [m for m in prompts[:6] + prompts[-6:] if not body.get(m[0], "").lstrip().startswith("<")]
    first = real[0] if real else (prompts[0] if prompts else None)
    last = real[-1] if real else None
    if first is not None:
        d.items.append(Item("request", "prompt", clip(body[first[0]], ITEM_CHARS), first[0], first[2]))
    last_ts = (last[2] or "") if last else ""  # timestamps may be missing (old Codex rollouts)
    ending = body.get(answers[-1][0], "") if answers and (answers[-1][2] or "") >= last_ts else ""
    if last is not None and first is not None and last[0] != first[0]:
        d.items.append(Item("last_prompt", "prompt", clip(body[last[0]], ITEM_CHARS), last[0], last[2]))
        done_after = any(i.section == "completed" and (i.ts or "") >= (last[2] or "") for i in d.items)
        waiting = not ending or ending.rstrip().endswith("?") or _INTENT.search(ending[-300:].rstrip())
        if not done_after and waiting and not _DONE.search(ending):
            d.items.append(Item("next", "request", clip(body[last[0]], ITEM_CHARS), last[0], last[2]))
    if answers:
        uuid, ts = answers[-1][0], answers[-1][2]
        text = body.get(uuid, "")
        d.items.append(Item("ending", "answer", clip(text, ITEM_CHARS), uuid, ts))
        sents = [x for x in _SENT.split(text) if len(x.split()) >= 3]
        picked = [x for x in sents if _NEXT.search(x)][:3]
        picked += [
            x for x in sents[-2:] if x.rstrip().endswith("?") and x not in picked
        ]  # it waits on the user
        for sent in picked:
            d.items.append(Item("next", "suggested", clip(sent, 240), uuid, ts))
