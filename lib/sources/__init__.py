"""One interface for every coding agent's transcripts (S7): discovery and a reader per agent.

A `Source` finds its session files under its roots (`discover`, giving `Found` rows like Claude
Code's) and turns a file into a `FileChunk` of the walker's typed rows (`parse(path, start, carry,
info)`). Append-only JSONL sources (Claude Code, Codex, Copilot CLI) read from a byte cursor; one
JSON document per session (Gemini CLI, OpenCode export) is re-read whole when it changes
(`whole_file`). Claude Code is the reference: the others build their rows through its record
handler (`lib.sources.emit`). Every row carries its `agent`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lib.discovery import Found, discover, path_key
from lib.model import Carry, FileChunk, FileInfo
from lib.sources import codex, copilot, gemini, opencode, opencode_storage
from lib.sources.homes import AGENTS, OTHER_AGENTS, agent_roots, disabled, enabled_roots, set_enabled
from lib.walker import parse_file

__all__ = [
    "AGENTS",
    "OTHER_AGENTS",
    "SOURCES",
    "Source",
    "agent_roots",
    "disabled",
    "enabled_roots",
    "parse",
    "set_enabled",
]

Parser = Callable[[str, int, Carry, FileInfo], FileChunk]
MAX_DEPTH = 6  # codex: sessions/YYYY/MM/DD; gemini: tmp/<hash>/chats; copilot: session-state/<id>


@dataclass(frozen=True, slots=True)
class Source:
    name: str
    label: str
    parser: Parser
    whole_file: bool
    suffixes: tuple[str, ...]
    in_chats: bool = False  # Gemini: only files in a `chats/` folder (or directly in a given root)

    def discover(self, roots: list[Path]) -> Iterator[Found]:
        if self.name == "claude":
            yield from discover(roots)
            return
        for root in roots:
            if self.name == "opencode" and opencode_storage.is_storage(root):
                yield from opencode_storage.discover(root, FileInfo("main", "", agent=self.name, whole=True))
            else:
                yield from self._walk(path_key(root), str(root), 0)

    def _walk(self, root: str, d: str, depth: int) -> Iterator[Found]:
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            try:
                is_file = e.is_file(follow_symlinks=False)
                is_dir = not is_file and e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and depth < MAX_DEPTH:
                yield from self._walk(root, e.path, depth + 1)
            elif is_file and self._wanted(e.name, os.path.basename(d), depth):
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                stem = e.name.rsplit(".", 1)[0]
                info = FileInfo("main", path_key(stem), None, agent=self.name, whole=self.whole_file)
                yield Found(path_key(e.path), root, path_key(d), info, st.st_size, st.st_mtime_ns, st.st_ino)

    def _wanted(self, name: str, folder: str, depth: int) -> bool:
        if not name.endswith(self.suffixes):
            return False
        return not self.in_chats or folder == "chats" or depth == 0


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("claude", "Claude Code", parse_file, False, (".jsonl",)),
        Source("codex", "Codex CLI", codex.parse, False, (".jsonl",)),
        Source("gemini", "Gemini CLI", gemini.parse, True, (".json", ".jsonl"), in_chats=True),
        Source("copilot", "Copilot CLI", copilot.parse, False, (".jsonl",)),
        Source("opencode", "OpenCode", opencode.parse, True, (".json", ".jsonl")),
    )
}


def parse(path: str, start: int, carry: Carry, info: FileInfo) -> FileChunk:
    """The file's rows from byte `start`, read by its agent's source."""
    return SOURCES[info.agent].parser(path, start, carry, info)
