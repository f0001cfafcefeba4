"""The user's cache and data folders as platformdirs names them, without importing it where that is simple.

On Linux and the BSDs platformdirs follows the XDG base-directory rule: an absolute
``$XDG_CACHE_HOME`` (``$XDG_DATA_HOME``), else ``.cache`` (``.local/share``) under an absolute
``$HOME``, then the application's name. Importing platformdirs costs more than that rule: it
imports tempfile, and with it shutil, random and the compression modules (a twentieth of the
start-up of `quiz list` and `quiz show`, issue 43). So the rule is applied here where it is the
whole answer, and platformdirs answers everywhere else: Windows, macOS, Android, and a ``$HOME``
that is unset or relative (where it consults the password database). A test holds these answers
to platformdirs' own over a table of environments.
"""

from __future__ import annotations

import os
import posixpath
import sys

_XDG_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd", "dragonfly")


def user_cache_dir(app: str) -> str:
    """The folder for ``app``'s cached files (``~/.cache/quiz``): platformdirs' `user_cache_dir`.

    Raises:
        RuntimeError: there is no home folder to put it in (as platformdirs raises).
    """
    simple = _xdg_folder("XDG_CACHE_HOME", ".cache", app)
    if simple is not None:
        return simple
    import platformdirs

    return platformdirs.user_cache_dir(app, appauthor=False)


def user_data_dir(app: str) -> str:
    """The folder for ``app``'s data (``~/.local/share/quiz``): platformdirs' `user_data_dir`.

    Raises:
        RuntimeError: there is no home folder to put it in (as platformdirs raises).
    """
    simple = _xdg_folder("XDG_DATA_HOME", ".local/share", app)
    if simple is not None:
        return simple
    import platformdirs

    return platformdirs.user_data_dir(app, appauthor=False)


def _xdg_folder(variable: str, under_home: str, app: str) -> str | None:
    """The XDG folder of ``app``, or None where the rule is not the whole answer."""
    if not sys.platform.startswith(_XDG_PLATFORMS) or _may_be_android():
        return None
    given = os.environ.get(variable, "")
    if posixpath.isabs(given):
        return posixpath.join(given, app)
    home = os.environ.get("HOME")
    if home is None or not posixpath.isabs(home):
        return None
    # As os.path.expanduser("~/.cache") does with HOME: its trailing slashes dropped, "/" kept.
    return posixpath.join(home.rstrip("/") or "/", under_home, app)


def _may_be_android() -> bool:
    """Whether this could be an Android app, which platformdirs gives folders of its own."""
    return hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in os.environ or "ANDROID_ROOT" in os.environ


__all__ = ["user_cache_dir", "user_data_dir"]
