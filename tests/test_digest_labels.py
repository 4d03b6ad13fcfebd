"""Labelled check of the digest's "request" and "next steps" (issue 14): 30 sessions (the 25 of
../shared/corpus-2 that hold a prompt, and 5 of the shared corpus) labelled by reading them, each
label a few keywords of our own (tests/data/digest_labels.jsonl; no transcript text). A request
agrees when its text holds every keyword; next steps agree when every keyword is in them, or, for a
session that ended with nothing open (no keywords), when there are none. Agreement is reported in
docs/eval.md; the floors below catch a regression. Skipped when a corpus is absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_dir

from index.retrieval import session_digest
from index.store.ingest import run_index
from lib import sqlite

LABELS = Path(__file__).parent / "data" / "digest_labels.jsonl"


def agreement(d: dict[str, Any], label: dict[str, Any]) -> tuple[bool, bool]:
    request = ((d.get("request") or {}).get("text") or "").lower()
    steps = " ".join(n["text"] for n in d["next_steps"]).lower()
    next_ok = all(k in steps for k in label["next"]) if label["next"] else not d["next_steps"]
    return all(k in request for k in label["request"]), next_ok


@pytest.fixture(scope="module")
def corpus2_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = corpus_dir().parent / "corpus-2" / "projects"
    if not root.is_dir():
        pytest.skip(f"corpus-2 not found at {root}")
    db = tmp_path_factory.mktemp("corpus2") / "index.db"
    assert run_index(db, [root], jobs=2).errors == []
    return db


def test_labels_are_thirty_short_keyword_sets() -> None:
    labels = [json.loads(line) for line in LABELS.read_text().splitlines()]
    assert len(labels) == 30 and len({lab["session"] for lab in labels}) == 30
    assert sum(lab["corpus"] == "corpus-2" for lab in labels) == 25
    for lab in labels:
        assert all(len(k) <= 30 for k in lab["request"] + lab["next"]), "labels are keywords, not quotes"


def test_request_and_next_steps_agree_with_labels(corpus_db: Path, corpus2_db: Path) -> None:
    dbs = {"corpus": sqlite.connect(corpus_db), "corpus-2": sqlite.connect(corpus2_db)}
    results = []
    for line in LABELS.read_text().splitlines():
        label = json.loads(line)
        d = session_digest(dbs[label["corpus"]], label["session"])
        assert d is not None, label["session"]
        results.append(agreement(d, label))
    request = sum(r for r, _ in results) / len(results)
    next_steps = sum(n for _, n in results) / len(results)
    assert request >= 0.9, request  # 29/30 when measured (docs/eval.md)
    assert next_steps >= 0.4, next_steps  # 15/30 when measured


def test_agreement_rule() -> None:
    d: dict[str, Any] = {"request": {"text": "Fix the Staging logs"}, "next_steps": []}
    assert agreement(d, {"request": ["staging logs"], "next": []}) == (True, True)
    assert agreement(d, {"request": ["grafana"], "next": ["push"]}) == (False, False)
    d["next_steps"] = [{"text": "Want me to push?"}]
    assert agreement(d, {"request": [], "next": []}) == (True, False)
    assert agreement(d, {"request": [], "next": ["push"]}) == (True, True)
