"""The errors a user can cause, kept apart from bugs so the CLI can show them without a traceback."""

from __future__ import annotations

import re
import sys

from msgspec import Struct


class QuizError(Exception):
    """Base of every error caused by the user's input rather than by a bug in quiz."""


class Issue(Struct, frozen=True, order=True):
    """One problem in a bank file, located as precisely as the file allows."""

    file: str
    line: int
    field: str
    message: str
    column: int | None = None
    token: str = ""
    """Text of the line that the problem is about (``*`` for an alias), for the caret of `excerpt`."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        if self.column is not None:
            where += f":{self.column}"
        if self.field:
            return f"{where}: {self.field}: {self.message}"
        return f"{where}: {self.message}"


class BankError(QuizError):
    """A bank file has one or more problems; all of them are listed, sorted by line.

    ``str()`` is one ``file:line: field: message`` line per problem and a summary (what scripts and
    the golden files read); `report` adds, under each line, the offending source line with a caret.
    ``source`` is the bank's text, given only when the file is a bank: a file that is not (a symlink
    to a secret, say) is never quoted.
    """

    def __init__(self, file: str, issues: list[Issue], source: str | None = None) -> None:
        self.file = file
        self.issues = sorted(issues, key=lambda i: (i.line, i.column or 0, i.field))
        self.source = source
        count = len(self.issues)
        self.summary = f"{file}: {count} error{'s' if count != 1 else ''}, nothing was run."
        super().__init__("\n".join([*map(str, self.issues), self.summary]))

    def report(self) -> str:
        """Every problem with its source excerpt (when the file may be quoted), then the summary."""
        lines: list[str] = []
        for issue in self.issues:
            lines.append(str(issue))
            lines.extend(excerpt(self.source, issue))
        lines.append(self.summary)
        return "\n".join(lines)


EXCERPT_WIDTH = 120
"""At most this many characters of a source line are quoted under an error."""


def excerpt(source: str | None, issue: Issue) -> list[str]:
    """The issue's source line and a caret under what it is about, as ruff and rustc show them.

    The caret goes under the issue's column when it has one, else under the last name of its field
    (``dim`` of ``items[0].params.dim``) when the line has it, else under the line's text.
    """
    if source is None or issue.line < 1:
        return []
    text_lines = source.splitlines()
    if issue.line > len(text_lines):
        return []
    # A tab is one column, as YAML's marks count it, and shown as → (YAML forbids it in indentation).
    raw = text_lines[issue.line - 1].replace("\t", "→")
    if not raw.strip():
        return []
    start = len(raw) - len(raw.lstrip())
    width = len(raw.strip())
    if issue.column is not None:
        start, width = issue.column - 1, 1
    elif issue.token and (found := re.search(re.escape(issue.token) + r"[\w-]*", raw)):
        start, width = found.start(), found.end() - found.start()
    else:
        names = [part for part in re.split(r"[.\[\]]", issue.field) if part and not part.isdigit()]
        if names:
            found = re.search(rf"(?<![\w-]){re.escape(names[-1])}(?![\w-])", raw)
            if found:
                start, width = found.start(), len(names[-1])
    # A long line is shown as a window of EXCERPT_WIDTH characters around the caret.
    offset = max(0, start - EXCERPT_WIDTH // 2) if start + min(width, 20) > EXCERPT_WIDTH else 0
    window = raw[offset : offset + EXCERPT_WIDTH]
    window = "".join(c if c.isprintable() else "?" for c in window)  # never a control sequence
    before = "…" if offset else ""
    after = "…" if offset + EXCERPT_WIDTH < len(raw) else ""
    column = len(before) + start - offset
    width = max(1, min(width, len(before) + len(window) - column))
    number = str(issue.line)
    gutter = " " * len(number)
    return [f" {number} | {before}{window}{after}", f" {gutter} | {' ' * column}{'^' * width}"]


def notice(message: str) -> None:
    """Tell the user something that is not an error (a plugin about to run, a shadowed bank): one
    line on stderr. A program using the engine as a library may replace this function."""
    sys.stderr.write(f"quiz: {message}\n")
    sys.stderr.flush()


class BankNotFoundError(QuizError):
    """No bank of that name or path exists."""


class ItemNotFoundError(QuizError):
    """The bank has no item with that id."""


class VariantCodeError(QuizError):
    """A variant code that was mistyped or does not belong to this bank."""


class GeneratorSpecError(Exception):
    """A generator function breaks the registry's rules (a bug in its code, found at import)."""


class GeneratorRunError(QuizError):
    """A generator raised while building a variant; names the item, seed and params to reproduce it."""
