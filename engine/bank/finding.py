"""Finding banks (by name among the built-in banks and the QUIZ_PATH folders, or by path) and loading them.

A loaded bank is kept for the process, and on disk in the user cache folder
(``$QUIZ_HOME/cache/banks`` when ``QUIZ_HOME`` is set), so that a later ``quiz run`` skips reading
the YAML, validating it and building the generators' parameter models (about 50 ms of the 0.3 s
to the first question). The cache is an optimisation only, never a source of truth:

- an entry is used only if the bank file's path and its exact bytes (a SHA-256 digest, so an edit
  within the file system's mtime granularity still counts), the name errors show it by, and a
  fingerprint of the running engine's code (the size and mtime of every module, so any upgrade or
  edit of quiz), the versions of Python and numpy and pydantic's installed version file are all as
  when it was written;
  built-in generators are stored by name and looked up in the running code;
- banks with ``plugins:`` are never cached (their Python code must run at every load);
- a missing, corrupt, foreign or unwritable cache only means that the YAML is read again;
- ``QUIZ_NO_CACHE=1`` turns it off; it keeps at most ``CACHE_ENTRIES`` banks.

An entry is the stamp, a SHA-256 digest of the pickled bank (checked before it is read: each
item's parameters are pickled apart and read back only when the item is first used, so damage
there is found while the file can still be read instead), then the bank.

Entries are pickles, and unpickling runs code, so an entry is read only when quiz can prove it is
the user's own: opened with ``O_NOFOLLOW`` (a symlink planted in its place is refused), a regular
file with one link, owned by the user and writable by no one else, in a folder whose every
ancestor is owned by the user (or root) and writable by no one else (a sticky folder such as
``/tmp`` excepted). A cache folder that fails this is neither read nor written. Pruning deletes
only files named as quiz names its entries and owned by the user. (A format that cannot run code
was weighed: the cache saves ~40 ms of ~0.45 s to the first question, and every faster format
than pickle would need the validated models rebuilt without validation; ownership is the check.)

Beside an entry, ``quiz list`` keeps a listing index (`listing`): JSON, so it cannot run code, with
what the listing prints of each item (id, source, topic, answer kind, whether it has an original,
summary), so that listing a bank needs neither numpy, pydantic nor yaml. It is stamped like an
entry (the bank's path and bytes, the name shown, the engine's code and Python's version) and read
under the same ownership checks: an index that is stale, damaged or not the user's own is ignored
and rebuilt from the bank. Banks with plugins get no index, as they get no entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct, structs

# MAX_BANK_BYTES is re-exported: callers that read bank files know the limit as banks.MAX_BANK_BYTES.
from attnquiz.engine.bank.file_text import MAX_BANK_BYTES as MAX_BANK_BYTES
from attnquiz.engine.bank.file_text import decode_bank, read_bank_bytes
from attnquiz.engine.errors import BankNotFoundError

if TYPE_CHECKING:
    # Imported where a bank is built or unpickled: `quiz list` prints a bank from its listing index
    # without numpy or pydantic (see `listing`).
    from attnquiz.engine.bank.loaded import Bank

SUFFIXES = (".yaml", ".yml")
CACHE_FORMAT = 5
"""Bumped whenever what a cache entry holds changes shape."""
CACHE_ENTRIES = 64
"""At most this many banks are kept (the least recently written go first): banks loaded once by
path, such as a test's temporary ones, must not pile up."""


class BankFile(Struct, frozen=True):
    """A bank file found on disk, before it is loaded."""

    name: str
    path: Path
    origin: str  # "built-in", "QUIZ_PATH" or "path"


def builtin_dir() -> Path:
    """The folder of the banks shipped with quiz (inside the installed package)."""
    # The package's folder on disk, as importlib.resources.files gives it for an unzipped package
    # (banks are read by path), without importing importlib.resources at every start.
    import importlib.util

    spec = importlib.util.find_spec("attnquiz.questions")
    assert spec is not None
    assert spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0])


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


_cache: dict[tuple[Path, int, int, bool], Bank] = {}


def load(name_or_path: str, *, plugins: bool = False) -> Bank:
    """Find and load a bank (parsed once per process and file version, and cached on disk).

    ``plugins``: import the bank's plugins (Python code), as a command that builds variants must;
    without it a plugin's items are listed but cannot build a variant (see `attnquiz.engine.bank.loader`).
    """
    found = find(name_or_path)
    info = found.path.stat()
    resolved = found.path.resolve()
    key = (resolved, info.st_mtime_ns, info.st_size, plugins)
    bank = _cache.get(key)
    if bank is None:
        bank = _load_file(found.path, resolved, plugins=plugins)
        if bank.origin != found.origin:
            bank = bank.found_at(found.origin)
        _cache[key] = bank
    return bank


def _load_file(path: Path, resolved: Path, *, plugins: bool, data: bytes | None = None) -> Bank:
    """The bank in ``path``: from the cache on disk when it holds these bytes, else read and validated.

    ``data``: the file's bytes when the caller has read them already (so both see one version).
    """
    # attnquiz.engine.bank.loader (yaml and the validators) is imported only when the file must be read.
    shown = _shown_path(path)
    if data is None:
        data = read_bank_bytes(path, shown)  # capped: a huge file is refused before it is read
    text = decode_bank(data, shown)
    folder = cache_dir()
    stamp = _stamp(resolved, data, shown) if folder is not None else None
    bank = _read_cached(folder, stamp) if folder is not None and stamp is not None else None
    if bank is not None and bank.images:
        from attnquiz.engine.bank import images

        if not images.unchanged(path.parent, bank.images):
            bank = None  # an image was edited, replaced or removed: read the bank, which checks it again
    if bank is None:
        from attnquiz.engine.bank.loader import load_bank_text

        # Validated from the very bytes hashed, so an entry never holds another version of the file.
        bank = load_bank_text(text, shown, base_dir=path.parent, plugins=plugins)
        if folder is not None and stamp is not None and _cacheable(bank):
            _write_cached(folder, stamp, bank)
    return bank


# ---------------------------------------------------------------------------------------------
# The listing index (what `quiz list BANK` prints, without numpy, pydantic or yaml)
# ---------------------------------------------------------------------------------------------

LISTING_FORMAT = 2
"""Bumped whenever what a listing index holds changes shape."""
LISTING_SUFFIX = ".listing.json"
MAX_LISTING_BYTES = 4 * MAX_BANK_BYTES
"""A listing index larger than this is not read (it is rebuilt): a listing is smaller than its bank."""


class ListedItem(Struct, frozen=True):
    """What the listing of a bank says of one item."""

    id: str
    source: str
    topic: str
    kind: str
    """The answer kind (``numeric``, ``choice``…), or ``plugin`` for a plugin's item (not imported)."""
    multiple: bool
    """For a choice: whether several options may be right."""
    original: bool
    """Whether the past paper's own instance can be shown (``--original``)."""
    summary: str
    requires: str
    """The optional packages the item needs (``torch``), comma-separated; "" for none. Whether they
    are installed is asked when the listing is shown (`attnquiz.engine.extras`): it may change
    while the bank does not."""


class BankListing(Struct, frozen=True):
    """A bank's title and its items as `quiz list` shows them."""

    title: str
    items: tuple[ListedItem, ...]


def listing(name_or_path: str) -> BankListing:
    """The listing of a bank: from its listing index when that holds these bytes, else from the bank
    (loaded without its plugins, whose code a listing never runs), then stored as the index."""
    found = find(name_or_path)
    resolved = found.path.resolve()
    shown = _shown_path(found.path)
    data = read_bank_bytes(found.path, shown)
    folder = cache_dir()
    stamp = _listing_stamp(resolved, data, shown) if folder is not None else None
    if folder is not None and stamp is not None:
        cached = _read_listing(folder, stamp)
        if cached is not None:
            return cached
    bank = _load_file(found.path, resolved, plugins=False, data=data)
    built = bank_listing(bank)
    if folder is not None and stamp is not None and not bank.plugins:
        _write_listing(folder, stamp, built)
    return built


def bank_listing(bank: Bank) -> BankListing:
    """The listing of a loaded bank: each item's kind is that of its variant of seed 0."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer
    from attnquiz.engine.bank.plugins import is_deferred

    items = []
    for entry in bank.items:
        if is_deferred(entry.spec):
            kind, multiple = "plugin", False  # a plugin's item: its code is not run to learn its kind
        else:
            answer = entry.question(0).answer
            kind, multiple = answer.kind, isinstance(answer, ChoiceAnswer) and answer.multiple
        items.append(
            ListedItem(
                entry.id,
                entry.source,
                entry.topic,
                kind,
                multiple,
                entry.has_original,
                entry.spec.summary,
                ",".join(entry.facts.requires),
            )
        )
    return BankListing(bank.title, tuple(items))


def _listing_stamp(resolved: Path, data: bytes, shown: str) -> dict[str, Any]:
    """Everything a listing index must match to be used: as a bank entry's stamp, without the
    versions of pydantic and numpy (importing them to ask would cost what the index saves; a
    listing is plain text that their upgrades do not change)."""
    return {
        "format": LISTING_FORMAT,
        "path": str(resolved),
        "sha256": hashlib.sha256(data).hexdigest(),
        "shown_as": shown,
        "python": sys.version,
        "code": [list(entry) for entry in code_fingerprint()],
    }


_LISTED_FIELDS: dict[str, type] = {
    name: {"str": str, "bool": bool}[hint] for name, hint in ListedItem.__annotations__.items()
}
"""Each field of a listed item and the JSON type an index must hold for it."""


def _read_listing(folder: Path, stamp: dict[str, Any]) -> BankListing | None:
    """The listing index for this stamp, or None (none, stale, damaged, or not the user's own)."""
    descriptor = _open_own(folder, entry_path(folder, stamp, LISTING_SUFFIX))
    if descriptor is None:
        return None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            if not _trusted(os.fstat(handle.fileno())):
                return None
            data = handle.read(MAX_LISTING_BYTES + 1)
        if len(data) > MAX_LISTING_BYTES:
            return None
        import json  # the listing is `quiz list`'s alone: a question never imports json

        stored = json.loads(data)
    except (OSError, ValueError, RecursionError):
        return None  # unreadable, not UTF-8, not JSON, or nested beyond the parser: rebuilt
    if not isinstance(stored, dict) or stored.get("stamp") != stamp:
        return None
    return _parse_listing(stored.get("listing"))


def _parse_listing(stored: object) -> BankListing | None:
    """A listing from its JSON form, or None unless it has exactly the shape `_write_listing` writes."""
    if not isinstance(stored, dict) or set(stored) != {"title", "items"}:
        return None
    title, rows = stored["title"], stored["items"]
    if not isinstance(title, str) or not isinstance(rows, list):
        return None
    items = []
    for row in rows:
        if not isinstance(row, dict) or set(row) != set(_LISTED_FIELDS):
            return None
        if not all(type(row[name]) is kind for name, kind in _LISTED_FIELDS.items()):
            return None
        items.append(ListedItem(**row))
    return BankListing(title, tuple(items))


def _write_listing(folder: Path, stamp: dict[str, Any], built: BankListing) -> None:
    """Store a bank's listing index for the next `quiz list` (a failure only costs the speed-up)."""
    stored = {
        "stamp": stamp,
        "listing": {"title": built.title, "items": [structs.asdict(item) for item in built.items]},
    }
    import json

    data = json.dumps(stored, separators=(",", ":")).encode("ascii")  # \u escapes: any text round-trips
    _write_entry(folder, entry_path(folder, stamp, LISTING_SUFFIX), data)


# ---------------------------------------------------------------------------------------------
# The cache on disk
# ---------------------------------------------------------------------------------------------

_ENTRY_NAME = re.compile(r"^[0-9a-f]{32}(\.pickle|\.listing\.json)$")
"""The name of a cache entry or a listing index (see `entry_path`): pruning touches no other file."""


def cache_dir() -> Path | None:
    """Where validated banks are cached, or None when ``QUIZ_NO_CACHE`` turns the cache off."""
    if os.environ.get("QUIZ_NO_CACHE", "").strip() not in {"", "0"}:
        return None
    home = os.environ.get("QUIZ_HOME", "").strip()
    if home:
        return Path(home).expanduser() / "cache" / "banks"
    from attnquiz.engine.user_folders import user_cache_dir  # only without QUIZ_HOME

    try:
        folder = user_cache_dir("quiz")
    except (RuntimeError, KeyError, OSError):
        return None  # no home folder (HOME unset, no passwd entry): run without the cache
    return Path(folder) / "banks" if Path(folder).is_absolute() else None


def code_fingerprint() -> tuple[tuple[str, int, int], ...]:
    """The size and mtime of every module of the engine, its sub-packages included: changes with any
    upgrade (a cached bank holds the engine's own classes, so any module may change what it means)."""
    # Plain strings, not Paths: about two hundred modules are stamped at every start that reads a
    # bank, and a Path made and made relative per module cost three times the stat calls themselves.
    engine_dir = str(Path(__file__).resolve().parent.parent)
    prefix = len(engine_dir) + len(os.sep)
    entries: list[tuple[str, int, int]] = []
    folders = [engine_dir]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as listing:
            for entry in listing:
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    shown = entry.path[prefix:].replace(os.sep, "/")
                    entries.append((shown, info.st_size, info.st_mtime_ns))
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
    return tuple(sorted(entries))


def _stamp(resolved: Path, data: bytes, shown: str) -> dict[str, Any]:
    """Everything a cache entry must match to be used instead of reading the file."""
    import numpy  # a question needs it anyway: the bank's module imports it to build variants

    return {
        "format": CACHE_FORMAT,
        "path": str(resolved),
        "sha256": hashlib.sha256(data).hexdigest(),
        "shown_as": shown,
        "python": sys.version,
        "pydantic": installed_version_file("pydantic"),
        "numpy": numpy.__version__,
        "code": code_fingerprint(),
    }


def installed_version_file(package: str) -> tuple[str, int, int] | str:
    """The path, size and mtime of ``package``'s ``version.py`` where Python would import it from,
    without importing it (pydantic costs a fifth of the first question's start-up, and a question
    built from the cache reads no pydantic model); any upgrade rewrites that file. A package found
    some other way (a zip, a namespace) is imported to ask its version instead."""
    for entry in sys.path:
        folder = Path(entry or ".") / package
        if not (folder / "__init__.py").is_file():
            continue
        with contextlib.suppress(OSError):
            info = (folder / "version.py").stat()
            return (str(folder.resolve()), info.st_size, info.st_mtime_ns)
        break
    import importlib

    return str(getattr(importlib.import_module(package), "__version__", "unknown"))


def entry_path(folder: Path, stamp: dict[str, Any], suffix: str = ".pickle") -> Path:
    """The cache file of a bank: one per bank file and name shown (a new version replaces the old).

    ``suffix``: ``.pickle`` for the bank itself, ``.listing.json`` for its listing index.
    """
    digest = hashlib.sha256(f"{stamp['path']}\0{stamp['shown_as']}".encode()).hexdigest()[:32]
    return folder / f"{digest}{suffix}"


def _read_cached(folder: Path, stamp: dict[str, Any]) -> Bank | None:
    """The cached bank for this stamp, or None (no entry, a stale one, or one that cannot be used)."""
    import pickle

    from attnquiz.engine.bank.loaded import Bank

    descriptor = _open_own(folder, entry_path(folder, stamp))
    if descriptor is None:
        return None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            if not _trusted(os.fstat(handle.fileno())) or pickle.load(handle) != stamp:
                return None
            digest = pickle.load(handle)
            data = handle.read()
        # Whole, as written: each item's parameters are read back only when first used
        # (`BankItem`), so damage there must be found now, while the file can still be read instead.
        if digest != hashlib.sha256(data).hexdigest():
            return None
        bank = pickle.loads(data)
    except Exception:
        # Whatever a damaged entry raises (OSError, UnpicklingError, EOFError, an ImportError or
        # LookupError for a generator renamed since), the file is read instead and the entry rewritten.
        return None
    return bank if isinstance(bank, Bank) else None


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # 0 on Windows, whose cache folder is per user anyway


def _open_own(folder: Path, path: Path) -> int | None:
    """A descriptor open for reading on ``path`` in ``folder``, or None: not there, or not provably
    the user's own (a folder others can write to, a symlink in its place; the file itself is checked
    on the descriptor by the caller with `_trusted`)."""
    if not _private_folder(folder):
        return None
    try:
        return os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None  # no entry, or a symlink in its place (ELOOP)


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
    """Whether a bank may be cached: no plugins, and only built-in generators, formula and explain items."""
    from attnquiz.engine.registry import load_builtin_generators

    if bank.plugins:
        return False
    builtin = load_builtin_generators()
    return all(
        entry.formula is not None or entry.explain is not None or builtin.get(entry.spec.name) is entry.spec
        for entry in bank.items
    )


def _write_cached(folder: Path, stamp: dict[str, Any], bank: Bank) -> None:
    """Store ``bank`` for the next process; a failure to write costs only the speed-up, so it is not
    reported. Everything a cacheable bank holds pickles (formula items hold nodes, not closures): a
    failure to pickle is a bug, and raises."""
    import pickle

    pickled = pickle.dumps(bank, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(pickled).hexdigest()  # checked before the bank is read back
    data = (
        b"".join(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL) for part in (stamp, digest)) + pickled
    )
    _write_entry(folder, entry_path(folder, stamp), data)


def _write_entry(folder: Path, target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` in ``folder`` whole or not at all, if the folder is the user's own
    (a failure costs only the speed-up, so it is not reported), then prune the folder."""
    import tempfile  # only when an entry is written

    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _private_folder(folder):
            return  # another user could replace what is written here: cache nothing
        handle, name = tempfile.mkstemp(dir=folder, prefix=".bank-", suffix=".tmp")
        temporary = Path(name)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            temporary.replace(target)  # atomic: a reader sees all of it or none
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        _prune(folder)
    except OSError:
        return  # a read-only folder or a full disk


def _prune(folder: Path) -> None:
    """Delete the least recently written entries beyond ``CACHE_ENTRIES`` (only after a write),
    counting banks and listing indexes apart.

    Only quiz's own entries count: named as `entry_path` names them, regular files, the user's.
    """
    uid = _own_uid()
    entries: dict[str, list[tuple[int, Path]]] = {}
    for path in folder.iterdir():
        name = _ENTRY_NAME.match(path.name)
        if name is None:
            continue
        with contextlib.suppress(OSError):  # another process may have just removed it
            info = path.lstat()
            if stat.S_ISREG(info.st_mode) and (uid is None or info.st_uid == uid):
                entries.setdefault(name.group(1), []).append((info.st_mtime_ns, path))
    for kept in entries.values():
        for _, path in sorted(kept, reverse=True)[CACHE_ENTRIES:]:
            with contextlib.suppress(OSError):
                path.unlink()
