"""The errors a user can cause, kept apart from bugs so the CLI can show them without a traceback."""

from __future__ import annotations

from dataclasses import dataclass


class QuizError(Exception):
    """Base of every error caused by the user's input rather than by a bug in quiz."""


@dataclass(frozen=True, order=True)
class Issue:
    """One problem in a bank file, located as precisely as the file allows."""

    file: str
    line: int
    field: str
    message: str
    column: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        if self.column is not None:
            where += f":{self.column}"
        if self.field:
            return f"{where}: {self.field}: {self.message}"
        return f"{where}: {self.message}"


class BankError(QuizError):
    """A bank file has one or more problems; all of them are listed, sorted by line."""

    def __init__(self, file: str, issues: list[Issue]) -> None:
        self.file = file
        self.issues = sorted(issues, key=lambda i: (i.line, i.column or 0, i.field))
        count = len(self.issues)
        summary = f"{file}: {count} error{'s' if count != 1 else ''}, nothing was run."
        super().__init__("\n".join([*map(str, self.issues), summary]))


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
