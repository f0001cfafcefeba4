"""The history's file: where it lives, kept private to its user, and what to say when SQLite cannot use it.

The history is private: quiz creates its file 0600 and its folder 0700, and narrows an existing
file at the default location to 0600. Every failure is a `StoreError` whose message gives the advice
that fits its cause (a read-only file, a full disk, a lock, damage).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from attnquiz.engine.errors import QuizError

DB_NAME = "history.sqlite3"
APP_NAME = "quiz"


class StoreError(QuizError):
    """The history database cannot be opened, read or written (corrupt, locked, too new, no access)."""


def default_path(explicit: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Path:
    """The database file: ``explicit`` (``--db``), else ``$QUIZ_HOME/history.sqlite3``, else the data dir.

    Args:
        explicit: A path given on the command line.
        env: The environment to read ``QUIZ_HOME`` from (``os.environ`` when None).

    Returns:
        The path of the database file (it may not exist yet).

    Raises:
        StoreError: no location is given and there is no home folder to put one in (``HOME``
            unset and the user has no passwd entry, as in ``docker run --user N``).
    """
    if explicit is not None:
        return Path(explicit).expanduser()
    environ = os.environ if env is None else env
    home = environ.get("QUIZ_HOME", "").strip()
    if home:
        return Path(home).expanduser() / DB_NAME
    from attnquiz.engine.user_folders import user_data_dir  # only when neither override is given

    try:
        folder = user_data_dir(APP_NAME)
    except (RuntimeError, KeyError, OSError):
        folder = ""
    if not folder or not Path(folder).is_absolute():
        raise StoreError(
            "there is no home folder to keep the history in (HOME is not set and this user has none): "
            "set QUIZ_HOME to a folder, or give --db FILE"
        )
    return Path(folder) / DB_NAME


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[0].lower() + text[1:] if text else text


def is_transient(exc: sqlite3.OperationalError) -> bool:
    """A lock held by another process for a moment (not damage): worth trying again."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def cannot_use(target: Path, exc: BaseException) -> str:
    """What went wrong with the database at ``target``, and the advice that fits the cause."""
    text = str(exc).lower()
    errno = getattr(exc, "sqlite_errorcode", None)
    full = "full" in text or errno == getattr(sqlite3, "SQLITE_FULL", 13)
    readonly = "readonly" in text or "read-only" in text or errno == getattr(sqlite3, "SQLITE_READONLY", 8)
    folder = target.parent
    if full:
        return (
            f"the disk holding the history database {target} is full ({_describe(exc)}); "
            "free some space and try again: the history itself is intact"
        )
    if readonly or (target.exists() and not os.access(target, os.W_OK)) or not os.access(folder, os.W_OK):
        where = target if target.exists() and not os.access(target, os.W_OK) else folder
        return (
            f"the history database {target} cannot be written ({_describe(exc)}): {where} is read-only "
            "for you; make it writable, or give another file with --db"
        )
    if is_transient(exc) if isinstance(exc, sqlite3.OperationalError) else False:
        return (
            f"the history database {target} is locked by another program ({_describe(exc)}); "
            "close the other quiz session, or try again in a moment"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return (
            f"the history database {target} is damaged ({_describe(exc)}); "
            "move it away to start a new history, or give another with --db"
        )
    return (
        f"cannot use the history database {target} ({_describe(exc)}); "
        "check the disk and the file, or give another with --db"
    )


def private_file(target: Path, *, tighten: bool) -> None:
    """Create ``target`` empty with mode 0600 if missing (SQLite gives its -wal and -shm files the
    same mode); with ``tighten``, narrow an existing file of this user to 0600."""
    try:
        descriptor = os.open(
            target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except FileExistsError:
        if tighten:
            info = target.stat()
            if info.st_mode & 0o077 and info.st_uid == os.getuid() and stat.S_ISREG(info.st_mode):
                for path in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
                    if path.exists():
                        path.chmod(0o600)
        return
    os.close(descriptor)


def refuse_shared(target: Path) -> None:
    """Refuse quiz's own history where another user could write it or its folder (a shared
    QUIZ_HOME prepared by someone else), as the bank cache refuses such a folder."""
    from attnquiz.engine.ownership import file_problem, folder_problem

    problem = folder_problem(target.parent) or file_problem(target)
    if problem is not None:
        raise StoreError(
            f"the history {target} is not private: {problem}; quiz keeps no history where others "
            "can change it: set QUIZ_HOME to a folder of your own, or give --db FILE"
        )


def private_folder(folder: Path, *, tighten: bool) -> None:
    """Create ``folder`` (and missing parents) with mode 0700; with ``tighten``, narrow quiz's own one."""
    if not folder.exists():
        folder.mkdir(parents=True, mode=0o700)
        folder.chmod(0o700)  # mkdir's mode is masked by the umask
        return
    if tighten:
        info = folder.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            folder.chmod(0o700)


__all__ = [
    "APP_NAME",
    "DB_NAME",
    "StoreError",
    "cannot_use",
    "default_path",
    "is_transient",
    "private_file",
    "private_folder",
    "refuse_shared",
]
