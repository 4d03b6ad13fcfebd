"""Held-out precision / recall of each extraction class as its confidence cut is raised (the P/R curve).

Usage::

    OMP_NUM_THREADS=1 .venv/bin/python bench/confidence_curve.py [--set LABELS=CORPUS ...] [--cuts 0.2,0.3,...]

For each source, the class models are fitted on the other sources (``bench/train_confidence.py``) and
that source's items are decided with every class cut set to each value of ``--cuts`` in turn (a pure
cut: the heuristics' veto fraction is lifted to the cut as well). Printed per class and cut: the macro
average over sources (both sets, ``extract-dev``, ``extract-dev2``), so a per-class cut can be raised
for precision only as far as the held-out recall target allows (``CLASS_CUT`` in train_confidence).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval_extractors_dev import DEFAULT_SETS, _parse_set, load_sets  # noqa: E402
from train_confidence import _copy, _parsed, train  # noqa: E402

from extractors.evaluation import macro, predicted_classes, score_by_source  # noqa: E402
from extractors.pipeline import Analysis, analyse, decide  # noqa: E402

CLASSES = ("correction", "decision", "goal", "preference", "failed_attempt")
CUTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def curve(
    items: list[dict[str, Any]], analyses: dict[str, Analysis], cuts: tuple[float, ...]
) -> dict[tuple[str, float], dict[str, set[str]]]:
    """``{(class, cut): {item id: predicted classes}}`` with models fitted without the item's source."""
    out: dict[tuple[str, float], dict[str, set[str]]] = {(c, t): {} for c in CLASSES for t in cuts}
    for src in sorted({it["source"] for it in items}):
        role_models = _parsed(train([it for it in items if it["source"] != src], analyses, inner=False))
        for it in (it for it in items if it["source"] == src):
            a = analyses.get(it["id"])
            for cls in CLASSES:
                for t in cuts:
                    if a is None:
                        out[cls, t][it["id"]] = set()
                        continue
                    models = dict(role_models.get(a.role, {}))
                    if cls in models:
                        models[cls] = replace(models[cls], emit=t, veto=t)
                    fresh = Analysis(a.role, [_copy(h) for h in a.hits], a.evidence, a.features)
                    out[cls, t][it["id"]] = predicted_classes(h.kind for h in decide(fresh, models))
        print(f"  held out {src}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="sets", type=_parse_set, action="append", metavar="LABELS=CORPUS")
    ap.add_argument("--cuts", default=",".join(str(c) for c in CUTS))
    args = ap.parse_args(argv)
    cuts = tuple(float(x) for x in args.cuts.split(","))
    items, utts = load_sets(args.sets or list(DEFAULT_SETS))
    analyses = {k: a for k, u in utts.items() if (a := analyse(u)) is not None}
    preds = curve(items, analyses, cuts)
    subsets = {"both": items}
    for name in sorted({it["set"] for it in items}):
        subsets[name] = [it for it in items if it["set"] == name]
    print("| class | cut | " + " | ".join(f"{n} P / R" for n in subsets) + " |")
    print("|---|---|" + "---|" * len(subsets))
    for cls in CLASSES:
        for t in cuts:
            cells = []
            for sel in subsets.values():
                per_source = score_by_source(sel, preds[cls, t], {it["id"]: it["source"] for it in sel})
                m = macro(per_source, (cls,))[cls]
                cells.append(f"{m['precision']:.2f} / {m['recall']:.2f}")
            print(f"| {cls} | {t:.2f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
