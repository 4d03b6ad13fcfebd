"""Find transcript files under projects roots and classify their layout (W8, W10)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lib.walker import FileInfo


@dataclass(slots=True)
class Found:
    path: str
    root: str
    project_dir: str  # the <slug> directory
    info: FileInfo
    size: int
    mtime_ns: int
    inode: int


def _classify(name: str, parent_session: str | None) -> FileInfo:
    stem = name[:-6]
    if stem.startswith("agent-"):
        aid = stem[len("agent-"):]
        if aid.startswith("acompact"):
            return FileInfo("compaction", stem, aid)
        return FileInfo("nested" if parent_session else "flat", stem, aid)
    return FileInfo("main", stem, None)


def discover(roots: list[Path]) -> Iterator[Found]:
    """Yield every `.jsonl` transcript in the three known layouts (plus workflow subfolders)."""
    for root in roots:
        try:
            slugs = list(os.scandir(root))
        except OSError:
            continue
        for slug in slugs:
            if not slug.is_dir(follow_symlinks=False):
                continue
            yield from _walk(str(root), slug.path, slug.path, None, depth=0)


def _walk(root: str, project_dir: str, d: str, parent_session: str | None, depth: int) -> Iterator[Found]:
    try:
        entries = list(os.scandir(d))
    except OSError:
        return
    for e in entries:
        if e.is_file(follow_symlinks=False) and e.name.endswith(".jsonl"):
            if e.name == "journal.jsonl":
                continue
            st = e.stat(follow_symlinks=False)
            yield Found(e.path, root, project_dir, _classify(e.name, parent_session), st.st_size,
                        st.st_mtime_ns, st.st_ino)
        elif e.is_dir(follow_symlinks=False) and depth < 4:
            session = parent_session or (e.name if depth == 0 else None)
            yield from _walk(root, project_dir, e.path, session, depth + 1)
