"""The installed layout of this checkout, as a tree of links, for tools that cannot use the editable install.

Installed, the repository's folders are one package: ``attnquiz`` is ``cli/``, ``attnquiz.engine``
is ``engine/`` and ``attnquiz.questions`` is ``questions/`` (see pyproject.toml). An editable
install maps them with an import hook, which mypy cannot follow and which a bench of this checkout
must not depend on (the venv's attnquiz may be another copy). A folder holding ``attnquiz/`` made of
links to the checkout's files gives both the real files under their installed names.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def installed_layout(dest: Path) -> Path:
    """Make ``dest/attnquiz`` with links into this checkout and return ``dest`` (for a search path).

    The folders are linked whole, so a module added later is seen; ``cli/`` is linked file by file
    because the package's own folder must also hold the links to ``engine/`` and ``questions/``.
    """
    package = dest / "attnquiz"
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "cli").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (package / "engine").symlink_to(ROOT / "engine", target_is_directory=True)
    (package / "questions").symlink_to(ROOT / "questions", target_is_directory=True)
    return dest


def repository_paths(text: str, dest: Path) -> str:
    """Tool output about files under ``dest`` with the repository's own paths instead."""
    package = f"{dest}/attnquiz/"
    return (
        text.replace(f"{package}engine/", "engine/")
        .replace(f"{package}questions/", "questions/")
        .replace(package, "cli/")
    )
