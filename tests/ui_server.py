"""Helpers for the viewer's browser tests: where the machine's Chromium is (Playwright drives it; no
browser download) and where screenshots go."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "screenshots"
DOCS_IMG = ROOT / "docs" / "img"


def chromium_path() -> str | None:
    """The Debian/Ubuntu Chromium scripts/test.sh installs (CHROMIUM_PATH overrides, for other systems)."""
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot_paths(name: str, docs: bool) -> list[Path]:
    """Where a screenshot goes: build/screenshots always; docs/img too for the README's pictures when
    UPDATE_DOCS_IMG=1 (so an ordinary test run leaves the committed files alone)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    out = [SHOTS / f"{name}.png"]
    if docs and os.environ.get("UPDATE_DOCS_IMG") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        out.append(DOCS_IMG / f"ui-{name}.png")
    return out
