"""The statements of a ``statements`` item's pool as the bank file gives them (pydantic models).

They check a pool when its bank is validated: each statement's fields and markup, and the checks
that need the whole pool (both truths, no repeated wording, the paper's letters without gaps). The
generator (`attnquiz.engine.generators.statements`) holds the result as plain data, so a bank read
back from the cache builds a question from a pool without importing pydantic.
"""

from __future__ import annotations

import re
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from attnquiz.engine.answers.kinds import LETTERS
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup


class StatementSpec(BaseModel):
    """One statement of a pool: its text, whether it is true, and why (shown when it is misjudged).

    ``defer_build``: the validator is built when a bank file is first validated, not at import, so a
    bank read back from the cache (whose items hold plain pools) builds none.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str = Field(min_length=1, description="The statement as the option shows it.")
    true: bool = Field(description="Whether the statement is true.")
    why: str = Field(
        default="",
        description="The explanation shown with the solution (and when a false one is ticked).",
    )
    letter: str | None = Field(
        default=None, pattern=r"^[A-Z]$", description="Its letter in the past paper, where the notes give it."
    )
    group: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Statements with the same group are versions of one claim (a fact and its negation, or "
            "paraphrases): a variant shows at most one of them, so one option cannot give another away."
        ),
    )

    @field_validator("text", "why")
    @classmethod
    def _supported_markup(cls, value: str) -> str:
        try:
            md.check(value)
        except markup.MarkupError as exc:
            raise ValueError(str(exc)) from None
        return value


def _same_wording(text: str) -> str:
    """The text with case, spacing and end punctuation ignored: what makes two options look alike."""
    return re.sub(r"\s+", " ", text).strip().rstrip(".").casefold()


class PoolSpec(RootModel[list[StatementSpec]]):
    """The statements of an item, with the checks that need all of them at once."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        statements = self.root
        if not any(s.true for s in statements) or all(s.true for s in statements):
            raise ValueError("a pool needs at least one true and one false statement")
        seen: dict[str, int] = {}
        for index, statement in enumerate(statements):
            key = _same_wording(statement.text)
            if key in seen:
                raise ValueError(
                    f"statement [{index}] repeats statement [{seen[key]}] ({statement.text[:50]!r}); "
                    "a variant could show the same option twice"
                )
            seen[key] = index
        owners: dict[str, int] = {}
        for index, statement in enumerate(statements):
            if statement.letter is None:
                continue
            if statement.letter in owners:
                raise ValueError(
                    f"letter {statement.letter} is given to statements [{owners[statement.letter]}] "
                    f"and [{index}]"
                )
            owners[statement.letter] = index
        letters = "".join(sorted(owners))
        if letters and letters != LETTERS[: len(letters)]:
            raise ValueError(
                f"the paper's letters must run A, B, C, ... without gaps (got {', '.join(letters)})"
            )
        return self
