"""The vector layer's base error, in a module of its own: the CLI catches it around every command, and
importing `vec.store`, where its kinds are, loads the embedder's modules (≈ 5 ms more at each start)."""

from __future__ import annotations


class VecError(Exception):
    """A vector problem with a one-line fix."""

    fix = ""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.fix = fix or self.fix
