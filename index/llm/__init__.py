"""The optional LLM lane: a local Ollama client and the refinement pass that asks it to tidy stored
extractions. Off unless the user runs `refine`; reads and writes through `index.store` only.

API: the names below (`index.lazy_api` loads each from its module on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import lazy_api

if TYPE_CHECKING:
    from index.llm.llm_client import (
        LLMError as LLMError,
    )
    from index.llm.llm_client import (
        OllamaClient as OllamaClient,
    )
    from index.llm.llm_client import (
        check_url as check_url,
    )
    from index.llm.refine import dry_run as dry_run
    from index.llm.refine import refine as refine_project

# API name -> (module of this package, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "LLMError": ("llm_client", "LLMError"),
    "OllamaClient": ("llm_client", "OllamaClient"),
    "check_url": ("llm_client", "check_url"),
    "dry_run": ("refine", "dry_run"),
    "refine_project": ("refine", "refine"),
}

__all__ = [
    "LLMError",
    "OllamaClient",
    "check_url",
    "dry_run",
    "refine_project",
]

__getattr__ = lazy_api(__name__, _WHERE)
