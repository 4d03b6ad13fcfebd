"""total-recall: index layer, split by job into sub-packages (store < stats < retrieval < briefing; llm
on store). Each sub-package's `__init__` is its API: the names the layers above import."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_api(package: str, where: dict[str, tuple[str, str]]) -> Callable[[str], object]:
    """A sub-package's module `__getattr__` (PEP 562): an API name imports the module that defines it on
    first access and is cached on the package, so a hook that needs one name does not pay for importing
    the whole package (all of index/ costs ~220 ms). `where`: API name -> (module, name there)."""

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = where[name]
        value = getattr(importlib.import_module(f"{package}.{module}"), attr)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
