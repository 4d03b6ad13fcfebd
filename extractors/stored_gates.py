"""The cues' gates, derived once and stored (`gates.json`), so that loading the extractors does not
derive them again.

`gate.gate_of` walks the standard library's parse of a cue's regex: ≈ 0.05 CPU-s for the ≈ 260 derived
gates at every start of a process that loads the extractors, half of their import. An index run's writer
loads them alone before its parsers fork, so that time is its serial start. A gate depends only on
the pattern (and on gate.py), so it is stored beside the cues, under the pattern; a cue whose pattern
is not stored (new or changed since the file was written) is derived at import as before: a stale file
costs time, never a wrong gate. `tests/test_stored_gates.py` checks every stored gate against its
derivation and that every cue's is stored; after a cue or gate.py changes, `python -m
extractors.stored_gates` writes the file again.
"""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path

import orjson

from extractors.gate import Gates, gate_of

PATH = Path(__file__).with_name("gates.json")

# The patterns this process asked a derived gate for (what the file should hold).
asked: set[str] = set()


def parse_gates(spec: str) -> Gates:
    """Gates written out: ``|`` between alternatives, ``&`` between the parts that must all hold, spaces
    between a part's words (a cue's hand-written `need` and the stored gates)."""
    return tuple(tuple(frozenset(part.split()) for part in alt.split("&")) for alt in spec.split("|"))


def spell(gates: Gates) -> str:
    """`parse_gates`' inverse (a part's words sorted)."""
    return "|".join("&".join(" ".join(sorted(part)) for part in conj) for conj in gates)


def derived_gate(rx: re.Pattern[str]) -> Gates | None:
    """`gate_of(rx)`: stored when the file holds `rx`'s pattern (the cues' regexes are compiled ASCII,
    as the file's gates were derived), else derived."""
    if rx.flags != re.ASCII:
        return gate_of(rx)
    asked.add(rx.pattern)
    stored = _stored()
    if rx.pattern not in stored:
        return gate_of(rx)
    spec = stored[rx.pattern]
    return None if spec is None else parse_gates(spec)


@functools.cache
def _stored() -> dict[str, str | None]:
    stored: dict[str, str | None] = orjson.loads(PATH.read_bytes())
    return stored


def derive_all() -> dict[str, str | None]:
    """Every extractor module loaded, the gate of each pattern its cues asked for, derived now."""
    import pkgutil  # (here: only writing the file or testing it walks the package)

    import extractors

    for mod in pkgutil.iter_modules(extractors.__path__):
        importlib.import_module(f"extractors.{mod.name}")
    out: dict[str, str | None] = {}
    for pattern in sorted(asked):
        gates = gate_of(re.compile(pattern, re.ASCII))
        out[pattern] = None if gates is None else spell(gates)
    return out


def main() -> None:
    """Write `gates.json` again from the cues as they are now."""
    PATH.write_bytes(orjson.dumps(derive_all(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")


if __name__ == "__main__":  # the cues record what they ask in the package's module, not in this __main__
    importlib.import_module("extractors.stored_gates").main()
