"""The bank format as pydantic models: strict (unknown keys are errors), frozen, documented field by field.

These models describe the file. Whether a generator exists and whether its ``params`` fit its
signature is checked by `engine.loader` against the registry, which knows the generators.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine.answers import Scoring, Tolerance

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"
SNAKE = r"^[a-z_][a-z0-9_]*$"


class StrictModel(BaseModel):
    """Base of every bank model: unknown keys are errors and nothing changes after loading."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class ToleranceSpec(StrictModel):
    """How close a numeric answer must be. Give exactly one of decimals, sigfigs, rtol/atol or exact."""

    decimals: Annotated[int, Field(ge=0, le=12)] | None = Field(
        default=None, description="Right when it rounds like the answer to this many decimal places."
    )
    sigfigs: Annotated[int, Field(ge=1, le=15)] | None = Field(
        default=None, description="Right when it agrees with the answer to this many significant figures."
    )
    rtol: Annotated[float, Field(gt=0, lt=1)] | None = Field(
        default=None, description="Right within this fraction of the answer (0.001 is 0.1 %)."
    )
    atol: Annotated[float, Field(ge=0)] | None = Field(
        default=None, description="Absolute floor for rtol, for answers near zero (default 1e-9)."
    )
    exact: bool | None = Field(default=None, description="Right only when exactly equal (counts).")

    @model_validator(mode="after")
    def _one_mode(self) -> Self:
        modes = [
            name
            for name, given in (
                ("decimals", self.decimals is not None),
                ("sigfigs", self.sigfigs is not None),
                ("rtol/atol", self.rtol is not None or self.atol is not None),
                ("exact", bool(self.exact)),
            )
            if given
        ]
        if len(modes) != 1:
            chosen = " and ".join(modes) if modes else "none"
            raise ValueError(
                f"give exactly one of decimals, sigfigs, rtol/atol or exact: true (got {chosen})"
            )
        return self

    def to_tolerance(self) -> Tolerance:
        """The engine's tolerance for this specification."""
        if self.decimals is not None:
            return Tolerance.decimals(self.decimals)
        if self.sigfigs is not None:
            return Tolerance.sigfigs(self.sigfigs)
        if self.exact:
            return Tolerance.exact()
        return Tolerance.relative(
            rtol=self.rtol if self.rtol is not None else 1e-3,
            atol=self.atol if self.atol is not None else 1e-9,
        )


class GeneratorItem(StrictModel):
    """One bank item: a past-paper question (or worked problem) mapped to a registered generator."""

    kind: Literal["generator"] = Field(
        default="generator", description="The item's kind; `generator` items call a Python generator."
    )
    id: str = Field(
        pattern=KEBAB,
        description="Kebab-case name, unique in the bank, used on the command line (e.g. additive-score).",
    )
    source: str = Field(
        min_length=1,
        description='Where the question comes from, as the notes cite it (e.g. "2026 T1 Quiz 1, Q13").',
    )
    topic: str = Field(pattern=KEBAB, description="Kebab-case topic, used by --topic and in stats.")
    generator: str = Field(
        pattern=SNAKE, description="Name of the registered generator that builds variants."
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments for the generator, checked against its signature.",
    )
    original: dict[str, Any] | None = Field(
        default=None,
        description="Inputs of the past paper itself, merged over params to build the --original instance.",
    )
    tolerance: ToleranceSpec | None = Field(
        default=None,
        description="Overrides the generator's tolerance for numeric, vector and matrix answers.",
    )
    scoring: Scoring | None = Field(
        default=None,
        description="Scoring of a multiple-select item: net (default), all-or-nothing or each-answer.",
    )
    tags: list[str] = Field(default_factory=list, description="Free labels for selecting items.")
    note: str = Field(
        default="",
        description="Shown with the question, e.g. that the paper's own wording is not in the notes.",
    )


Item = GeneratorItem


class BankModel(StrictModel):
    """A question bank: a name, a title and its items."""

    bank: str = Field(pattern=KEBAB, description="The bank's name (e.g. week1).")
    title: str = Field(min_length=1, description="The bank's title, shown on sessions and worksheets.")
    description: str = Field(default="", description="A paragraph about the bank, for instructors.")
    plugins: list[str] = Field(
        default_factory=list,
        description=(
            "Python files (relative to this bank) whose @generator functions this bank may use. "
            "They are code and run with your rights; formula items never need them."
        ),
    )
    items: list[Item] = Field(min_length=1, description="The bank's items, in the order of the course.")


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the bank format (what `quiz schema` prints)."""
    schema = BankModel.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "quiz question bank"
    return schema
