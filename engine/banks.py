"""Finding banks (by name among the built-in banks and the QUIZ_PATH folders, or by path) and loading them.

A loaded bank is kept for the process, and on disk in the user cache folder
(``$QUIZ_HOME/cache/banks`` when ``QUIZ_HOME`` is set), so that a later ``quiz run`` skips reading
the YAML, validating it and building the generators' parameter models (about 50 ms of the 0.3 s
to the first question). The cache is an optimisation only, never a source of truth:

- an entry is used only if the bank file's path and its exact bytes (a SHA-256 digest, so an edit
  within the file system's mtime granularity still counts), the name errors show it by, and a
  fingerprint of the running engine's code (the size and mtime of every module, so any upgrade or
  edit of quiz) and the versions of Python, pydantic and numpy are all as when it was written;
  built-in generators are stored by name and looked up in the running code;
- banks with ``plugins:`` are never cached (their Python code must run at every load);
- a missing, corrupt, foreign or unwritable cache only means that the YAML is read again;
- ``QUIZ_NO_CACHE=1`` turns it off; it keeps at most ``CACHE_ENTRIES`` banks.

Entries are pickles, read only when written by this user and writable by no one else.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import re
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from attnquiz.engine.bank import Bank
from attnquiz.engine.errors import BankNotFoundError

SUFFIXES = (".yaml", ".yml")
CACHE_FORMAT = 1
"""Bumped whenever what a cache entry holds changes shape."""
CACHE_ENTRIES = 64
"""At most this many banks are kept (the least recently written go first): banks loaded once by
path, such as a test's temporary ones, must not pile up."""


@dataclass(frozen=True)
class BankFile:
    """A bank file found on disk, before it is loaded."""

    name: str
    path: Path
    origin: str  # "built-in", "QUIZ_PATH" or "path"


def builtin_dir() -> Path:
    """The folder of the banks shipped with quiz (inside the installed package)."""
    return Path(str(resources.files("attnquiz.questions")))


def search_dirs() -> list[tuple[Path, str]]:
    """Where banks are looked for by name: QUIZ_PATH folders first (so they can override), then built-in."""
    dirs = [
        (Path(part).expanduser(), "QUIZ_PATH")
        for part in os.environ.get("QUIZ_PATH", "").split(os.pathsep)
        if part.strip()
    ]
    dirs.append((builtin_dir(), "built-in"))
    return dirs


def discover() -> list[BankFile]:
    """Every bank file found by name, the first of each name winning."""
    found: dict[str, BankFile] = {}
    for folder, origin in search_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix in SUFFIXES and not path.name.startswith((".", "_")):
                found.setdefault(path.stem, BankFile(path.stem, path, origin))
    return list(found.values())


def find(name_or_path: str) -> BankFile:
    """The bank file a user means: an existing path, else a bank name."""
    looks_like_path = os.sep in name_or_path or name_or_path.endswith(SUFFIXES)
    candidate = Path(name_or_path).expanduser()
    if looks_like_path or candidate.is_file():
        if candidate.is_file():
            return BankFile(candidate.stem, candidate, "path")
        raise BankNotFoundError(f"no bank file at {name_or_path}")
    for folder, origin in search_dirs():
        for suffix in SUFFIXES:
            path = folder / f"{name_or_path}{suffix}"
            if path.is_file():
                return BankFile(name_or_path, path, origin)
    names = ", ".join(b.name for b in discover()) or "none"
    raise BankNotFoundError(f"no bank named {name_or_path!r} (banks found: {names})")


def _shown_path(path: Path) -> str:
    """The path as error messages show it: relative to the current folder when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


_cache: dict[tuple[Path, int, int], Bank] = {}


def load(name_or_path: str) -> Bank:
    """Find and load a bank (parsed once per process and file version, and cached on disk)."""
    found = find(name_or_path)
    stat = found.path.stat()
    resolved = found.path.resolve()
    key = (resolved, stat.st_mtime_ns, stat.st_size)
    bank = _cache.get(key)
    if bank is None:
        bank = _load_file(found.path, resolved)
        _cache[key] = bank
    return bank


def _load_file(path: Path, resolved: Path) -> Bank:
    """The bank in ``path``: from the cache on disk when it holds these bytes, else read and validated."""
    # attnquiz.engine.loader (yaml and the validators) is imported only when the file must be read.
    shown = _shown_path(path)
    folder = cache_dir()
    try:
        data = path.read_bytes() if folder is not None else None
        # As Path.read_text reads it (universal newlines), so the loader sees the same text either way.
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n") if data is not None else None
    except (OSError, UnicodeDecodeError):
        data = text = None
    if folder is None or data is None or text is None:
        from attnquiz.engine.loader import load_bank_file

        return load_bank_file(path, shown_as=shown)  # which reports an unreadable file as it should
    stamp = _stamp(resolved, data, shown)
    bank = _read_cached(folder, stamp)
    if bank is None:
        from attnquiz.engine.loader import load_bank_text

        # Validated from the very bytes hashed, so an entry never holds another version of the file.
        bank = load_bank_text(text, shown, base_dir=path.parent)
        if _cacheable(bank, text):
            _write_cached(folder, stamp, bank)
    return bank


# ---------------------------------------------------------------------------------------------
# The cache on disk
# ---------------------------------------------------------------------------------------------

CACHE_FORMAT = 1
"""Bumped whenever what a cache entry holds changes shape."""
CACHE_ENTRIES = 64
"""At most this many banks are kept (the least recently written go first): banks loaded once by
path, such as a test's temporary ones, must not pile up."""

_PLUGINS = re.compile(r"^[\"']?plugins[\"']?\s*:", re.MULTILINE)


def cache_dir() -> Path | None:
    """Where validated banks are cached, or None when ``QUIZ_NO_CACHE`` turns the cache off."""
    if os.environ.get("QUIZ_NO_CACHE", "").strip() not in {"", "0"}:
        return None
    home = os.environ.get("QUIZ_HOME", "").strip()
    if home:
        return Path(home).expanduser() / "cache" / "banks"
    import platformdirs  # only without QUIZ_HOME: it is not needed otherwise

    return Path(platformdirs.user_cache_dir("quiz", appauthor=False)) / "banks"


def code_fingerprint() -> tuple[tuple[str, int, int], ...]:
    """The size and mtime of every module of the engine and its generators: changes with any upgrade."""
    engine_dir = Path(__file__).resolve().parent
    entries: list[tuple[str, int, int]] = []
    for folder in (engine_dir, engine_dir / "generators"):
        with os.scandir(folder) as listing:
            for entry in listing:
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    entries.append((f"{folder.name}/{entry.name}", info.st_size, info.st_mtime_ns))
    return tuple(sorted(entries))


def _stamp(resolved: Path, data: bytes, shown: str) -> dict[str, Any]:
    """Everything a cache entry must match to be used instead of reading the file."""
    import numpy
    import pydantic

    return {
        "format": CACHE_FORMAT,
        "path": str(resolved),
        "sha256": hashlib.sha256(data).hexdigest(),
        "shown_as": shown,
        "python": sys.version,
        "pydantic": pydantic.VERSION,
        "numpy": numpy.__version__,
        "code": code_fingerprint(),
    }


def entry_path(folder: Path, stamp: dict[str, Any]) -> Path:
    """The cache file of a bank: one per bank file and name shown (a new version replaces the old)."""
    digest = hashlib.sha256(f"{stamp['path']}\0{stamp['shown_as']}".encode()).hexdigest()[:32]
    return folder / f"{digest}.pickle"


def _read_cached(folder: Path, stamp: dict[str, Any]) -> Bank | None:
    """The cached bank for this stamp, or None (no entry, a stale one, or one that cannot be used)."""
    try:
        with entry_path(folder, stamp).open("rb") as handle:
            if not _trusted(os.fstat(handle.fileno())) or pickle.load(handle) != stamp:
                return None
            bank = pickle.load(handle)
    except FileNotFoundError:
        return None
    except Exception:
        # Whatever a damaged or foreign entry raises (OSError, UnpicklingError, EOFError, an
        # ImportError or LookupError for a generator renamed since), the file is read instead and
        # the entry rewritten.
        return None
    return bank if isinstance(bank, Bank) else None


def _trusted(info: os.stat_result) -> bool:
    """Whether an entry is ours: written by this user and writable by no one else (pickle runs code)."""
    getuid = getattr(os, "getuid", None)  # not on Windows, where the folder is per user anyway
    owned = getuid is None or info.st_uid == getuid()
    return owned and not info.st_mode & 0o022


def _cacheable(bank: Bank, text: str) -> bool:
    """Whether a bank may be cached: no plugins, and only built-in generators and formula items."""
    from attnquiz.engine.registry import load_builtin_generators

    if _PLUGINS.search(text):
        return False
    builtin = load_builtin_generators()
    return all(
        entry.formula is not None or builtin.get(entry.spec.name) is entry.spec for entry in bank.items
    )


def _write_cached(folder: Path, stamp: dict[str, Any], bank: Bank) -> None:
    """Store ``bank`` for the next process; a failure costs only the speed-up, so it is not reported."""
    try:
        data = pickle.dumps(stamp, protocol=pickle.HIGHEST_PROTOCOL) + pickle.dumps(
            bank, protocol=pickle.HIGHEST_PROTOCOL
        )
    except Exception:
        return  # something in the bank does not pickle: it is simply read from its YAML each time
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, name = tempfile.mkstemp(dir=folder, prefix=".bank-", suffix=".tmp")
        temporary = Path(name)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            temporary.replace(entry_path(folder, stamp))  # atomic: a reader sees all of it or none
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        _prune(folder)
    except OSError:
        return  # a read-only folder or a full disk


def _prune(folder: Path) -> None:
    """Delete the least recently written entries beyond ``CACHE_ENTRIES`` (only after a write)."""
    entries = []
    for path in folder.glob("*.pickle"):
        with contextlib.suppress(OSError):  # another process may have just removed it
            entries.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(entries, reverse=True)[CACHE_ENTRIES:]:
        with contextlib.suppress(OSError):
            path.unlink()
