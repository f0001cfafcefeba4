"""Figures of formula items: a heatmap or a line plot declared in YAML, drawn from each variant's parameters.

A formula item's ``figures:`` (`attnquiz.engine.schema.FormulaHeatmap`, `FormulaLinePlot`) are
compiled when the bank loads, like the item's other expressions and templates: a heatmap's
``values`` and a line plot's ``x`` and each curve's ``y`` are expressions (a curve's ``y`` may use
``x``, the list of x values, entry by entry: ``sin(x / 10)``); titles, labels, legends and captions
are templates with ``{{ }}`` placeholders and TeX maths. Each variant then evaluates them into an
`attnquiz.engine.figures.Heatmap` or `LinePlot`, which every renderer draws. A figure that cannot
be drawn for some parameters (a ragged matrix, a curve of the wrong length) is that variant's
error, at the figure's line, with the parameter values, as any other expression's failure is.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from attnquiz.engine.figures import Figure, FigureError, Heatmap, LinePlot, Series, Where
from attnquiz.engine.formula.expressions import Expression
from attnquiz.engine.formula.values import ExpressionError, Value, to_python

Loc = tuple[str | int, ...]
if TYPE_CHECKING:
    from attnquiz.engine.schema import FormulaHeatmap, FormulaLinePlot

X_NAME = "x"
"""The name under which a curve's ``y`` expression sees the x values."""
CAUSAL: Literal["causal"] = "causal"
"""A heatmap's ``mask: causal``: every cell above the diagonal (a key after its query) is masked, the
mask of a decoder's self-attention that the course draws most."""


class Text(Protocol):
    """A compiled template (`attnquiz.engine.formula.templates.Template`): text with placeholders."""

    def render(self, values: Mapping[str, Value]) -> str: ...


CompileText = Callable[[str, Loc, Sequence[str], list[tuple[Loc, str]]], Text]
CompileExpression = Callable[[str, Loc, Sequence[str], list[tuple[Loc, str]]], Expression]
Fail = Callable[[Loc, str, Mapping[str, Value]], Exception]


@dataclass(frozen=True, slots=True)
class HeatmapRecipe:
    """A heatmap's expressions and templates, compiled; ``loc`` is where it is written in the item."""

    loc: Loc
    values: Expression
    rows: tuple[Text, ...] | None
    cols: tuple[Text, ...] | None
    texts: Mapping[str, Text]  # title, caption, row_title, col_title
    decimals: int
    where: Where
    mask: Expression | Literal["causal"] | None = None
    masked_text: str = "−∞"


@dataclass(frozen=True, slots=True)
class LinePlotRecipe:
    """A line plot's expressions and templates, compiled."""

    loc: Loc
    x: Expression
    series: tuple[tuple[Text, Expression], ...]
    texts: Mapping[str, Text]  # title, caption, x_label, y_label
    where: Where


Recipe = HeatmapRecipe | LinePlotRecipe


def compile_figures(
    specs: Sequence[FormulaHeatmap | FormulaLinePlot],
    names: Sequence[str],
    problems: list[tuple[Loc, str]],
    text: CompileText,
    expression: CompileExpression,
) -> tuple[Recipe, ...]:
    """Every figure of an item compiled (``text`` and ``expression`` compile a template and an
    expression of the item's parameters, adding what is wrong to ``problems``)."""
    # The bank format, needed only where a bank is validated (a cached bank's figures are compiled).
    from attnquiz.engine.schema import FormulaHeatmap

    recipes: list[Recipe] = []
    for index, spec in enumerate(specs):
        loc: Loc = ("figures", index)
        if isinstance(spec, FormulaHeatmap):
            labels = {
                name: tuple(text(t, (*loc, name, k), names, problems) for k, t in enumerate(given))
                for name, given in (("rows", spec.rows), ("cols", spec.cols))
                if given is not None
            }
            recipes.append(
                HeatmapRecipe(
                    loc,
                    expression(spec.values, (*loc, "values"), names, problems),
                    labels.get("rows"),
                    labels.get("cols"),
                    _texts(spec, ("title", "caption", "row_title", "col_title"), loc, names, problems, text),
                    spec.decimals,
                    spec.where,
                    _mask(spec.mask, (*loc, "mask"), names, problems, expression),
                    spec.masked_text,
                )
            )
            continue
        if X_NAME in names:
            problems.append(((*loc, "x"), f"a parameter is named {X_NAME}: a curve's y calls the x values x"))
        with_x = [*names, X_NAME]
        series = tuple(
            (
                text(s.label, (*loc, "series", k, "label"), names, problems),
                expression(s.y, (*loc, "series", k, "y"), with_x, problems),
            )
            for k, s in enumerate(spec.series)
        )
        recipes.append(
            LinePlotRecipe(
                loc,
                expression(spec.x, (*loc, "x"), names, problems),
                series,
                _texts(spec, ("title", "caption", "x_label", "y_label"), loc, names, problems, text),
                spec.where,
            )
        )
    return tuple(recipes)


def _mask(
    given: str | None,
    loc: Loc,
    names: Sequence[str],
    problems: list[tuple[Loc, str]],
    expression: CompileExpression,
) -> Expression | Literal["causal"] | None:
    """A heatmap's mask: none, the causal mask, or an expression of the item's parameters."""
    if given is None:
        return None
    if given.strip() == CAUSAL:
        if CAUSAL in names:  # the word is the mask's; a parameter of that name would be silently unused
            problems.append((loc, f"a parameter is named {CAUSAL}: `mask: {CAUSAL}` means the causal mask"))
        return CAUSAL
    word = given.strip()
    if word.isidentifier() and word not in names and difflib.get_close_matches(word, [CAUSAL], cutoff=0.6):
        problems.append((loc, f"unknown mask `{word}` (did you mean `{CAUSAL}`?)"))
        return None
    return expression(given, loc, names, problems)


def _texts(
    spec: Any,
    fields: Sequence[str],
    loc: Loc,
    names: Sequence[str],
    problems: list[tuple[Loc, str]],
    text: CompileText,
) -> dict[str, Text]:
    return {name: text(getattr(spec, name), (*loc, name), names, problems) for name in fields}


def draw(recipe: Recipe, values: Mapping[str, Value], fail: Fail) -> Figure:
    """The figure of one variant (``fail(loc, message, values)`` is the exception to raise)."""
    try:
        if isinstance(recipe, HeatmapRecipe):
            return _heatmap(recipe, values)
        return _line_plot(recipe, values)
    except (ExpressionError, FigureError, ValueError, TypeError) as exc:
        raise fail(recipe.loc, f"cannot draw the figure: {exc}", values) from None


def _heatmap(recipe: HeatmapRecipe, values: Mapping[str, Value]) -> Heatmap:
    matrix = to_python(recipe.values.evaluate(values))
    if not isinstance(matrix, list):
        raise FigureError(f"values gives {matrix!r}, not a matrix (a list of rows)")
    rows = matrix if matrix and isinstance(matrix[0], list) else [matrix]
    texts = {name: template.render(values) for name, template in recipe.texts.items()}
    n_cols = len(rows[0]) if rows and isinstance(rows[0], list) else 0
    return Heatmap(
        values=rows,
        rows=_labels(recipe.rows, len(rows), values),
        cols=_labels(recipe.cols, n_cols, values),
        title=texts["title"],
        caption=texts["caption"],
        row_title=texts["row_title"],
        col_title=texts["col_title"],
        decimals=recipe.decimals,
        mask=_mask_matrix(recipe.mask, len(rows), n_cols, values),
        masked_text=recipe.masked_text,
        where=recipe.where,
    )


def _mask_matrix(
    mask: Expression | Literal["causal"] | None, n_rows: int, n_cols: int, values: Mapping[str, Value]
) -> list[list[bool]] | None:
    """The mask of one variant: True for a masked cell (`Heatmap` checks that its shape is the values')."""
    if mask is None:
        return None
    if isinstance(mask, str):  # the causal mask
        return [[j > i for j in range(n_cols)] for i in range(n_rows)]
    given = to_python(mask.evaluate(values))
    if not isinstance(given, list):
        raise FigureError(f"mask gives {given!r}, not a matrix of 0 and 1 (a list of rows)")
    rows = given if given and isinstance(given[0], list) else [given]
    out: list[list[bool]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, list):
            raise FigureError(f"mask: row {i + 1} is {row!r}, not a list")
        out.append([_masked(entry, i, j) for j, entry in enumerate(row)])
    return out


def _masked(entry: Any, i: int, j: int) -> bool:
    """A mask entry as a flag: 1 or true masked, 0 or false not; anything else is a mistake (a 0.5
    would be a weight written where the mask was meant)."""
    if isinstance(entry, bool):
        return entry
    if isinstance(entry, int | float) and entry in (0, 1):
        return entry == 1
    raise FigureError(
        f"mask: the entry at row {i + 1}, column {j + 1} is {entry!r}, not 0 or 1 (or true/false)"
    )


def _labels(templates: tuple[Text, ...] | None, count: int, values: Mapping[str, Value]) -> list[str]:
    if templates is None:
        return [str(n) for n in range(1, count + 1)]
    return [template.render(values) for template in templates]


def _line_plot(recipe: LinePlotRecipe, values: Mapping[str, Value]) -> LinePlot:
    x_value = recipe.x.evaluate(values)
    xs = to_python(x_value)
    if not isinstance(xs, list):
        raise FigureError(f"x gives {xs!r}, not a list of x values")
    with_x = {**values, X_NAME: x_value}
    series = []
    for label, y in recipe.series:
        ys = to_python(y.evaluate(with_x))
        if not isinstance(ys, list):  # a constant curve: the same value at every x
            ys = [ys] * len(xs)
        series.append(Series(label.render(values), ys))
    texts = {name: template.render(values) for name, template in recipe.texts.items()}
    return LinePlot(
        x=xs,
        series=series,
        title=texts["title"],
        caption=texts["caption"],
        x_label=texts["x_label"],
        y_label=texts["y_label"],
        where=recipe.where,
    )


__all__ = ["CAUSAL", "X_NAME", "HeatmapRecipe", "LinePlotRecipe", "Recipe", "compile_figures", "draw"]
