"""Worker side of indexing: parse a file chunk, scrub every string, run the extractors.

Pure and picklable: runs in worker processes (`--jobs N`); the result goes to the single writer.
The scrubber is applied here, centrally, to every string field of every row of the chunk (text,
paths, cwd, git branch, titles, summaries, tool names and targets, subagent descriptions, ids) *before*
anything is derived from it, so extractions, profile counters, project keys and the carried context
are built from scrubbed text; nothing reaches the writer unscrubbed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import fields
from itertools import chain
from operator import attrgetter
from typing import Any

import orjson

from extractors.model import ToolEvent, Utterance
from extractors.pipeline import extract
from extractors.profiles import chunk_counters
from extractors.scrub_batch import scrub_changes
from extractors.scrubber import scrub_obj, scrub_text
from extractors.summaries import extract_summary
from index.store.message_rows import fts_columns, message_rows
from index.store.record_rows import fold_turns, turn_rows
from index.store.tasks import Task, head_hash
from index.store.userstate import LEAF
from index.store.writer import Prepared
from lib.context import Context, iter_contexts
from lib.model import Carry, FileChunk, Message
from lib.project import project_key
from lib.sources import parse

FIRST_PROMPT_CHARS = 300  # as lib/records.py keeps it


def prepare(task: Task) -> Prepared:
    chunk = parse(task.path, task.start, Carry.from_json(task.carry), task.info)
    if task.forgotten:
        _drop_sessions(chunk, task.forgotten)
    scrub_chunk(chunk)
    rows, prompts = _extract(chunk)
    return assemble(task, chunk, rows, chunk_counters(chunk.messages, prompts))


def assemble(
    task: Task,
    chunk: FileChunk,
    rows: list[tuple[Any, ...]],
    counters: Counter[tuple[str, str]],
) -> Prepared:
    """The hand-over to the writer: the scrubbed chunk's rows, FTS fields and counters (a stage of its
    own so `bench/cg_glue.py` can count it apart)."""
    bodies, texts, idents = fts_columns(chunk.messages)
    messages = message_rows(chunk.messages, bodies)
    externals = [
        (i, m.parent_uuid, m.fallback_parent) for i, m in enumerate(chunk.messages) if m.parent_external
    ]
    aliases = [(a.uuid, a.parent_uuid) for a in chunk.aliases]
    turns = fold_turns(turn_rows(chunk.turns))
    chunk.messages, chunk.aliases, chunk.turns = [], [], []  # they travel as the rows above
    return Prepared(
        chunk=chunk,
        root=task.root,
        project_dir=task.project_dir,
        layout=task.info.layout,
        size=task.size,
        mtime_ns=task.mtime_ns,
        inode=task.inode,
        head_hash=head_hash(task.path, chunk.end),
        reset=task.reset,
        agent=task.info.agent,
        extractions=rows,
        messages=messages,
        externals=externals,
        aliases=aliases,
        turns=turns,
        texts=texts,
        idents=idents,
        counters=[(p, scrub_text(k), v) for (p, k), v in counters.items()],
    )


def _drop_sessions(chunk: FileChunk, gone: frozenset[str]) -> None:
    """Sessions the user asked to forget (I5) are dropped before anything is derived from them, with the
    `summary` records about them: those naming one of their records, or a leaf remembered when the
    session was forgotten (`leaf:<uuid>` rows of `forgotten`; summaries usually sit in another file)."""
    dropped = {m.uuid for m in chunk.messages if m.session_id in gone}
    dropped.update(a.uuid for a in chunk.aliases if a.session_id in gone)
    chunk.summaries = [
        (leaf, title) for leaf, title in chunk.summaries if leaf not in dropped and LEAF + leaf not in gone
    ]
    chunk.messages = [m for m in chunk.messages if m.session_id not in gone]
    chunk.aliases = [a for a in chunk.aliases if a.session_id not in gone]
    chunk.turns = [t for t in chunk.turns if t.session_id not in gone]
    chunk.durations = [d for d in chunk.durations if d.session_id not in gone]
    chunk.compactions = [x for x in chunk.compactions if x.session_id not in gone]
    chunk.spawns = [s for s in chunk.spawns if s.session_id not in gone]
    chunk.agents = [a for a in chunk.agents if a.session_id not in gone]
    chunk.sessions = {k: v for k, v in chunk.sessions.items() if k not in gone}


def utterance(m: Message, ctx: Context) -> Utterance:
    """What the extractors see of a prompt or an answer: its text and the thread around it (the one
    place this is built: the extractor evaluation builds it the same way)."""
    return Utterance(
        uuid=m.uuid,
        session_id=m.session_id,
        role="user" if m.role == "user" else "assistant",
        text=m.text,
        ts=m.ts,
        cwd=m.cwd,
        is_sidechain=m.is_sidechain,
        prev_assistant_text=ctx.prev_assistant_text,
        prev_user_text=ctx.prev_user_text,
        recent_tools=[ToolEvent(n, s, e, h) for n, s, e, h in ctx.tools] if ctx.tools else [],
    )


def _extract(chunk: FileChunk) -> tuple[list[tuple[Any, ...]], list[tuple[Message, Context]]]:
    """Extraction rows for the chunk, plus the human prompts with their context (for profiles)."""
    rows: list[tuple[Any, ...]] = []
    prompts: list[tuple[Message, Context]] = []
    for m, ctx in iter_contexts(chunk.messages, chunk.carry):
        if m.kind not in ("prompt", "text"):
            continue
        if m.kind == "prompt":
            prompts.append((m, ctx))
        for e in extract(utterance(m, ctx)):
            content = scrub_text(e.content)
            context = scrub_obj(e.context) if e.context else {}
            rows.append(
                (
                    e.kind,
                    content,
                    orjson.dumps(context).decode(),
                    float(e.score),
                    e.session_id,
                    e.source_uuid,
                    e.ordinal,
                    e.cwd or m.cwd,
                    project_key(m.cwd),
                    e.ts or m.ts,
                )
            )
    for m in chunk.messages:
        if m.kind in ("away_summary", "compact_summary") and not m.is_sidechain:
            for e in extract_summary(
                m.kind, m.text, uuid=m.uuid, session_id=m.session_id, ts=m.ts, cwd=m.cwd
            ):
                rows.append(
                    (
                        e.kind,
                        scrub_text(e.content),
                        orjson.dumps(e.context).decode(),
                        e.score,
                        e.session_id,
                        e.source_uuid,
                        0,
                        e.cwd,
                        project_key(e.cwd),
                        e.ts,
                    )
                )
    return rows, prompts


def _scrub_rows(rows: list[Any] | Any, done: set[str], dirty: dict[str, str]) -> None:
    """Every string field of each row (a slots dataclass) through the one scrubber, in place. The
    distinct values are gathered first (ids, cwds, branches, models repeat on every row), those not
    judged yet for the chunk (`done`) are scrubbed in one batch (`scrub_changes`, which sorts out the
    identifiers in C), the ones that change join `dirty`, and rows are revisited only when one of their
    values is in it, which is rare."""
    rows = list(rows)
    if not rows:
        return
    names = _str_fields(type(rows[0]))
    if not names:
        return
    get = attrgetter(*names) if len(names) > 1 else (lambda r, g=attrgetter(names[0]): (g(r),))
    # A damaged record can put anything where text belongs: only strings are scrubbed. Gathered in C
    # (chain, filter, set): a comprehension ran ~300 instructions of bytecode per field of each row.
    seen = set(filter(_IS_STR, chain.from_iterable(map(get, rows))))
    new = seen - done
    done |= new
    dirty.update(scrub_changes(new))
    if not dirty or dirty.keys().isdisjoint(seen):
        return
    for row in rows:
        for name in names:
            v = getattr(row, name)
            if isinstance(v, str) and v in dirty:
                setattr(row, name, dirty[v])


def _str_fields(cls: type) -> tuple[str, ...]:
    """The fields of a row type that hold text (`str` or `str | None`)."""
    names = _STR_FIELDS.get(cls)
    if names is None:
        names = _STR_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.type in ("str", "str | None"))
    return names


_STR_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_STR = str.__instancecheck__


def scrub_chunk(chunk: FileChunk) -> None:
    """Every stored string of the chunk goes through the one scrubber (the file path is the only
    exception: it is where the transcript is, needed to read it again)."""
    done: set[str] = set()
    dirty: dict[str, str] = {}
    for rows in (
        chunk.messages,
        chunk.aliases,
        chunk.turns,
        chunk.durations,
        chunk.compactions,
        chunk.spawns,
        chunk.agents,
        chunk.sessions.values(),
    ):
        _scrub_rows(rows, done, dirty)
    first: dict[str, str] = {}
    for m in chunk.messages:  # lib cut the raw text; cut the scrubbed one so no token is split
        if m.kind == "prompt" and m.session_id not in first:
            first[m.session_id] = m.text[:FIRST_PROMPT_CHARS]
    for d in chunk.sessions.values():
        if d.first_prompt:
            d.first_prompt = first.get(d.session_id) or d.first_prompt
        d.models = {scrub_text(x) for x in d.models}
        d.titles = {k: scrub_text(v) for k, v in d.titles.items()}
    chunk.summaries = [(scrub_text(leaf), scrub_text(title)) for leaf, title in chunk.summaries]
    chunk.carry.threads = scrub_obj(chunk.carry.threads)
    chunk.carry.source = scrub_obj(chunk.carry.source)
    chunk.carry.inline = {scrub_text(k): scrub_text(v) for k, v in chunk.carry.inline.items()}
