"""The bank format as pydantic models: strict (unknown keys are errors), frozen, documented field by field.

These models describe the file. Whether a generator exists and whether its ``params`` fit its
signature is checked by `attnquiz.engine.bank.loader` against the registry, which knows the generators.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from attnquiz.engine.answers.kinds import Scoring
from attnquiz.engine.answers.tolerance import Tolerance

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"
SNAKE = r"^[a-z_][a-z0-9_]*$"
NAME = r"^[A-Za-z][A-Za-z0-9_]*$"
"""A name in the formula language: a parameter, a part's value, a formula's symbol."""


class StrictModel(BaseModel):
    """Base of every bank model: unknown keys are errors and nothing changes after loading.

    ``defer_build``: a model's validator is built when a bank file is first validated, not when the
    module is imported, so a bank read back from the cache (`attnquiz.engine.bank.finding`) never builds one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, defer_build=True)


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


NoteAudience = Literal["instructors", "students"]
NoteScope = Literal["every", "original", "variants"]


class Note(StrictModel):
    """A note about an item: for instructors unless marked for students, on every instance or only some."""

    text: str = Field(min_length=1, description="The note, in plain text.")
    audience: NoteAudience = Field(
        default="instructors",
        alias="for",
        description=(
            "Who reads it: instructors (the default; quiz show and answer keys) or students (also with "
            "the question in sessions, on worksheets and in Moodle and Canvas)."
        ),
    )
    on: NoteScope = Field(
        default="every",
        description=(
            "Which instances it is about: every (the default), original (the past paper's own question) "
            "or variants."
        ),
    )


def _as_notes(value: Any) -> Any:
    """The short forms of ``note`` as a list: a text is one note for instructors, a mapping one note."""
    if isinstance(value, str):
        return [{"text": value}] if value.strip() else []
    if isinstance(value, dict | Note):
        return [value]
    if isinstance(value, list | tuple):  # a tuple: the default, or notes already validated
        return [{"text": entry} if isinstance(entry, str) else entry for entry in value]
    raise ValueError("a note is a text, a mapping {text, for, on}, or a list of them")


Notes = Annotated[
    tuple[Note, ...],
    BeforeValidator(_as_notes, json_schema_input_type=str | Note | list[str | Note]),
]
NOTE_DESCRIPTION = (
    "Notes about the item. A plain text is for instructors (quiz show, answer keys); write "
    "{text: ..., for: students} for a note students see with the question, and on: original (or "
    "variants) for a note about those instances only. A list holds several notes."
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
    requires: list[Literal["torch"]] = Field(
        default_factory=list,
        description="Optional packages its answers need (torch: PyTorch). Where one is not installed the "
        "item is listed, but practice does not offer it and its code is not run.",
    )
    note: Notes = Field(default=(), description=NOTE_DESCRIPTION)


def _number_as_text(value: Any) -> Any:
    # `value: 42` is as good an expression as `value: "42"`; YAML just reads it as a number.
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


ExpressionText = Annotated[str, BeforeValidator(_number_as_text), Field(min_length=1)]
"""An expression of the formula language (see `attnquiz.engine.formula.expressions`); a bare number is one
too."""

Number = int | float
Bound = int | float | str


class ParamSpec(StrictModel):
    """How a formula item gets one parameter. Give exactly one of choice, range (with step) or expr."""

    choice: list[Any] | str | None = Field(
        default=None,
        description=(
            "Draw one of these values (numbers, or lists of numbers for vectors), or one entry of the "
            'list an expression of earlier parameters gives, e.g. "divisors(d)".'
        ),
    )
    range: tuple[Bound, Bound] | None = Field(
        default=None,
        description=(
            "Draw from low to high inclusive, in steps of `step`: whole numbers when both bounds and "
            "the step are whole. A bound may be an expression of earlier parameters."
        ),
    )
    step: Number | None = Field(
        default=None,
        gt=0,
        description="The spacing of a range's values (default 1; required when a bound is not whole).",
    )
    expr: ExpressionText | None = Field(
        default=None, description='Compute the parameter from earlier ones, e.g. "4*d" (nothing is drawn).'
    )

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        given = [name for name in ("choice", "range", "expr") if getattr(self, name) is not None]
        if len(given) != 1:
            chosen = " and ".join(given) if given else "none"
            raise ValueError(f"give exactly one of choice, range or expr (got {chosen})")
        if self.step is not None and self.range is None:
            raise ValueError("step goes with range")
        if isinstance(self.choice, list) and not self.choice:
            raise ValueError("a choice needs at least one value")
        return self


class FormulaAnswer(StrictModel):
    """The answer of a formula item (or of one of its parts): its kind and the expression that gives it."""

    kind: Literal["number", "integer", "vector", "matrix", "shape", "expression"] = Field(
        default="number",
        description=(
            "number (graded within the tolerance), integer (a count, exact), vector or matrix "
            "(entry by entry within the tolerance), shape (a list of whole dimensions, exact) or "
            "expression (a formula in `symbols`, graded by algebraic equivalence)."
        ),
    )
    value: ExpressionText = Field(
        description=(
            'The expression of the parameters that gives the answer, e.g. "2*d*f + f + d". For an '
            'expression answer, the formula itself in its symbols, e.g. "12*d^2 + 13*d", where '
            "{{ expr }} writes a parameter's value."
        )
    )
    symbols: list[Annotated[str, Field(pattern=NAME)]] | None = Field(
        default=None,
        min_length=1,
        max_length=26,
        description=(
            "The names an expression answer is written in (d, h, T, d_model, ...): what a student may "
            "use. Only for kind: expression."
        ),
    )

    @model_validator(mode="after")
    def _symbols_for_expressions(self) -> Self:
        if self.kind == "expression" and not self.symbols:
            raise ValueError("an expression answer lists its symbols, e.g. symbols: [d]")
        if self.kind != "expression" and self.symbols is not None:
            raise ValueError(f"symbols are for expression answers, not for a {self.kind} answer")
        return self


class FormulaMistake(StrictModel):
    """A named misconception of a formula item: the wrong value it gives, and what to tell the student."""

    tag: str = Field(
        pattern=KEBAB, description="Kebab-case name of the misconception (e.g. no-biases), counted in stats."
    )
    value: ExpressionText = Field(
        description="The expression of the parameters that the misconception computes instead."
    )
    feedback: str = Field(
        min_length=1,
        description="One or two sentences explaining the misconception; may use {{ }} placeholders.",
    )
    score: float = Field(default=0.0, ge=0, le=1, description="Credit for this answer, 0 (the default) to 1.")


class FormulaPart(StrictModel):
    """One part, (a), (b), ..., of a formula item in parts: its own prompt, answer, steps and mistakes."""

    name: str | None = Field(
        default=None,
        pattern=NAME,
        description=(
            "A name for this part's value, which later parts' expressions and templates may use "
            "(e.g. score): a part whose answer names it uses this part, with error carried forward."
        ),
    )
    prompt: str = Field(
        min_length=1, description="This part's question, in Markdown with TeX maths and {{ }} placeholders."
    )
    answer: FormulaAnswer = Field(description="This part's answer: its kind and expression.")
    tolerance: ToleranceSpec | None = Field(
        default=None,
        description="How close a number, vector or matrix answer must be (default: within 0.1 %).",
    )
    mistakes: list[FormulaMistake] = Field(
        default_factory=list, description="The wrong answers of this part that named misconceptions give."
    )
    solution: list[str] = Field(
        min_length=1, description="This part's worked solution, one step per entry, with {{ }} placeholders."
    )
    weight: float = Field(
        default=1.0, gt=0, le=100, description="This part's weight in the question's score."
    )


FigureText = Annotated[
    str,
    Field(
        max_length=200,
        description="Plain text with TeX maths in $...$ and {{ expr }} placeholders, as prompts write it.",
    ),
]


class FormulaHeatmap(StrictModel):
    """A heatmap a formula item draws from its parameters: a matrix of values, shaded, each printed."""

    kind: Literal["heatmap"] = Field(description="A matrix of values drawn as shaded cells.")
    values: ExpressionText = Field(
        description='An expression giving a matrix (a list of rows; a list is one row), e.g. "S".'
    )
    rows: list[FigureText] | None = Field(
        default=None, max_length=16, description="A label per row (default 1, 2, 3, ...)."
    )
    cols: list[FigureText] | None = Field(
        default=None, max_length=16, description="A label per column (default 1, 2, 3, ...)."
    )
    title: FigureText = Field(default="", description="The figure's title.")
    caption: FigureText = Field(default="", description="One sentence under the figure.")
    row_title: FigureText = Field(default="", description='What the rows are, e.g. "query".')
    col_title: FigureText = Field(default="", description='What the columns are, e.g. "key".')
    decimals: int = Field(default=2, ge=0, le=4, description="Decimals printed in each cell.")
    mask: ExpressionText | None = Field(
        default=None,
        description=(
            "Cells shown as masked: `causal` (every cell above the diagonal, a key after its query), "
            'or an expression giving a matrix of the values\' shape, 1 (or true) for a masked cell, e.g. "M".'
        ),
    )
    masked_text: str = Field(
        default="−∞",
        max_length=8,
        description='What a masked cell shows instead of its value (default "−∞"; "" leaves it blank).',
    )
    where: Literal["prompt", "solution"] = Field(
        default="solution",
        description="With the question (prompt) or with the worked solution (the default).",
    )


class FormulaSeries(StrictModel):
    """One curve of a formula item's line plot."""

    label: FigureText = Field(description="The curve's name in the legend.")
    y: ExpressionText = Field(
        description='An expression of a y value per x value; `x` is the list of x values, e.g. "sin(x/10)".'
    )


class FormulaLinePlot(StrictModel):
    """A line plot a formula item draws from its parameters: curves over shared x values."""

    kind: Literal["line"] = Field(description="Curves over shared x values.")
    x: ExpressionText = Field(
        description='An expression giving the increasing x values (2 to 400), e.g. "[0, 1, 2, 3, 4]".'
    )
    series: list[FormulaSeries] = Field(min_length=1, max_length=8, description="The curves, 1 to 8.")
    title: FigureText = Field(default="", description="The figure's title.")
    caption: FigureText = Field(default="", description="One sentence under the figure.")
    x_label: FigureText = Field(default="", description="The x axis's label.")
    y_label: FigureText = Field(default="", description="The y axis's label.")
    where: Literal["prompt", "solution"] = Field(
        default="solution",
        description="With the question (prompt) or with the worked solution (the default).",
    )


FormulaFigure = Annotated[FormulaHeatmap | FormulaLinePlot, Field(discriminator="kind")]


class FormulaItem(StrictModel):
    """One bank item written as formulas: drawn parameters, templates and expressions, no Python."""

    # For editors: an item has an answer with its solution, or parts (`_answer_or_parts` checks it).
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["answer", "solution"]}, {"required": ["parts"]}]}
    )

    kind: Literal["formula"] = Field(description="The item's kind; `formula` items need no Python.")
    id: str = Field(
        pattern=KEBAB,
        description="Kebab-case name, unique in the bank, used on the command line (e.g. ffn-params).",
    )
    source: str = Field(
        min_length=1,
        description='Where the question comes from, as the notes cite it (e.g. "2025 T3 Quiz 1, Q191").',
    )
    topic: str = Field(pattern=KEBAB, description="Kebab-case topic, used by --topic and in stats.")
    params: dict[str, ParamSpec] = Field(
        default_factory=dict,
        description=(
            "The parameters, in order: each is drawn (choice, range) or computed (expr) and may use "
            "the parameters above it."
        ),
    )
    where: list[ExpressionText] = Field(
        default_factory=list,
        description=(
            'Conditions every variant must meet, e.g. "d/h >= 32"; the parameters are drawn again '
            "until all hold."
        ),
    )
    prompt: str = Field(
        min_length=1,
        description=(
            "The question, in Markdown with TeX maths; {{ expr }} writes a value ({{ expr :3 }} with "
            "3 decimals). Do not state the precision: the answer's instructions do."
        ),
    )
    answer: FormulaAnswer | None = Field(
        default=None,
        description="The answer's kind and expression (an item in parts has none: each part has one).",
    )
    mistakes: list[FormulaMistake] = Field(
        default_factory=list,
        description="The wrong answers that named misconceptions give, each with its feedback.",
    )
    tolerance: ToleranceSpec | None = Field(
        default=None,
        description="How close a number, vector or matrix answer must be (default: within 0.1 %).",
    )
    solution: list[str] | None = Field(
        default=None,
        min_length=1,
        description=(
            "The worked solution, one step per entry, with {{ }} placeholders (an item in parts has "
            "its steps in its parts instead)."
        ),
    )
    parts: list[FormulaPart] | None = Field(
        default=None,
        min_length=1,
        max_length=26,
        description=(
            "The parts (a), (b), ... of a question in parts, in order: the prompt above is the stem, "
            "shown once. A part whose answer names an earlier part is graded with error carried forward."
        ),
    )
    carried_score: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description=(
            "What a part right only given the student's own wrong earlier answer earns (1, full "
            "marks, by default: the method was right)."
        ),
    )
    hint: str = Field(default="", description="One sentence that helps without giving the answer away.")
    figures: list[FormulaFigure] = Field(
        default_factory=list,
        max_length=4,
        description=(
            "Figures drawn from each variant's parameters: a heatmap (kind: heatmap) of a matrix, or "
            "a line plot (kind: line) of curves, with the question or with the solution."
        ),
    )
    original: dict[str, Any] | None = Field(
        default=None,
        description=(
            "Parameter values of the past paper itself (drawn parameters only), for the --original "
            "instance; parameters not given are drawn."
        ),
    )
    tags: list[str] = Field(default_factory=list, description="Free labels for selecting items.")
    note: Notes = Field(default=(), description=NOTE_DESCRIPTION)

    @model_validator(mode="after")
    def _answer_or_parts(self) -> Self:
        if self.parts is None:
            if self.carried_score != 1:
                raise ValueError("carried_score is for an item in parts: a part right given an earlier error")
            if self.answer is None:
                raise ValueError("a formula item needs an answer (or parts, each with its own answer)")
            if self.solution is None:
                raise ValueError("a formula item needs a worked solution: solution, one step per entry")
            return self
        given = [name for name in ("answer", "tolerance", "solution") if getattr(self, name) is not None]
        given += ["mistakes"] if self.mistakes else []
        if given:
            raise ValueError(
                f"an item in parts gives {', '.join(given)} in each part, not for the whole item"
            )
        return self


def _not_blank(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be empty")
    return value


NonBlank = Annotated[str, BeforeValidator(_not_blank), Field(min_length=1)]


class ExplainItem(StrictModel):
    """A concept question: a prompt, a model answer and its key points. Never scored automatically:
    a student compares their answer with the model answer and rates it; a teacher marks it."""

    kind: Literal["explain"] = Field(description="The item's kind; `explain` items ask for an explanation.")
    id: str = Field(
        pattern=KEBAB,
        description="Kebab-case name, unique in the bank, used on the command line (e.g. why-scale).",
    )
    source: str = Field(
        min_length=1,
        description='Where the question comes from, as the notes cite it (e.g. "Day 13 interview, Q1").',
    )
    topic: str = Field(pattern=KEBAB, description="Kebab-case topic, used by --topic and in stats.")
    prompt: NonBlank = Field(description="The question, in Markdown with TeX maths.")
    answer: NonBlank = Field(description="The model answer, in Markdown with TeX maths.")
    points: list[NonBlank] = Field(
        min_length=2,
        max_length=6,
        description=(
            "2 to 6 key points a good answer makes, each in Markdown with TeX maths (what a student "
            "checks their answer against, and a teacher marks by)."
        ),
    )
    hint: str = Field(default="", description="One sentence that helps without giving the answer away.")
    tags: list[str] = Field(default_factory=list, description="Free labels for selecting items.")
    note: Notes = Field(default=(), description=NOTE_DESCRIPTION)

    @field_validator("points", mode="before")
    @classmethod
    def _two_to_six(cls, value: Any) -> Any:
        if isinstance(value, list) and not 2 <= len(value) <= 6:
            raise ValueError(
                f"a concept question needs 2 to 6 key points, not {len(value)}: one idea each, "
                "what a marker ticks"
            )
        return value


ITEM_KINDS = ("generator", "formula", "explain")


def _item_kind(value: Any) -> Any:
    # `kind` may be left out (a generator item); anything that is not a mapping is validated as a
    # generator item, whose error then says what an item must be.
    if isinstance(value, dict):
        return value.get("kind", "generator")
    return getattr(value, "kind", "generator")


Item = Annotated[
    Annotated[GeneratorItem, Tag("generator")]
    | Annotated[FormulaItem, Tag("formula")]
    | Annotated[ExplainItem, Tag("explain")],
    Discriminator(
        _item_kind,
        custom_error_type="item_kind",
        custom_error_message="kind must be generator (the default), formula or explain",
    ),
]


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


_JSON_SCHEMA_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}


_NAMED_SCHEMAS = {"properties", "$defs", "patternProperties"}
"""Keywords whose value maps names (a field may be called ``le``) to schemas."""


def _standard_bounds(node: Any) -> Any:
    """pydantic writes a bound on a union (``int | float`` with ``gt=0``) as ``gt``, which JSON
    Schema does not know and editors ignore: rename each to its JSON Schema keyword."""
    if isinstance(node, list):
        return [_standard_bounds(value) for value in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            result[key] = {name: _standard_bounds(schema) for name, schema in value.items()}
        else:
            result[_JSON_SCHEMA_BOUNDS.get(str(key)) or str(key)] = _standard_bounds(value)
    return result


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the bank format (what `quiz schema` prints)."""
    schema: dict[str, Any] = _standard_bounds(BankModel.model_json_schema())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "quiz question bank"
    return schema
