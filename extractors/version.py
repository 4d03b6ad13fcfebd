"""One fingerprint of what the extractors are (their code and the confidence model's weights).

An index records the fingerprint its extractions were made with, so that `status` and `doctor` can say
when an upgrade left them behind: an incremental run only extracts new bytes, and what was extracted
before stays as the older extractors saw it until `index --full` reads every transcript again.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_HERE = Path(__file__).parent


@functools.cache
def extractors_version() -> str:
    """This package's fingerprint (computed once per process)."""
    return fingerprint(_HERE)


def fingerprint(folder: Path) -> str:
    """12 hex digits over every module of an extractors folder and its `confidence.json`, in name order."""
    h = hashlib.sha256()
    for p in sorted([*folder.glob("*.py"), folder / "confidence.json"]):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]
