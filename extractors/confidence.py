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


# A role's classes, their biases, and per feature name the (class index, weight) pairs of the classes that
# weigh it; keyed by the identity of the role's dict of models (`models()` makes each once; nothing changes
# one after), which the entry keeps alive so that no other dict takes its id meanwhile.
_Merged = tuple[tuple[str, ...], tuple[float, ...], dict[str, tuple[tuple[int, float], ...]]]
_MERGED: dict[int, tuple[dict[str, ClassModel], _Merged]] = {}


def _merged(role_models: dict[str, ClassModel]) -> _Merged:
    hit = _MERGED.get(id(role_models))
    if hit is not None and hit[0] is role_models:
        return hit[1]
    by_feature: dict[str, list[tuple[int, float]]] = {}
    for i, m in enumerate(role_models.values()):
        for name, w in m.weights.items():
            by_feature.setdefault(name, []).append((i, w))
    merged = (
        tuple(role_models),
        tuple(m.bias for m in role_models.values()),
        {name: tuple(pairs) for name, pairs in by_feature.items()},
    )
    if len(_MERGED) >= 16:
        _MERGED.clear()
    _MERGED[id(role_models)] = (role_models, merged)
    return merged


def probabilities(role_models: dict[str, ClassModel], features: dict[str, float]) -> dict[str, float]:
    """The probability of every class of a role: the logistic of the class's bias plus its weighted
    features, each class's terms added in the features' order. One pass over the features (an utterance is
    scored for most of its role's classes: one look-up per feature instead of one per class and feature);
    a feature of value 0, or one a class does not weigh, adds nothing: its term would be a zero, which
    leaves the sum as it is (the weights are finite, a test checks the shipped ones)."""
    names, biases, by_feature = _merged(role_models)
    z = list(biases)
    get = by_feature.get
    for name, x in features.items():
        if x:
            for i, w in get(name, ()):
                z[i] += w * x
    out: dict[str, float] = {}
    for cls, zi in zip(names, z, strict=True):
        # (the logistic written out: a call per class cost more than its two lines)
        if zi >= 0:
            out[cls] = 1.0 / (1.0 + math.exp(-zi))
        else:
            e = math.exp(zi)
            out[cls] = e / (1.0 + e)
    return out


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
