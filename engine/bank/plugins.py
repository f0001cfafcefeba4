"""Instructors' own generator modules, named by a bank's ``plugins:`` and registered for that bank only.

A plugin is Python code and runs with the rights of whoever loads the bank; that is why only banks
that name a plugin run one, why formula items (which need no plugin) never run code, why a plugin is
imported only by a command that builds variants (never by ``quiz list``), announced on stderr with
the bank's path, and only from the bank's own folder (see `attnquiz.engine.bank.loader`), and why
``quiz check`` imports and runs it in a child process with a time limit (see `attnquiz.engine.check.checks`).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
import zlib
from pathlib import Path

from attnquiz.engine.bank import tracebacks
from attnquiz.engine.errors import GeneratorSpecError, QuizError
from attnquiz.engine.registry import GeneratorSpec, Registry, load_builtin_generators, registering_into
from attnquiz.engine.variant import Variant


class PluginError(QuizError):
    """A plugin module could not be imported, or one of its generators breaks the rules."""


class PluginsNotImportedError(QuizError):
    """A variant of a plugin's generator was asked for from a bank loaded without its plugins."""


DEFERRED_MODULE = "(plugin, not imported)"
"""The ``module`` of a generator spec that stands for a plugin's generator not imported yet."""


def deferred_spec(name: str) -> GeneratorSpec:
    """A stand-in for generator ``name`` of a bank's plugins, for commands that build no variant
    (``quiz list BANK``): it knows the name only, and building a variant with it is an error."""

    def not_imported(rng: object, /, **params: object) -> Variant:
        raise PluginsNotImportedError(
            f"generator {name!r} comes from the bank's plugins, which were not imported: load the "
            "bank with plugins=True to build its variants"
        )

    return GeneratorSpec(
        name, not_imported, summary="a generator of the bank's plugins", module=DEFERRED_MODULE, fields={}
    )


def is_deferred(spec: GeneratorSpec) -> bool:
    """Whether ``spec`` stands for a plugin generator that this load did not import."""
    return spec.module == DEFERRED_MODULE


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
    if not resolved.is_file() or resolved.suffix != ".py":
        raise PluginError(f"{path} is not a Python file")
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
        raise PluginError(_syntax_message(path, resolved, exc)) from None
    except ModuleNotFoundError as exc:
        sys.modules.pop(module_name, None)
        raise PluginError(_missing_module_message(path, resolved, exc)) from None
    except BaseException as exc:
        # Any error in an instructor's module (even an exit, or a recursion) is reported as one line
        # that points into it: the innermost line of the bank's code, and the calls that led there.
        sys.modules.pop(module_name, None)
        if not tracebacks.is_code_failure(exc):
            raise  # Ctrl-C, or an export's stop on SIGTERM
        frames = tracebacks.bank_frames(exc.__traceback__, resolved.parent)
        inside = frames and Path(frames[-1].filename) == resolved
        where = f"{path}:{frames[-1].lineno}" if inside else tracebacks.where(frames, str(path))
        raise PluginError(
            f"{where}: {tracebacks.exception_text(exc)}{tracebacks.call_chain(frames)}"
        ) from None
    if not registry.own():
        raise PluginError(f"{path} defines no @generator function")
    _loaded[key] = registry
    return registry


# Before version 0.2 quiz installed its library as the top-level package ``engine``; plugins written
# against the guide of that time import from it. Name the new import instead of a bare "No module".
_RENAMED = {"engine": "attnquiz.engine", "cli": "attnquiz", "questions": "attnquiz.questions"}


def _syntax_message(path: Path, resolved: Path, exc: SyntaxError) -> str:
    """``gens.py:4:9: syntax error: '(' was never closed: `x = (`"``, at the plugin's own line when
    the error is in it (else in the file Python names)."""
    own = exc.filename is None or Path(exc.filename) == resolved
    where = f"{path if own else tracebacks.shown_path(str(exc.filename))}:{exc.lineno}"
    if exc.offset:
        where += f":{exc.offset}"
    source = " ".join((exc.text or "").split())[:80]
    source = "".join(c if c.isprintable() else "?" for c in source)
    return f"{where}: syntax error: {exc.msg}" + (f": `{source}`" if source else "")


def _missing_module_message(path: Path, resolved: Path, exc: ModuleNotFoundError) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == resolved]
    where = f"{path}:{frames[-1].lineno}" if frames else str(path)
    missing = exc.name or ""
    top = missing.partition(".")[0]
    if top not in _RENAMED:
        return f"{where}: ModuleNotFoundError: {exc}"
    line = (frames[-1].line or "").strip() if frames else ""
    old = re.match(rf"(from|import)\s+{top}\b", line)
    fix = f"{old.group(1)} {_RENAMED[top]}{line[old.end() :]}" if old else f"from {_RENAMED[top]} import ..."
    return (
        f"{where}: no module named {missing!r}: since quiz 0.2 it is {_RENAMED[top]!r};"
        f" write `{fix}` (see docs/authoring.md)"
    )
