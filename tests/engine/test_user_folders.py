"""The user's cache and data folders: the same as platformdirs names them, without importing it where
the XDG rule is the whole answer (`attnquiz.engine.user_folders`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import platformdirs
import pytest

from attnquiz.engine import user_folders

XDG_RULE = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the XDG rule is the one of Linux and the BSDs"
)

HOMES = [None, "/home/ada", "/home/ada/", "/", "//net/ada", "relative/home", "", "/home/with space/é"]
XDG = [None, "", "/srv/xdg", "/srv/xdg/", "relative/xdg", "~/xdg"]


@XDG_RULE
@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("xdg", XDG)
@pytest.mark.parametrize(
    ("ours", "theirs", "variable"),
    [
        (user_folders.user_cache_dir, platformdirs.user_cache_dir, "XDG_CACHE_HOME"),
        (user_folders.user_data_dir, platformdirs.user_data_dir, "XDG_DATA_HOME"),
    ],
)
def test_the_folders_are_the_ones_platformdirs_names(
    monkeypatch: pytest.MonkeyPatch,
    ours: Callable[[str], str],
    theirs: Callable[..., str],
    variable: str,
    home: str | None,
    xdg: str | None,
) -> None:
    for name, value in (("HOME", home), (variable, xdg)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        expected = theirs("quiz", appauthor=False)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ours("quiz")
        return
    assert ours("quiz") == expected


def test_android_is_left_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def answer(app: str, appauthor: object = None) -> str:
        asked.append(app)
        return "/data/data/org.example/cache"

    monkeypatch.setenv("ANDROID_DATA", "/data")
    monkeypatch.setenv("HOME", "/home/ada")
    monkeypatch.setattr(platformdirs, "user_cache_dir", answer)
    assert user_folders.user_cache_dir("quiz") == "/data/data/org.example/cache"
    assert asked == ["quiz"]


@XDG_RULE
def test_the_xdg_rule_imports_nothing_of_platformdirs() -> None:
    code = (
        "import sys; from attnquiz.engine.user_folders import user_cache_dir, user_data_dir; "
        "print(user_cache_dir('quiz'), user_data_dir('quiz')); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('platformdirs', 'tempfile', 'shutil')))"
    )
    env = {"HOME": "/home/ada", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines() == ["/home/ada/.cache/quiz /home/ada/.local/share/quiz", "[]"]
