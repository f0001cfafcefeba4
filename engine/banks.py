"""Finding banks: by name among the built-in banks and the QUIZ_PATH folders, or by a path to a file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from engine.bank import Bank
from engine.errors import BankNotFoundError
from engine.loader import load_bank_file

SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class BankFile:
    """A bank file found on disk, before it is loaded."""

    name: str
    path: Path
    origin: str  # "built-in", "QUIZ_PATH" or "path"


def builtin_dir() -> Path:
    """The folder of the banks shipped with quiz (inside the installed package)."""
    return Path(str(resources.files("questions")))


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
    """Find and load a bank (parsed once per process and file version)."""
    found = find(name_or_path)
    stat = found.path.stat()
    key = (found.path.resolve(), stat.st_mtime_ns, stat.st_size)
    bank = _cache.get(key)
    if bank is None:
        bank = load_bank_file(found.path, shown_as=_shown_path(found.path))
        _cache[key] = bank
    return bank
