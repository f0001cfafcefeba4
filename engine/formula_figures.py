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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from attnquiz.engine.expressions import Expression, ExpressionError, Value, to_python
from attnquiz.engine.figures import Figure, FigureError, Heatmap, LinePlot, Series, Where
from attnquiz.engine.schema import FormulaHeatmap, FormulaLinePlot

Loc = tuple[str | int, ...]
X_NAME = "x"
"""The name under which a curve's ``y`` expression sees the x values."""


class Text(Protocol):
    """A compiled template (`attnquiz.engine.formula.Template`): text with placeholders."""

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
    return Heatmap(
        values=rows,
        rows=_labels(recipe.rows, len(rows), values),
        cols=_labels(recipe.cols, len(rows[0]) if rows and isinstance(rows[0], list) else 0, values),
        title=texts["title"],
        caption=texts["caption"],
        row_title=texts["row_title"],
        col_title=texts["col_title"],
        decimals=recipe.decimals,
        where=recipe.where,
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


__all__ = ["X_NAME", "HeatmapRecipe", "LinePlotRecipe", "Recipe", "compile_figures", "draw"]
