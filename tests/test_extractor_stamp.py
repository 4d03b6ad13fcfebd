"""An upgrade's extractors against the ones an index's extractions were made with: stamped by a run that
reads every transcript from its start, kept by incremental runs, reported by `status` and `doctor`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from fixtures import make

import extractors.version
from extractors.version import extractors_version, fingerprint
from index.store import extractors_state, open_reader, run_index
from lib import sqlite


def _age(db: Path) -> None:
    """As if an earlier version's extractors had made the index."""
    conn = sqlite.connect(str(db))
    conn.execute("UPDATE schema_meta SET value = 'earlier00000' WHERE key = 'extractors_version'")
    conn.commit()
    conn.close()


def _state(db: Path) -> dict[str, object]:
    return extractors_state(open_reader(db))


def _indexed(tmp_path: Path) -> tuple[Path, Path]:
    """A new index of one small transcript: (the index, the project folder)."""
    root = tmp_path / "projects" / make.slug(make.CWD)
    root.mkdir(parents=True)
    make.quirk_compaction(root)
    db = tmp_path / "index.db"
    run_index(db, [tmp_path / "projects"])
    return db, root


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", "--db", str(db), *args], capture_output=True, text=True
    )


def test_a_new_index_is_stamped_and_an_incremental_run_keeps_an_older_stamp(tmp_path: Path) -> None:
    db, root = _indexed(tmp_path)
    assert _state(db) == {"current": extractors_version(), "index": extractors_version(), "up_to_date": True}

    _age(db)
    make.quirk_fork(root)  # new bytes: extracted by this version, the older extractions stay as they were
    assert run_index(db, [tmp_path / "projects"]).messages_added > 0
    assert _state(db)["index"] == "earlier00000" and _state(db)["up_to_date"] is False

    run_index(db, [tmp_path / "projects"], full=True)  # every transcript read again
    assert _state(db)["up_to_date"] is True


def test_status_and_doctor_say_how_to_re_extract(tmp_path: Path) -> None:
    db, _ = _indexed(tmp_path)
    status = json.loads(_cli(db, "status", "--json").stdout)
    assert status["extractors"]["up_to_date"] is True
    doctor = json.loads(_cli(db, "doctor", "--json").stdout)
    (check,) = [c for c in doctor["checks"] if c["check"] == "extractors"]
    assert check["status"] == "ok" and check["fix"] == ""

    _age(db)
    line = next(ln for ln in _cli(db, "status").stdout.splitlines() if ln.startswith("extractors"))
    assert "earlier00000" in line and "index --full" in line
    doctor = json.loads(_cli(db, "doctor", "--json").stdout)
    (check,) = [c for c in doctor["checks"] if c["check"] == "extractors"]
    assert check["status"] == "warn" and "earlier00000" in check["detail"]
    assert "total-recall index --full" in check["fix"]
    assert check["ok"] is True  # a warning, not a failure: the index still answers


def test_the_fingerprint_covers_the_code_and_the_confidence_model(tmp_path: Path) -> None:
    """Refitting the weights changes what is extracted as much as a new cue does."""
    here = Path(extractors.version.__file__).parent
    copy = tmp_path / "extractors"
    shutil.copytree(here, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert fingerprint(copy) == extractors_version()
    weights = copy / "confidence.json"
    weights.write_text(weights.read_text() + "\n")
    refitted = fingerprint(copy)
    assert refitted != extractors_version()
    (copy / "goals.py").write_text((copy / "goals.py").read_text() + "\n# a new cue\n")
    assert fingerprint(copy) not in (refitted, extractors_version())
