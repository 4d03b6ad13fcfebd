"""Calibrated confidence of an extraction: a small logistic model over the heuristics' features.

``confidence.json`` (beside this module) is written by ``bench/train_confidence.py`` from the labelled
dev sets, with folds split by source (repository), so its probabilities are checked on teams the
weights were not fitted to. Per role and label class it holds a bias, sparse weights over
:mod:`extractors.features`, an ``emit`` threshold (the index keeps an extraction at or above it) and a
``bundle`` threshold (what SessionStart and per-prompt recall inject: chosen for >= 0.85 precision on
held-out sources). Runtime is pure Python: one dot product over a dict of a few dozen features.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

MODEL_PATH = Path(__file__).with_name("confidence.json")
# Kinds scored by a class model: extraction kind -> label class (eval README mapping).
KIND_CLASS: dict[str, str] = {
    "correction": "correction",
    "model_correction": "correction",
    "ban": "rule",
    "standing_decision": "rule",
    "standing_order": "rule",
    "decision": "decision",
    "goal": "goal",
    "implicit_preference": "preference",
    "domain_fact": "preference",
    "failed_attempt": "failed_attempt",
    "self_correction": "self_correction",
    "progress": "progress",
}
# Used for kinds the model does not score (truth rhetoric, goal progress, summaries): never injected.
UNSCORED_BUNDLE = 1.01


@dataclass(frozen=True, slots=True)
class ClassModel:
    bias: float
    weights: dict[str, float]
    emit: float
    bundle: float
    veto: float = 0.0  # a candidate the heuristics accept is kept at or above this probability

    def probability(self, features: dict[str, float]) -> float:
        """The logistic of the bias plus the weighted features, summed in the features' order. A feature
        of value 0 is skipped: its term is a zero, which leaves the sum as it is (the weights are finite,
        a test checks the shipped ones), and two in three features of a candidate are 0."""
        z = self.bias
        w = self.weights
        for name, x in features.items():
            if x:
                z += w.get(name, 0.0) * x
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)


@cache
def models() -> dict[str, dict[str, ClassModel]]:
    """``{role: {class: ClassModel}}`` from the shipped JSON file."""
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    return parse(data)


def parse(data: dict[str, Any]) -> dict[str, dict[str, ClassModel]]:
    out: dict[str, dict[str, ClassModel]] = {}
    for role, classes in (data.get("models") or {}).items():
        out[role] = {
            cls: ClassModel(
                float(m["bias"]),
                {k: float(x) for k, x in m["weights"].items()},
                float(m["emit"]),
                float(m["bundle"]),
                float(m.get("veto", m["emit"])),
            )
            for cls, m in classes.items()
        }
    return out


def bundle_threshold(kind: str, role: str = "user") -> float:
    """The least confidence at which an extraction of ``kind`` may be injected into a session."""
    cls = KIND_CLASS.get(kind)
    m = models().get(role, {}).get(cls or "")
    if m is None and role == "user":
        m = models().get("assistant", {}).get(cls or "")
    # (Capped at 1.0: a memory the operator promoted by hand carries confidence 1.0 and is always shown.)
    return min(m.bundle, 1.0) if m is not None else UNSCORED_BUNDLE
