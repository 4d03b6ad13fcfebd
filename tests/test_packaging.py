"""An installed copy (pipx, uv tool: what a marketplace install needs) holds every data file the code
reads beside itself: each non-Python file inside a package is named by pyproject's package-data."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

ROOT = Path(__file__).resolve().parent.parent
# Plugin files that live in a package folder but are read by Claude Code from the plugin checkout that
# `total-recall install` stages, never by the installed package.
PLUGIN_ONLY = {"hooks/hooks.json"}


def test_every_data_file_in_a_package_is_shipped() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    data: dict[str, list[str]] = conf.get("package-data", {})
    missing = []
    for package in conf["packages"]:
        folder = ROOT / package.replace(".", "/")
        for f in folder.iterdir():
            plugin_only = f"{package.replace('.', '/')}/{f.name}" in PLUGIN_ONLY
            if (
                f.is_file()
                and f.suffix not in (".py", ".pyc")
                and not f.name.startswith(".")
                and not plugin_only
            ):
                if not any(fnmatch.fnmatch(f.name, g) for g in data.get(package, [])):
                    missing.append(f"{package}: {f.name}")
            elif f.is_dir() and f.name != "__pycache__" and package == "total_recall" and f.name == "data":
                assert data.get(package) == ["data/*"], "total_recall/data/* is shipped"
    assert missing == [], "add them to [tool.setuptools.package-data]"


def test_the_confidence_model_is_shipped_beside_its_reader() -> None:
    from extractors.confidence import MODEL_PATH

    assert MODEL_PATH.parent == ROOT / "extractors" and MODEL_PATH.is_file()
