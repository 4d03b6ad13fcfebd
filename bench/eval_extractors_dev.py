"""Score the pipeline extractors against the labelled dev set.

Usage::

    .venv/bin/python bench/eval_extractors_dev.py [--labels FILE] [--corpus DIR] [--split odd|even|all]
                                                  [--json] [--show CLASS] [--speed]

For every labelled item an ``Utterance`` is built from its text and role; the context the walker
would resolve (previous assistant text, previous human prompt, recent tool calls) is recovered by
opening the item's corpus file read-only and walking ``parentUuid`` back from the record. The
predicted kinds are mapped onto the label classes with the README's class->kind mapping and scored
with ``extractors.evaluation``.

The split is by the number in the item id (``ed0001`` is odd): heuristics are developed on the odd
items and checked on the even ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractors.evaluation import CLASSES, format_table, predicted_classes, score  # noqa: E402
from extractors.model import ToolEvent, Utterance  # noqa: E402
from extractors.pipeline import extract  # noqa: E402

DEFAULT_LABELS = ROOT.parent / "shared" / "eval" / "extract-dev.jsonl"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
MAX_TOOLS = 8

_ECHO_MARKERS = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "[Request interrupted",
    "This session is being continued",
)


def _load_records(path: Path) -> dict[str, dict[str, Any]]:
    recs: dict[str, dict[str, Any]] = {}
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
                recs[obj["uuid"]] = obj
    return recs


def _content(rec: dict[str, Any]) -> Any:
    msg = rec.get("message")
    return msg.get("content") if isinstance(msg, dict) else None


def _human_text(rec: dict[str, Any]) -> str | None:
    """The human-typed text of a user record, or None for tool results, meta and echoes."""
    if rec.get("type") != "user" or rec.get("isMeta") or rec.get("isCompactSummary"):
        return None
    content = _content(rec)
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        text = "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    else:
        return None
    text = text.strip()
    if not text or any(m in text[:200] for m in _ECHO_MARKERS):
        return None
    return text


def _assistant_text(rec: dict[str, Any]) -> str | None:
    if rec.get("type") != "assistant":
        return None
    content = _content(rec)
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        text = "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ).strip()
        return text or None
    return None


def _tool_uses(rec: dict[str, Any]) -> list[dict[str, Any]]:
    content = _content(rec)
    if rec.get("type") != "assistant" or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def _tool_summary(block: dict[str, Any]) -> str:
    inp = block.get("input")
    if isinstance(inp, dict):
        for key in ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt"):
            val = inp.get(key)
            if isinstance(val, str) and val:
                return val[:200]
        return json.dumps(inp)[:200]
    return ""


def _result_index(recs: dict[str, dict[str, Any]]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    for rec in recs.values():
        content = _content(rec)
        if rec.get("type") != "user" or not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                body = b.get("content")
                if isinstance(body, list):
                    body = "\n".join(x.get("text", "") for x in body if isinstance(x, dict))
                out[str(b.get("tool_use_id"))] = (bool(b.get("is_error")), str(body or "")[:300])
    return out


def build_utterance(item: dict[str, Any], corpus: Path, cache: dict[str, Any]) -> Utterance:
    u = Utterance(
        uuid=item["uuid"], session_id=item.get("session_id") or "", role=item["role"], text=item["text"]
    )
    path = corpus / item["file"]
    if not path.is_file():
        return u
    if item["file"] not in cache:
        recs = _load_records(path)
        cache[item["file"]] = (recs, _result_index(recs))
    recs, results = cache[item["file"]]
    rec = recs.get(item["uuid"])
    if rec is None:
        return u
    u.cwd = rec.get("cwd")
    u.ts = rec.get("timestamp")
    u.is_sidechain = bool(rec.get("isSidechain"))
    tools: list[ToolEvent] = []
    collecting_tools = True
    seen: set[str] = {item["uuid"]}
    cur = recs.get(rec.get("parentUuid") or "")
    steps = 0
    while cur is not None and steps < 5000:
        steps += 1
        uid = cur.get("uuid", "")
        if uid in seen:
            break
        seen.add(uid)
        human = _human_text(cur)
        if human is not None:
            collecting_tools = False
            if item["role"] == "assistant":
                u.prev_user_text = human
                break
        if cur.get("type") == "assistant":
            text = _assistant_text(cur)
            if text and u.prev_assistant_text is None and item["role"] == "user":
                u.prev_assistant_text = text
            if collecting_tools:
                for block in reversed(_tool_uses(cur)):
                    err, head = results.get(str(block.get("id")), (False, ""))
                    tools.append(ToolEvent(str(block.get("name")), _tool_summary(block), err, head))
        if item["role"] == "user" and u.prev_assistant_text is not None and not collecting_tools:
            break
        cur = recs.get(cur.get("parentUuid") or cur.get("logicalParentUuid") or "")
    tools.reverse()
    u.recent_tools = tools[-MAX_TOOLS:]
    return u


def corpus_utterances(corpus: Path) -> tuple[list[Utterance], int]:
    """Every human prompt and assistant text record in the corpus, with context; and total bytes."""
    out: list[Utterance] = []
    cache: dict[str, Any] = {}
    size = 0
    for path in sorted(corpus.glob("projects/**/*.jsonl")):
        size += path.stat().st_size
        rel = str(path.relative_to(corpus))
        for uid, rec in _load_records(path).items():
            role = rec.get("type")
            text = (
                _human_text(rec) if role == "user" else _assistant_text(rec) if role == "assistant" else None
            )
            if text:
                item = {
                    "file": rel,
                    "uuid": uid,
                    "session_id": rec.get("sessionId") or "",
                    "role": role,
                    "text": text,
                }
                out.append(build_utterance(item, corpus, cache))
    return out, size


def _cpu_rate(batch: list[Utterance], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        for u in batch:
            extract(u)
        best = min(best, time.process_time() - t0)
    return len(batch) / best if best > 0 else float("inf")


def speed(dev: list[Utterance], corpus: Path) -> dict[str, Any]:
    """CPU-time throughput of extract() (best of several runs; wall time is noisy on shared hosts)."""
    out: dict[str, Any] = {"dev_utterances_per_s": round(_cpu_rate(dev, 5))}
    batch, size = corpus_utterances(corpus)
    if batch:
        out["corpus_utterances"] = len(batch)
        out["corpus_mb"] = round(size / 1e6, 1)
        out["corpus_utterances_per_s"] = round(_cpu_rate(batch, 3))
    return out


def _in_split(item_id: str, split: str) -> bool:
    if split == "all":
        return True
    digits = "".join(ch for ch in item_id if ch.isdigit())
    odd = bool(digits) and int(digits) % 2 == 1
    return odd if split == "odd" else not odd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split", choices=("odd", "even", "all", "both"), default="both")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", metavar="CLASS", help="print false positives/negatives for a class")
    ap.add_argument(
        "--speed", action="store_true", help="time extract() on the dev items and the whole corpus"
    )
    args = ap.parse_args(argv)

    items = [json.loads(line) for line in args.labels.open() if line.strip()]
    cache: dict[str, Any] = {}
    utts = {it["id"]: build_utterance(it, args.corpus, cache) for it in items}
    preds = {it["id"]: extract(utts[it["id"]]) for it in items}

    splits = ("odd", "even") if args.split == "both" else (args.split,)
    report: dict[str, Any] = {}
    for split in splits:
        sel = [it for it in items if _in_split(it["id"], split)]
        gold = {it["uuid"] + "#" + it["id"]: set(it["labels"]) for it in sel}
        pred = {it["uuid"] + "#" + it["id"]: predicted_classes(e.kind for e in preds[it["id"]]) for it in sel}
        report[split] = score(gold, pred)
        if not args.json:
            print(f"\n== split: {split} ({len(sel)} items)")
            print(format_table(report[split]))
    if args.show:
        cls = args.show
        for it in items:
            if not _in_split(it["id"], args.split if args.split != "both" else "all"):
                continue
            got = predicted_classes(e.kind for e in preds[it["id"]])
            want = cls in it["labels"]
            has = cls in got
            if want != has:
                tag = "FN" if want else "FP"
                u = utts[it["id"]]
                print(f"--- {tag} {it['id']} {it['role']} labels={it['labels']} got={sorted(got)}")
                if u.prev_assistant_text:
                    print("    prev_asst:", u.prev_assistant_text[:200].replace("\n", " "))
                print("    text:", it["text"][:400].replace("\n", " "))
    if args.speed:
        report["speed"] = speed(list(utts.values()), args.corpus)
        if not args.json:
            sp = report["speed"]
            print(
                f"\nspeed (CPU time): dev items {sp['dev_utterances_per_s']:,} utterances/s; whole corpus "
                f"{sp['corpus_utterances']:,} utterances ({sp['corpus_mb']} MB) at {sp['corpus_utterances_per_s']:,}/s"
            )
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    assert set(CLASSES)
    raise SystemExit(main())
