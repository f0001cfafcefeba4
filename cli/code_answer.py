"""A code question in a session: the student writes the function in their editor, starting from the
stub, or names a .py file; the code is kept beside the history, so that nothing written is lost.

The file for a variant is ``<history folder>/code/<bank>-<item>-<variant code>.py`` (private to the
user): opening the same variant again opens what was written before, not a fresh stub.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attnquiz.engine.answers.kinds import CodeAnswer
    from attnquiz.engine.variant import Question

EDIT_WORDS = frozenset({"", "e", "edit"})
"""What opens the editor at a code question's prompt (Enter alone, e or edit)."""

FALLBACK_EDITORS = ("nano", "vi")


def kept_file(folder: Path | None, question: Question, answer: CodeAnswer) -> Path:
    """The file that keeps this variant's code (made from the stub the first time)."""
    base = folder / "code" if folder is not None else Path(tempfile.gettempdir()) / f"quiz-code-{os.getuid()}"
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{question.bank}-{question.item_id}-{question.code}")
    path = base / f"{name}.py"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(answer.stub)
    return path


def editor_command() -> list[str] | None:
    """The user's editor ($VISUAL, then $EDITOR, then nano or vi), as a command; None if there is none."""
    for variable in ("VISUAL", "EDITOR"):
        text = os.environ.get(variable, "").strip()
        if text:
            try:
                words = shlex.split(text)
            except ValueError:
                continue
            if words:
                return words
    for name in FALLBACK_EDITORS:
        found = shutil.which(name)
        if found:
            return [found]
    return None


def edit(path: Path) -> str | None:
    """Open ``path`` in the editor and wait for it; why it could not be opened (None when it was)."""
    command = editor_command()
    if command is None:
        return "no editor found: set EDITOR, or give the path of a .py file"
    try:
        done = subprocess.run([*command, str(path)], check=False)
    except OSError as exc:
        return f"the editor {command[0]} could not start: {exc.strerror or exc}"
    if done.returncode != 0:
        return f"the editor {command[0]} stopped with status {done.returncode}"
    return None


def keep_copy(source: str, path: Path) -> None:
    """Keep ``source`` (from a file the student named) as this variant's code."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(source)
