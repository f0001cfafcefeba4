"""Optional extras (PyTorch): whether the packages an item needs are installed here, said in one line.

An item that needs an extra (``requires: [torch]`` in its bank) is listed everywhere, but practice
offers it, and grading runs it, only where the extra's package can be found; elsewhere quiz says
what to install instead of failing. Whether a package is installed is asked with
`importlib.util.find_spec`, which finds it without importing it (PyTorch takes seconds to import).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable

EXTRAS: dict[str, str] = {"torch": "PyTorch"}
"""The extras an item may require: the package imported, and its name as the course says it. Each is
an optional dependency of the same name in pyproject.toml (``pip install 'attnquiz[torch]'``)."""


@functools.cache
def installed(package: str) -> bool:
    """Whether ``package`` can be found on this interpreter's path (not imported)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken package, or a module without a spec
        return False


def missing(requires: Iterable[str]) -> tuple[str, ...]:
    """The packages of ``requires`` that are not installed here, in order."""
    return tuple(package for package in requires if not installed(package))


def unavailable(requires: Iterable[str]) -> str:
    """Why an item that needs ``requires`` cannot run here ("" when it can): ``needs PyTorch, not
    installed here (pip install 'attnquiz[torch]')``."""
    absent = missing(requires)
    if not absent:
        return ""
    names = " and ".join(EXTRAS.get(package, package) for package in absent)
    extras = ",".join(absent)
    return f"needs {names}, not installed here (pip install 'attnquiz[{extras}]')"
