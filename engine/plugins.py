"""Instructors' own generator modules, named by a bank's ``plugins:`` and registered for that bank only.

A plugin is Python code and runs with the rights of whoever loads the bank; that is why only banks
that name a plugin run one, and why formula items (which need no plugin) never run code.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
import zlib
from pathlib import Path

from engine.errors import GeneratorSpecError, QuizError
from engine.registry import Registry, load_builtin_generators, registering_into


class PluginError(QuizError):
    """A plugin module could not be imported, or one of its generators breaks the rules."""


_loaded: dict[tuple[Path, int], Registry] = {}


def load_plugin(path: Path, parent: Registry | None = None) -> Registry:
    """Import a plugin module once per file version; its generators in a registry over the built-ins."""
    parent = parent or load_builtin_generators()
    resolved = path.resolve()
    try:
        version = resolved.stat().st_mtime_ns
    except OSError as exc:
        raise PluginError(f"cannot read {path} ({exc.strerror or exc})") from None
    key = (resolved, version)
    if key in _loaded:
        return _loaded[key]
    registry = Registry(parent)
    module_name = f"quiz_plugin_{zlib.crc32(str(resolved).encode()):08x}_{resolved.stem}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        with registering_into(registry):
            spec.loader.exec_module(module)
    except GeneratorSpecError as exc:
        sys.modules.pop(module_name, None)
        raise PluginError(str(exc)) from None
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise PluginError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:
        # Any error in an instructor's module is reported as one line that points into it.
        sys.modules.pop(module_name, None)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == resolved]
        where = f"{path}:{frames[-1].lineno}" if frames else str(path)
        raise PluginError(f"{where}: {type(exc).__name__}: {exc}") from None
    if not registry.own():
        raise PluginError(f"{path} defines no @generator function")
    _loaded[key] = registry
    return registry
