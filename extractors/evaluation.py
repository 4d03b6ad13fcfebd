"""Per-class precision / recall / F1 of extractions against labelled records (X21).

Pure functions: the caller loads the labels and the predictions (from the index or by running the
pipeline) and passes plain mappings keyed by record uuid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Label class -> extraction kinds that count as predicting it (eval README).
CLASS_KINDS: dict[str, tuple[str, ...]] = {
    "correction": ("correction", "model_correction"),
    "rule": ("ban", "standing_decision", "standing_order"),
    "decision": ("decision", "standing_decision"),
    "goal": ("goal",),
    "preference": ("domain_fact", "implicit_preference"),
    "failed_attempt": ("failed_attempt",),
    "self_correction": ("self_correction",),
    "progress": ("progress", "goal_progress"),
}
CLASSES: tuple[str, ...] = tuple(CLASS_KINDS)
# The classes with a design target (design.md section 7).
TARGET_CLASSES: tuple[str, ...] = ("correction", "rule", "decision", "goal")

_KIND_CLASSES: dict[str, tuple[str, ...]] = {}
for _cls, _kinds in CLASS_KINDS.items():
    for _kind in _kinds:
        _KIND_CLASSES[_kind] = (*_KIND_CLASSES.get(_kind, ()), _cls)


def predicted_classes(kinds: Iterable[str]) -> set[str]:
    """Map extraction kinds found for one record onto the label classes they count for."""
    out: set[str] = set()
    for kind in kinds:
        out.update(_KIND_CLASSES.get(kind, ()))
    return out


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def score(
    gold: Mapping[str, Iterable[str]],
    predicted: Mapping[str, Iterable[str]],
    classes: Iterable[str] = CLASSES,
) -> dict[str, dict[str, Any]]:
    """Per-class precision, recall and F1.

    ``gold`` maps each labelled record to its label classes (``"none"`` or empty for none);
    ``predicted`` maps records to predicted *classes* (use :func:`predicted_classes` to convert
    kinds). Only records in ``gold`` are counted: predictions on unlabelled records are ignored.
    Returns ``{class: {precision, recall, f1, tp, fp, fn, support}}`` plus a ``"micro"`` row over
    the listed classes.
    """
    cls_list = list(classes)
    counts = {c: [0, 0, 0] for c in cls_list}  # tp, fp, fn
    for key, labels in gold.items():
        want = set(labels)
        got = set(predicted.get(key, ()))
        for c in cls_list:
            w, g = c in want, c in got
            if w and g:
                counts[c][0] += 1
            elif g:
                counts[c][1] += 1
            elif w:
                counts[c][2] += 1
    out: dict[str, dict[str, Any]] = {}
    tot = [0, 0, 0]
    for c in cls_list:
        tp, fp, fn = counts[c]
        tot = [tot[0] + tp, tot[1] + fp, tot[2] + fn]
        out[c] = _row(tp, fp, fn)
    out["micro"] = _row(*tot)
    return out


def _row(tp: int, fp: int, fn: int) -> dict[str, Any]:
    p = _ratio(tp, tp + fp)
    r = _ratio(tp, tp + fn)
    f = _ratio(2 * tp, 2 * tp + fp + fn)
    return {
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(f, 3),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "support": tp + fn,
    }


def score_labelled(
    items: Iterable[Mapping[str, Any]],
    kinds_by_uuid: Mapping[str, Iterable[str]],
    classes: Iterable[str] = CLASSES,
) -> dict[str, dict[str, Any]]:
    """Score extraction kinds found per record against label items (``{"uuid", "labels"}`` dicts, as
    in ``extract-dev.jsonl``). This is what ``total-recall eval extractors`` reports."""
    gold: dict[str, list[str]] = {}
    for item in items:
        gold[str(item["uuid"])] = list(item.get("labels") or [])
    predicted = {uuid: predicted_classes(kinds_by_uuid.get(uuid, ())) for uuid in gold}
    return score(gold, predicted, classes)


def format_table(result: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table of a :func:`score` result."""
    lines = [f"{'class':<16}{'P':>7}{'R':>7}{'F1':>7}{'tp':>6}{'fp':>6}{'fn':>6}{'n':>6}"]
    for cls, row in result.items():
        lines.append(
            f"{cls:<16}{row['precision']:>7.2f}{row['recall']:>7.2f}{row['f1']:>7.2f}"
            f"{row['tp']:>6}{row['fp']:>6}{row['fn']:>6}{row['support']:>6}"
        )
    return "\n".join(lines)


# A class is averaged over the sources that have at least this many labelled positives: a source with
# one or two examples of a class gives a precision/recall of 0 or 1 and would swamp the average.
MACRO_MIN_SUPPORT = 3


def score_by_source(
    items: Iterable[Mapping[str, Any]],
    predicted: Mapping[str, Iterable[str]],
    source_of: Mapping[str, str],
    classes: Iterable[str] = CLASSES,
) -> dict[str, dict[str, dict[str, Any]]]:
    """:func:`score` per source. ``items`` are label dicts with ``id`` and ``labels``; ``predicted``
    and ``source_of`` are keyed by item id (predicted *classes*, the source's name)."""
    cls_list = list(classes)
    groups: dict[str, dict[str, list[str]]] = {}
    for item in items:
        key = str(item["id"])
        groups.setdefault(source_of.get(key, "?"), {})[key] = list(item.get("labels") or [])
    return {
        src: score(gold, {k: set(predicted.get(k, ())) for k in gold}, cls_list)
        for src, gold in sorted(groups.items())
    }


def macro(
    per_source: Mapping[str, Mapping[str, Mapping[str, Any]]],
    classes: Iterable[str] = CLASSES,
    min_support: int = MACRO_MIN_SUPPORT,
) -> dict[str, dict[str, Any]]:
    """Precision and recall per class averaged over sources (each source weighs the same), over the
    sources with at least ``min_support`` positives of that class; ``worst`` is the source with the
    lowest F1 among them."""
    out: dict[str, dict[str, Any]] = {}
    for cls in classes:
        rows = [(src, r[cls]) for src, r in per_source.items() if r[cls]["support"] >= min_support]
        if not rows:
            out[cls] = {"precision": 0.0, "recall": 0.0, "f1": 0.0, "sources": 0, "worst": None}
            continue
        p = sum(r["precision"] for _, r in rows) / len(rows)
        rc = sum(r["recall"] for _, r in rows) / len(rows)
        worst = min(rows, key=lambda sr: sr[1]["f1"])
        out[cls] = {
            "precision": round(p, 3),
            "recall": round(rc, 3),
            "f1": round(_ratio(2 * p * rc, p + rc), 3),
            "sources": len(rows),
            "worst": worst[0],
        }
    return out


def format_sources(
    per_source: Mapping[str, Mapping[str, Mapping[str, Any]]],
    classes: Iterable[str] = TARGET_CLASSES,
) -> str:
    """One row per source: ``P/R (n)`` for each class (``-`` where the source has none of it)."""
    cls_list = list(classes)
    lines = [f"{'source':<42}" + "".join(f"{c:>20}" for c in cls_list)]
    for src, res in per_source.items():
        cells = []
        for c in cls_list:
            r = res[c]
            cells.append(
                f"{r['precision']:.2f}/{r['recall']:.2f} ({r['support']})"
                if r["tp"] + r["fp"] + r["fn"]
                else "-"
            )
        lines.append(f"{src[:41]:<42}" + "".join(f"{x:>20}" for x in cells))
    return "\n".join(lines)


def format_macro(result: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table of a :func:`macro` result."""
    lines = [f"{'class':<16}{'P':>7}{'R':>7}{'F1':>7}{'sources':>9}  worst source"]
    for cls, row in result.items():
        lines.append(
            f"{cls:<16}{row['precision']:>7.2f}{row['recall']:>7.2f}{row['f1']:>7.2f}{row['sources']:>9}  "
            f"{row['worst'] or '-'}"
        )
    return "\n".join(lines)


def read_provenance(path: Any) -> dict[str, str]:
    """``PROVENANCE.tsv`` beside a corpus: transcript path (relative to the corpus) -> repository."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        head = fh.readline().rstrip("\n").split("\t")
        if "path" not in head or "repo" not in head:
            return out
        ip, ir = head.index("path"), head.index("repo")
        for line in fh:
            cols = line.rstrip("\n").split("\t")
            if len(cols) > max(ip, ir):
                out[cols[ip]] = cols[ir]
    return out
