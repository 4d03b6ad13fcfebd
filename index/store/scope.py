"""The one scope resolver (I8): this_cwd → this_project → global, widening when a scope is empty."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from lib.project import project_key

SCOPES = ("this_cwd", "this_project", "global")


class BadScope(ValueError):
    pass


def stored_cwd(cwd: str | None) -> str | None:
    """A working directory as the index stores it: scrubbed like every stored string, so a cwd that
    holds a token matches its own rows (and is never shown back with the token)."""
    if not cwd:
        return cwd
    from extractors.scrubber import scrub_text  # the regexes load only when a cwd is given

    return scrub_text(cwd)


@dataclass(slots=True)
class Scope:
    name: str
    where: str  # SQL fragment over a table alias with `cwd` and `project_key` columns ("" = everything)
    args: list[object]


def scope_chain(scope: str, cwd: str | None, alias: str = "e") -> list[Scope]:
    """The requested scope followed by the wider ones to try when it finds nothing."""
    if scope not in SCOPES:
        raise BadScope(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    chain: list[Scope] = []
    cwd = stored_cwd(cwd)
    start = SCOPES.index(scope)
    for name in SCOPES[start:]:
        if name == "this_cwd":
            if cwd:
                chain.append(Scope(name, f"{alias}.cwd = ?", [cwd]))
        elif name == "this_project":
            key = project_key(cwd)
            if key:
                chain.append(Scope(name, f"{alias}.project_key = ?", [key]))
        else:
            chain.append(Scope(name, "", []))
    return chain


T = TypeVar("T")


def widen(
    scope: str, cwd: str | None, run: Callable[[Scope], Sequence[T]], alias: str = "e"
) -> tuple[list[T], str, str | None]:
    """Run `run` for the asked scope, then the wider ones, until it finds something.
    Returns (items, scope used, note saying it was widened or None)."""
    for sc in scope_chain(scope, cwd, alias):
        items = list(run(sc))
        if items or sc.name == "global":
            return items, sc.name, widen_note(scope, sc.name)
    return [], scope, None


def widen_note(asked: str, used: str) -> str | None:
    if asked == used:
        return None
    return f"nothing in scope {asked}; widened to {used}"
