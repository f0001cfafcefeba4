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

Entries are pickles, and unpickling runs code, so an entry is read only when quiz can prove it is
the user's own: opened with ``O_NOFOLLOW`` (a symlink planted in its place is refused), a regular
file with one link, owned by the user and writable by no one else, in a folder whose every
ancestor is owned by the user (or root) and writable by no one else (a sticky folder such as
``/tmp`` excepted). A cache folder that fails this is neither read nor written. Pruning deletes
only files named as quiz names its entries and owned by the user. (A format that cannot run code
was weighed: the cache saves ~40 ms of ~0.45 s to the first question, and every faster format
than pickle would need the validated models rebuilt without validation; ownership is the check.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import re
import stat
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from attnquiz.engine.bank import Bank
from attnquiz.engine.errors import BankError, BankNotFoundError, Issue

SUFFIXES = (".yaml", ".yml")
CACHE_FORMAT = 2
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
    """Every bank file found by name, the first of each name winning (a QUIZ_PATH bank that hides a
    built-in one is said on stderr)."""
    found: dict[str, BankFile] = {}
    for folder, origin in search_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix in SUFFIXES and not path.name.startswith((".", "_")):
                first = found.setdefault(path.stem, BankFile(path.stem, path, origin))
                if origin == "built-in" and first.origin == "QUIZ_PATH":
                    _say_shadowed(first)
    return list(found.values())


def looks_like_path(name_or_path: str) -> bool:
    """Whether a bank argument is a path: it has a ``/`` (``./week1``) or ends in .yaml or .yml.

    A bare name is never a file of the current folder: a file named ``week1`` left there (by
    anyone) must not replace the built-in bank, nor run its plugins.
    """
    return "/" in name_or_path or os.sep in name_or_path or name_or_path.endswith(SUFFIXES)


def find(name_or_path: str) -> BankFile:
    """The bank file a user means: a path (see `looks_like_path`), else a bank name."""
    if looks_like_path(name_or_path):
        candidate = Path(name_or_path).expanduser()
        if candidate.is_file():
            return BankFile(candidate.stem, candidate, "path")
        raise BankNotFoundError(f"no bank file at {name_or_path}")
    for folder, origin in search_dirs():
        for suffix in SUFFIXES:
            path = folder / f"{name_or_path}{suffix}"
            if path.is_file():
                found = BankFile(name_or_path, path, origin)
                if origin == "QUIZ_PATH" and any(
                    (builtin_dir() / f"{name_or_path}{s}").is_file() for s in SUFFIXES
                ):
                    _say_shadowed(found)
                return found
    names = ", ".join(b.name for b in discover()) or "none"
    hint = ""
    if Path(name_or_path).is_file():
        hint = f"; the file {name_or_path!r} here is used only as a path: ./{name_or_path}"
    raise BankNotFoundError(f"no bank named {name_or_path!r} (banks found: {names}){hint}")


_said: set[Path] = set()


def _say_shadowed(found: BankFile) -> None:
    """One line on stderr, once per process: the name means a QUIZ_PATH file, not the built-in bank."""
    from attnquiz.engine import errors

    if found.path not in _said:
        _said.add(found.path)
        errors.notice(f"bank {found.name!r} is {found.path} (from QUIZ_PATH), not the built-in {found.name}")


def _shown_path(path: Path) -> str:
    """The path as error messages show it: relative to the current folder when it is below it."""
    # Not resolved: a bank that is a symlink is shown by its own name, not its target's.
    try:
        return str(Path.cwd().joinpath(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


MAX_BANK_BYTES = 1_000_000
"""A bank file larger than this is refused before it is parsed (the built-in banks are ~50 kB)."""


def read_bank_bytes(path: Path, file: str) -> bytes:
    """The bytes of a bank file, refused beyond `MAX_BANK_BYTES` without reading the rest."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BANK_BYTES + 1)
    except OSError as exc:
        raise BankError(file, [Issue(file, 1, "", f"cannot read the file ({exc.strerror or exc})")]) from None
    if len(data) > MAX_BANK_BYTES:
        message = f"the file is larger than {MAX_BANK_BYTES:,} bytes, the most a bank may have"
        raise BankError(file, [Issue(file, 1, "", message)])
    return data


def decode_bank(data: bytes, file: str) -> str:
    """A bank's text as Path.read_text reads it (UTF-8, universal newlines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BankError(
            file, [Issue(file, 1, "", f"cannot read the file: not UTF-8 ({exc.reason})")]
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


_cache: dict[tuple[Path, int, int, bool], Bank] = {}


def load(name_or_path: str, *, plugins: bool = False) -> Bank:
    """Find and load a bank (parsed once per process and file version, and cached on disk).

    ``plugins``: import the bank's plugins (Python code), as a command that builds variants must;
    without it a plugin's items are listed but cannot build a variant (see `attnquiz.engine.loader`).
    """
    found = find(name_or_path)
    info = found.path.stat()
    resolved = found.path.resolve()
    key = (resolved, info.st_mtime_ns, info.st_size, plugins)
    bank = _cache.get(key)
    if bank is None:
        bank = _load_file(found.path, resolved, plugins=plugins)
        if bank.origin != found.origin:
            bank = dataclasses.replace(bank, origin=found.origin)
        _cache[key] = bank
    return bank


def _load_file(path: Path, resolved: Path, *, plugins: bool) -> Bank:
    """The bank in ``path``: from the cache on disk when it holds these bytes, else read and validated."""
    # attnquiz.engine.loader (yaml and the validators) is imported only when the file must be read.
    shown = _shown_path(path)
    data = read_bank_bytes(path, shown)  # capped: a huge file is refused before it is read
    text = decode_bank(data, shown)
    folder = cache_dir()
    stamp = _stamp(resolved, data, shown) if folder is not None else None
    bank = _read_cached(folder, stamp) if folder is not None and stamp is not None else None
    if bank is None:
        from attnquiz.engine.loader import load_bank_text

        # Validated from the very bytes hashed, so an entry never holds another version of the file.
        bank = load_bank_text(text, shown, base_dir=path.parent, plugins=plugins)
        if folder is not None and stamp is not None and _cacheable(bank):
            _write_cached(folder, stamp, bank)
    return bank


# ---------------------------------------------------------------------------------------------
# The cache on disk
# ---------------------------------------------------------------------------------------------

_ENTRY_NAME = re.compile(r"^[0-9a-f]{32}\.pickle$")
"""The name of a cache entry (see `entry_path`): pruning touches no other file."""


def cache_dir() -> Path | None:
    """Where validated banks are cached, or None when ``QUIZ_NO_CACHE`` turns the cache off."""
    if os.environ.get("QUIZ_NO_CACHE", "").strip() not in {"", "0"}:
        return None
    home = os.environ.get("QUIZ_HOME", "").strip()
    if home:
        return Path(home).expanduser() / "cache" / "banks"
    import platformdirs  # only without QUIZ_HOME: it is not needed otherwise

    try:
        folder = platformdirs.user_cache_dir("quiz", appauthor=False)
    except (RuntimeError, KeyError, OSError):
        return None  # no home folder (HOME unset, no passwd entry): run without the cache
    return Path(folder) / "banks" if Path(folder).is_absolute() else None


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
    if not _private_folder(folder):
        return None
    try:
        descriptor = os.open(entry_path(folder, stamp), os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None  # no entry, or a symlink in its place (ELOOP)
    try:
        with os.fdopen(descriptor, "rb") as handle:
            if not _trusted(os.fstat(handle.fileno())) or pickle.load(handle) != stamp:
                return None
            bank = pickle.load(handle)
    except Exception:
        # Whatever a damaged entry raises (OSError, UnpicklingError, EOFError, an ImportError or
        # LookupError for a generator renamed since), the file is read instead and the entry rewritten.
        return None
    return bank if isinstance(bank, Bank) else None


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # 0 on Windows, whose cache folder is per user anyway


def _own_uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


def _trusted(info: os.stat_result) -> bool:
    """Whether an entry is ours: a regular file with one link, this user's, writable by no one else."""
    uid = _own_uid()
    if uid is None:
        return True
    return (
        stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_uid == uid and not info.st_mode & 0o022
    )


def _private_folder(folder: Path) -> bool:
    """Whether no one but the user (and root) can put a file in ``folder``: it and every folder
    above it are owned by the user or root and writable by no one else, unless sticky (``/tmp``)."""
    uid = _own_uid()
    if uid is None:
        return True
    try:
        current = folder.absolute()
        info = os.lstat(current)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
            return False  # the cache folder itself: the user's own, and only theirs
        for parent in current.parents:
            info = parent.stat()
            if info.st_uid not in {uid, 0}:
                return False
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                return False
    except OSError:
        return False
    return True


def _cacheable(bank: Bank) -> bool:
    """Whether a bank may be cached: no plugins, and only built-in generators and formula items."""
    from attnquiz.engine.registry import load_builtin_generators

    if bank.plugins:
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
        if not _private_folder(folder):
            return  # another user could replace what is written here: cache nothing
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
    """Delete the least recently written entries beyond ``CACHE_ENTRIES`` (only after a write).

    Only quiz's own entries count: named as `entry_path` names them, regular files, the user's.
    """
    uid = _own_uid()
    entries = []
    for path in folder.iterdir():
        if not _ENTRY_NAME.match(path.name):
            continue
        with contextlib.suppress(OSError):  # another process may have just removed it
            info = path.lstat()
            if stat.S_ISREG(info.st_mode) and (uid is None or info.st_uid == uid):
                entries.append((info.st_mtime_ns, path))
    for _, path in sorted(entries, reverse=True)[CACHE_ENTRIES:]:
        with contextlib.suppress(OSError):
            path.unlink()
