"""The import-layer contract (issue 12): imports point down the layers docs/architecture.md lists.

Every `import` in the project's packages is read with `ast` (function-level and TYPE_CHECKING imports
included: a lazy import is still a dependency). A module may import its own package and the layers
below its own; packages sharing a layer are independent (`|`) or may call each other (`+`, the
delivery layer). No package's modules may import each other in a cycle.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Top to bottom. (packages, may the packages of this layer import each other?)
LAYERS: list[tuple[tuple[str, ...], bool]] = [
    (("total_recall", "hooks", "mcp_server"), True),
    (("vec",), False),
    (("index",), False),
    (("extractors", "detector"), False),
    (("lib",), False),
]
PACKAGES = {p for layer, _ in LAYERS for p in layer}


def _imports(path: Path) -> set[str]:
    """Absolute module names imported anywhere in the file, restricted to the project's packages."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)  # `from index import recall`
    return {m for m in out if m.split(".")[0] in PACKAGES}


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the project's packages."""
    mods = {}
    for pkg in PACKAGES:
        for f in (REPO / pkg).rglob("*.py"):
            parts = f.relative_to(REPO).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return mods


def _graph() -> dict[str, set[str]]:
    """Module -> project modules it imports (names that are not modules, e.g. functions, dropped)."""
    mods = _modules()
    return {m: {i for i in _imports(f) if i in mods and i != m} for m, f in mods.items()}


def layer_violations(graph: dict[str, set[str]], layers: list[tuple[tuple[str, ...], bool]]) -> list[str]:
    """`a -> b` for every import that points up, or across independent packages of one layer."""
    where = {p: (i, open_) for i, (pkgs, open_) in enumerate(layers) for p in pkgs}
    bad = []
    for mod, deps in graph.items():
        src = mod.split(".")[0]
        level, open_ = where[src]
        for dep in deps:
            dst = dep.split(".")[0]
            dst_level = where[dst][0]
            if dst_level < level or (dst_level == level and dst != src and not open_):
                bad.append(f"{mod} -> {dep}")
    return sorted(bad)


def cycles(graph: dict[str, set[str]], package: str) -> list[list[str]]:
    """Import cycles among one package's modules (each reported once, from its smallest module)."""
    inner = {
        m: {d for d in deps if d.split(".")[0] == package}
        for m, deps in graph.items()
        if m.split(".")[0] == package
    }
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in inner.get(node, ()):
            if nxt == start:
                found.add(tuple(path))
            elif nxt not in path and nxt > start:
                walk(start, nxt, [*path, nxt])

    for m in sorted(inner):
        walk(m, m, [m])
    return [list(c) for c in sorted(found)]


# --- the checks themselves fail on the faults they are meant to catch ---------------------------------


def test_the_checks_catch_upward_across_and_cyclic_imports() -> None:
    graph = {
        "index.search": {"vec.hybrid"},
        "vec.hybrid": {"index.search"},
        "lib.walker": {"extractors.gate"},
        "extractors.gate": {"detector.policy"},
        "hooks.prompt": {"hooks.handlers", "total_recall.cli"},
        "hooks.handlers": {"hooks.prompt"},
        "total_recall.cli": {"hooks.prompt"},
        "detector.policy": set(),
    }
    assert layer_violations(graph, LAYERS) == [
        "extractors.gate -> detector.policy",
        "index.search -> vec.hybrid",
        "lib.walker -> extractors.gate",
    ]
    assert cycles(graph, "hooks") == [["hooks.handlers", "hooks.prompt"]]
    assert cycles(graph, "vec") == []


def test_import_scanner_sees_lazy_and_from_package_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("import os\nfrom index import recall\n\ndef g():\n    from vec.hybrid import fuse\n")
    assert _imports(f) == {"index", "index.recall", "vec.hybrid", "vec.hybrid.fuse"}


# --- the contract on the code -----------------------------------------------------------------------


def test_every_package_is_in_a_layer() -> None:
    top = {p.parent.name for p in REPO.glob("*/__init__.py")}
    assert top - {"tests", "bench"} == PACKAGES


def test_imports_point_down_the_layers() -> None:
    assert layer_violations(_graph(), LAYERS) == []


def test_index_does_not_import_vectors_or_delivery() -> None:
    graph = _graph()
    up = {"vec", "hooks", "mcp_server", "total_recall"}
    assert (
        sorted(
            f"{m} -> {d}"
            for m, deps in graph.items()
            if m.startswith("index")
            for d in deps
            if d.split(".")[0] in up
        )
        == []
    )


# Cycles that exist today, each named; strict: the test fails once the cycle is gone, so the mark goes too.
KNOWN_CYCLES = {}


@pytest.mark.parametrize(
    "package",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_CYCLES[p]))
        if p in KNOWN_CYCLES
        else p
        for p in sorted(PACKAGES)
    ],
)
def test_no_import_cycles_within_a_package(package: str) -> None:
    assert cycles(_graph(), package) == []


# --- index/ sub-packages (issue 12): store < stats < retrieval < briefing, llm on store --------------

# sub-package -> the other index sub-packages it may import (bottom first).
INDEX_PACKAGES: dict[str, set[str]] = {
    "store": set(),
    "stats": {"store"},
    "retrieval": {"store", "stats"},
    "briefing": {"store", "stats", "retrieval"},
    "llm": {"store"},
}
CLIENTS = ("total_recall", "hooks", "mcp_server", "vec")  # import index only through the package APIs
# Deep imports a client keeps, each with its reason (client module -> index module).
DEEP_IMPORTS = {
    # vec reads the main tables through this module's row readers, used as one namespace (`rows_of.*`);
    # its generic names (source, owners, existing) do not belong in the store API.
    ("vec.backfill", "index.store.embeddable"),
    ("vec.hybrid", "index.store.embeddable"),
    ("vec.store", "index.store.embeddable"),
}


def index_violations(graph: dict[str, set[str]]) -> list[str]:
    """`a -> b` for an index module outside the sub-packages, or one importing a sub-package it may not."""
    bad = []
    for mod, deps in graph.items():
        parts = mod.split(".")
        if parts[0] != "index" or mod == "index":
            continue
        if parts[1] not in INDEX_PACKAGES:
            bad.append(f"{mod}: not in an index sub-package")
            continue
        for dep in deps:
            dp = dep.split(".")
            if (
                dp[0] == "index"
                and len(dp) > 1
                and dp[1] != parts[1]
                and dp[1] not in INDEX_PACKAGES[parts[1]]
            ):
                bad.append(f"{mod} -> {dep}")
    return sorted(bad)


def deep_imports(graph: dict[str, set[str]]) -> list[str]:
    """`a -> b` for a client importing an index module below a sub-package's API."""
    return sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        if m.split(".")[0] in CLIENTS
        for d in deps
        if d.startswith("index.") and d.count(".") >= 2 and (m, d) not in DEEP_IMPORTS
    )


def test_the_index_checks_catch_upward_and_deep_imports() -> None:
    graph = {
        "index.store.db": {"index.retrieval.search"},
        "index.llm.refine": {"index.store.db", "index.stats.metrics"},
        "index.briefing.bundle": {"index.retrieval.budget", "index.store.operator"},
        "index.stray": set(),
        "hooks.context": {"index.store.db", "index.store"},
        "vec.hybrid": {"index.store.embeddable", "index.retrieval"},
    }
    assert index_violations(graph) == [
        "index.llm.refine -> index.stats.metrics",
        "index.store.db -> index.retrieval.search",
        "index.stray: not in an index sub-package",
    ]
    assert deep_imports(graph) == ["hooks.context -> index.store.db"]


def test_index_sub_packages_import_down() -> None:
    assert index_violations(_graph()) == []


def test_clients_import_index_through_the_package_apis() -> None:
    graph = _graph()
    assert deep_imports(graph) == []
    assert {(m, d) for m, deps in graph.items() for d in deps} >= DEEP_IMPORTS  # no stale exception


@pytest.mark.parametrize("package", sorted(INDEX_PACKAGES))
def test_package_api_names_resolve_to_their_modules(package: str) -> None:
    """Each API name loads from the module `_WHERE` names, and the typed imports list the same names."""
    pkg = importlib.import_module(f"index.{package}")
    assert sorted(pkg.__all__) == sorted(pkg._WHERE)
    for name, (module, attr) in pkg._WHERE.items():
        assert getattr(pkg, name) is getattr(importlib.import_module(f"index.{package}.{module}"), attr)
    typed = {
        (node.module, a.name, a.asname)
        for node in ast.walk(ast.parse((REPO / "index" / package / "__init__.py").read_text()))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("index.")
        for a in node.names
    }
    assert typed == {(f"index.{package}.{m}", a, n) for n, (m, a) in pkg._WHERE.items()}


# --- the docs say the same ----------------------------------------------------------------------------


def documented_layers(text: str) -> list[tuple[tuple[str, ...], bool]]:
    """The layer line of docs/architecture.md: `a + b > c > d | e > f` (top first; `+` packages may
    import each other, `|` packages may not)."""
    m = re.search(r"^Layer contract[^`\n]*`([^`]+)`", text, re.M)
    assert m, "docs/architecture.md has no `Layer contract ... `top > ... > bottom`` line"
    out = []
    for layer in m.group(1).split(">"):
        open_ = "+" in layer
        out.append((tuple(p.strip().strip("/") for p in re.split(r"[+|]", layer)), open_))
    return out


def test_architecture_doc_lists_the_contracts_layers() -> None:
    assert documented_layers((REPO / "docs" / "architecture.md").read_text(encoding="utf-8")) == LAYERS


def test_doc_parser_reads_open_and_independent_layers() -> None:
    text = "x\nLayer contract (top first): `a/ + b/ > c/ > d/ | e/ > f/`\n"
    assert documented_layers(text) == [
        (("a", "b"), True),
        (("c",), False),
        (("d", "e"), False),
        (("f",), False),
    ]
