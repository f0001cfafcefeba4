"""Whether a file or folder is the user's own: nobody else can write it, replace it or a folder above it.

quiz keeps things in its own places (the history, the bank cache) that another local user must not
be able to prepare or swap: a history in a folder someone else can write can be replaced by theirs
(or a link to another file) between two sessions, and a history file others can write can be
rewritten under the student. Root's folders are trusted (root can do anything anyway); a folder
writable by others is trusted only when it is sticky (``/tmp``), where no one may rename another
user's entries.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` is not the user's own (None when it is): it is not a folder, another user's, or
    writable by others; or a folder above it is another user's or writable by others (unless sticky)."""
    uid = _uid()
    if uid is None:
        return None  # no users to tell apart (Windows)
    current = folder.absolute()
    try:
        info = os.lstat(current)
        if not stat.S_ISDIR(info.st_mode):
            return f"{current} is not a folder"
        if info.st_uid != uid:
            return f"the folder {current} belongs to another user"
        if info.st_mode & 0o022:
            return f"other users can write in the folder {current}"
        for parent in current.parents:
            info = parent.stat()
            if info.st_uid not in {uid, 0}:
                return f"the folder {parent} above it belongs to another user"
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                return f"other users can write in the folder {parent} above it"
    except OSError as exc:
        return f"cannot look at {current} ({exc.strerror or exc})"
    return None


def file_problem(path: Path) -> str | None:
    """Why ``path`` is not the user's own file (None when it is, or does not exist yet): a link, not a
    regular file, another user's, writable by others, or with other names (hard links)."""
    uid = _uid()
    if uid is None:
        return None
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot look at {path} ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a link"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_uid != uid:
        return f"{path} belongs to another user"
    if info.st_mode & 0o022:
        return f"other users can write {path}"
    if info.st_nlink != 1:
        return f"{path} has other names (hard links)"
    return None


__all__ = ["file_problem", "folder_problem"]
