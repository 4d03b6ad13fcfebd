"""Score the pipeline extractors against the labelled dev sets, pooled, per source and macro-averaged.

Usage::

    .venv/bin/python bench/eval_extractors_dev.py [--set LABELS=CORPUS ...] [--sources] [--split ...]
                                                  [--context index|chain] [--folds K] [--json]
                                                  [--show CLASS [--only SOURCE]] [--speed]

Without ``--set`` both dev sets are read (``extract-dev.jsonl`` over ``../shared/corpus`` and
``extract-dev2.jsonl`` over ``../shared/corpus-2``). A *source* is the repository a transcript came
from (``PROVENANCE.tsv`` beside the corpus). Scores are reported pooled, per set and as a macro
average over sources (``extractors.evaluation.macro``): a cue that helps one team and hurts another
shows up there. Leave-one-source-out figures for the learnt confidence model come from
``bench/train_confidence.py --loso``.

For every labelled item an ``Utterance`` is built with the context the indexer gives it
(``--context index``, the default: the walker's file-order thread context, previous texts capped as in
``lib.context``), so the scores equal ``total-recall eval extractors`` on a fresh index. ``--context
chain`` instead recovers the context by walking ``parentUuid`` back from the record (uncapped).
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

from extractors.evaluation import (  # noqa: E402
    CLASSES,
    MACRO_MIN_SUPPORT,
    format_macro,
    format_sources,
    format_table,
    macro,
    predicted_classes,
    read_provenance,
    score,
    score_by_source,
)
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


def index_utterances(items: list[dict[str, Any]], corpus: Path) -> dict[str, Utterance]:
    """The utterances exactly as ``index`` builds them (walker + file-order thread context), by uuid.

    The walker caps the previous texts and orders context by file position rather than by parent
    chain, so scores here match ``total-recall eval extractors`` on a fresh index.
    """
    from index.store.prepare import utterance
    from lib.context import iter_contexts
    from lib.discovery import discover
    from lib.model import Carry
    from lib.walker import parse_file

    wanted = {str(corpus / it["file"]) for it in items}
    out: dict[str, Utterance] = {}
    for found in discover([corpus / "projects"]):
        if found.path not in wanted:
            continue
        chunk = parse_file(found.path, 0, Carry(), found.info)
        for m, ctx in iter_contexts(chunk.messages, chunk.carry):
            if m.kind not in ("prompt", "text"):
                continue
            out[m.uuid] = utterance(m, ctx)
    return out


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


def _fold_of(item_id: str, folds: int) -> int:
    digits = "".join(ch for ch in item_id if ch.isdigit())
    return int(digits) % folds if digits else 0


def fold_table(
    items: list[dict[str, Any]], preds: dict[str, list[Any]], folds: int, classes: tuple[str, ...] = CLASSES
) -> str:
    """Precision/recall per class in each of ``folds`` folds (item number modulo ``folds``): how stable a
    score is across disjoint slices of the labels, which a single held-out half cannot show."""
    head = f"{'class':<16}" + "".join(f"{'fold ' + str(k):>12}" for k in range(folds))
    lines = [head + f"{'spread(F1)':>12}"]
    per_fold = []
    for k in range(folds):
        sel = [it for it in items if _fold_of(it["id"], folds) == k]
        gold = {it["id"]: set(it["labels"]) for it in sel}
        pred = {it["id"]: predicted_classes(e.kind for e in preds[it["id"]]) for it in sel}
        per_fold.append(score(gold, pred))
    for cls in classes:
        rows = [r[cls] for r in per_fold]
        cells = [
            f"{x['precision']:.2f}/{x['recall']:.2f}" if x["tp"] + x["fp"] + x["fn"] else "-" for x in rows
        ]
        f1s = [x["f1"] for x in rows if x["tp"] + x["fp"] + x["fn"]] or [0.0]
        lines.append(f"{cls:<16}" + "".join(f"{c:>12}" for c in cells) + f"{max(f1s) - min(f1s):>12.2f}")
    return "\n".join(lines)


DEFAULT_SETS = (
    (DEFAULT_LABELS, DEFAULT_CORPUS),
    (ROOT.parent / "shared" / "eval" / "extract-dev2.jsonl", ROOT.parent / "shared" / "corpus-2"),
)


def _parse_set(spec: str) -> tuple[Path, Path]:
    labels, _, corpus = spec.partition("=")
    if not corpus:
        raise argparse.ArgumentTypeError(f"--set wants LABELS=CORPUS, got {spec!r}")
    return Path(labels), Path(corpus)


def source_of(corpus: Path, rel: str, prov: dict[str, str]) -> str:
    """The repository a transcript came from (PROVENANCE.tsv), else its project directory."""
    if rel in prov:
        return prov[rel]
    parts = Path(rel).parts
    return parts[1] if len(parts) > 2 and parts[0] == "projects" else str(corpus.name)


def load_sets(
    sets: list[tuple[Path, Path]], context: str = "index"
) -> tuple[list[dict[str, Any]], dict[str, Utterance]]:
    """Label items of every set (``id`` made unique, ``source`` and ``set`` added) and their utterances."""
    items: list[dict[str, Any]] = []
    utts: dict[str, Utterance] = {}
    for labels, corpus in sets:
        rows = [json.loads(line) for line in labels.open() if line.strip()]
        prov_path = corpus / "PROVENANCE.tsv"
        prov = read_provenance(prov_path) if prov_path.is_file() else {}
        cache: dict[str, Any] = {}
        by_uuid = index_utterances(rows, corpus) if context == "index" else {}
        for it in rows:
            it = dict(it, set=labels.stem, source=source_of(corpus, it["file"], prov))
            utts[it["id"]] = by_uuid.get(it["uuid"]) or build_utterance(it, corpus, cache)
            items.append(it)
    return items, utts


def _report(name: str, sel: list[dict[str, Any]], pred: dict[str, set[str]], as_json: bool) -> dict[str, Any]:
    gold = {it["id"]: set(it["labels"]) for it in sel}
    pooled = score(gold, {k: pred[k] for k in gold})
    per_source = score_by_source(sel, pred, {it["id"]: it["source"] for it in sel})
    avg = macro(per_source)
    if not as_json:
        print(f"\n== {name}: {len(sel)} items, {len(per_source)} sources — pooled")
        print(format_table(pooled))
        print(f"\n== {name}: macro over sources (classes with >= {MACRO_MIN_SUPPORT} positives in a source)")
        print(format_macro(avg))
    return {"pooled": pooled, "macro": avg, "per_source": per_source}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--set",
        dest="sets",
        type=_parse_set,
        action="append",
        metavar="LABELS=CORPUS",
        help="a label file and the corpus it refers to (repeatable; default: extract-dev and extract-dev2)",
    )
    ap.add_argument("--labels", type=Path, help="one label file (with --corpus) instead of --set")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split", choices=("odd", "even", "all", "both"), default="all")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--folds", type=int, default=0, metavar="K", help="also print P/R per class in K folds")
    ap.add_argument("--sources", action="store_true", help="print the per-source table")
    ap.add_argument(
        "--context",
        choices=("chain", "index"),
        default="index",
        help="index: utterances as the indexer builds them (default); chain: walk parentUuid from each item",
    )
    ap.add_argument("--show", metavar="CLASS", help="print false positives/negatives for a class")
    ap.add_argument("--only", metavar="SOURCE", help="with --show: only items of this source (substring)")
    ap.add_argument(
        "--speed", action="store_true", help="time extract() on the dev items and the whole corpus"
    )
    args = ap.parse_args(argv)
    sets = args.sets or ([(args.labels, args.corpus)] if args.labels else list(DEFAULT_SETS))
    items, utts = load_sets(sets, args.context)
    preds = {it["id"]: extract(utts[it["id"]]) for it in items}
    pred_cls = {k: predicted_classes(e.kind for e in v) for k, v in preds.items()}

    report: dict[str, Any] = {}
    splits = ("odd", "even") if args.split == "both" else (args.split,)
    for split in splits:
        sel = [it for it in items if _in_split(it["id"], split)]
        names = sorted({it["set"] for it in sel})
        report[split] = _report(f"{split} / all sets", sel, pred_cls, args.json)
        if len(names) > 1:
            for name in names:
                report[f"{split}/{name}"] = _report(
                    f"{split} / {name}", [it for it in sel if it["set"] == name], pred_cls, args.json
                )
        if args.sources and not args.json:
            print(f"\n== {split}: per source (P/R (positives))")
            print(format_sources(report[split]["per_source"], CLASSES))
    if args.folds > 1:
        report["folds"] = {"k": args.folds, "table": fold_table(items, preds, args.folds)}
        if not args.json:
            print(f"\n== {args.folds} folds (P/R; fold = item number mod {args.folds})")
            print(report["folds"]["table"])
    if args.show:
        cls = args.show
        for it in items:
            if args.only and args.only.lower() not in it["source"].lower():
                continue
            got = pred_cls[it["id"]]
            want = cls in it["labels"]
            if want != (cls in got):
                u = utts[it["id"]]
                conf = max((e.score for e in preds[it["id"]]), default=0.0)
                print(
                    f"--- {'FN' if want else 'FP'} {it['id']} {it['role']} {it['source']} labels={it['labels']} "
                    f"got={sorted(got)} conf={conf:.2f}"
                )
                if u.prev_assistant_text:
                    print("    prev_asst:", u.prev_assistant_text[:200].replace("\n", " "))
                print("    text:", it["text"][:400].replace("\n", " "))
    if args.speed:
        first_corpus = sets[0][1]
        report["speed"] = speed(list(utts.values()), first_corpus)
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
