"""Find transcript files under projects roots and classify their layout (W8, W10).

Paths become index keys here, so they are made canonical first (`canonical_roots`: absolute,
symlinks resolved, each root once) and stored losslessly (`path_key`): a file name with bytes that
are not UTF-8 is indexed like any other, and `key_path` gives the exact path back to open it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lib.model import FileInfo

# A key that is not the path itself starts with this: no absolute path does (POSIX paths start
# with "/", Windows ones with a drive or "\\"), so the mapping stays one-to-one.
_BYTES = "fsbytes:"
_UNESCAPE = re.compile(rb"\\(\\|x([0-9a-f]{2}))")


@dataclass(slots=True)
class Found:
    path: str  # the index key of the file (`path_key`); open it through `key_path`
    root: str
    project_dir: str  # the <slug> directory
    info: FileInfo
    size: int
    mtime_ns: int
    inode: int


def path_key(path: str | os.PathLike[str]) -> str:
    """The text under which a path is stored: the path itself when it is valid Unicode (always, in
    practice); otherwise `fsbytes:` and the path's bytes, those that are not UTF-8 as `\\xNN` and
    backslashes doubled. SQLite text must be UTF-8, and a surrogate-escaped name is not."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    raw = os.fsencode(text).decode("utf-8", "surrogateescape")
    return _BYTES + "".join(
        f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else ("\\\\" if c == "\\" else c)
        for c in raw
    )


def key_path(key: str) -> str:
    """The file-system path of a stored key (the inverse of `path_key`)."""
    if not key.startswith(_BYTES):
        return key
    raw = _UNESCAPE.sub(
        lambda m: b"\\" if m.group(2) is None else bytes([int(m.group(2), 16)]),
        key[len(_BYTES) :].encode("utf-8"),
    )
    return os.fsdecode(raw)


def file_key(path: str | os.PathLike[str]) -> str:
    """The key under which the index stores the file at `path` (e.g. a hook's transcript_path):
    discovery reaches files through canonical roots, so symlinks are resolved first."""
    return path_key(os.path.realpath(path))


def canonical_roots(roots: Iterable[Path]) -> list[Path]:
    """Absolute, symlink-free roots, each once: `projects`, `./projects` and a symlink to it are one
    root, so their files get one key each and are indexed once."""
    out: list[Path] = []
    for r in roots:
        p = Path(os.path.realpath(os.path.expanduser(r)))
        if p not in out:
            out.append(p)
    return out


def _classify(name: str, parent_session: str | None) -> FileInfo:
    stem = name[:-6]
    if stem.startswith("agent-"):
        aid = stem[len("agent-") :]
        if aid.startswith("acompact"):
            return FileInfo("compaction", stem, aid)
        return FileInfo("nested" if parent_session else "flat", stem, aid)
    return FileInfo("main", stem, None)


def discover(roots: list[Path]) -> Iterator[Found]:
    """Yield every `.jsonl` transcript in the three known layouts (plus workflow subfolders).

    Symlinked folders and files below a root are not followed (no loops, no file reached twice);
    give the roots through `canonical_roots` for canonical keys."""
    for root in roots:
        try:
            slugs = list(os.scandir(root))
        except OSError:
            continue
        for slug in slugs:
            if not _is_dir(slug):
                continue
            yield from _walk(path_key(root), slug.path, slug.path, None, depth=0)


def _is_dir(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _walk(root: str, project_dir: str, d: str, parent_session: str | None, depth: int) -> Iterator[Found]:
    try:
        entries = list(os.scandir(d))
    except OSError:  # unreadable folder: skipped, the rest is indexed
        return
    for e in entries:
        try:
            is_file = e.is_file(follow_symlinks=False)
        except OSError:
            continue
        if is_file and e.name.endswith(".jsonl"):
            if e.name == "journal.jsonl":
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:  # vanished between listing and stat
                continue
            # the name becomes a session or agent id (the file's own session): stored text too
            yield Found(
                path_key(e.path),
                root,
                path_key(project_dir),
                _classify(path_key(e.name), parent_session),
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            )
        elif not is_file and depth < 4 and _is_dir(e):
            session = parent_session or (path_key(e.name) if depth == 0 else None)
            yield from _walk(root, project_dir, e.path, session, depth + 1)
