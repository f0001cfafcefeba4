"""Figures (engine/figures.py): checked when built, as data in JSON, and escaped by every renderer."""

from __future__ import annotations

import itertools
import json
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from attnquiz.engine.answers.kinds import NumericAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.export.figures import markdown as figure_markdown
from attnquiz.engine.export.figures import svg as figure_svg
from attnquiz.engine.export.figures import text as figure_text
from attnquiz.engine.export.figures import typst as figure_typst
from attnquiz.engine.export.pdf.worksheets import compile_typst
from attnquiz.engine.figures import (
    MAX_POINTS,
    FigureError,
    Heatmap,
    LinePlot,
    Series,
    axis,
    figure_json,
    format_value,
    plain,
    ticks,
)
from attnquiz.engine.variant import Variant

INF = float("inf")
NAN = float("nan")


def heatmap(**changes: Any) -> Heatmap:
    fields: dict[str, Any] = {
        "values": [[0.5, 0.5], [0.1, 0.9]],
        "rows": ["a", "b"],
        "cols": ["c", "d"],
    }
    fields.update(changes)
    return Heatmap(**fields)


BAD_HEATMAPS = [
    ({"values": []}, "no values"),
    ({"values": [[]]}, "no values"),
    ({"values": [[NAN, 1.0], [0.0, 1.0]]}, "not a number"),
    ({"values": [[INF, 1.0], [0.0, 1.0]]}, "row 1, column 1 is inf (only a masked cell"),
    ({"values": [[1.0, 2.0], [0.0, -INF]]}, "row 2, column 2 is -inf"),
    ({"values": [[1e13, 2.0], [0.0, 1.0]]}, "too large to draw"),
    ({"values": [["x", 2.0], [0.0, 1.0]]}, "'x' is not a number"),
    ({"values": [[True, 2.0], [0.0, 1.0]]}, "True is not a number"),
    ({"values": [[1.0, 2.0], [0.0]]}, "rows of different lengths"),
    ({"values": [[0.0] * 17] * 2, "cols": ["c"] * 17}, "2×17 values is too big to read (at most 16×16)"),
    ({"values": [[0.0]] * 17, "rows": ["r"] * 17, "cols": ["c"]}, "17×1 values is too big"),
    ({"rows": ["a"]}, "1 row labels for 2 rows"),
    ({"cols": ["a", "b", "c"]}, "3 column labels for 2 columns"),
    ({"rows": ["a", 3]}, "row label must be text, not int"),
    ({"rows": ["a", "x" * 41]}, "row label is 41 characters long (at most 40)"),
    ({"title": "t\x1b[31m"}, "holds a control character"),
    ({"caption": "line\nbreak"}, "holds a control character"),
    ({"title": "t" * 201}, "title is 201 characters long (at most 200)"),
    ({"mask": [[True, False]]}, "the mask must have the shape of the values (2×2)"),
    ({"decimals": 5}, "decimals must be an integer from 0 to 4"),
    ({"decimals": 1.5}, "decimals must be an integer"),
    ({"low": 1.0, "high": 1.0}, "low (1.0) must be below high (1.0)"),
    ({"low": NAN}, "not a number"),
    ({"where": "margin"}, "where must be 'prompt' or 'solution'"),
    ({"values": "ab"}, "expected a list, not str"),
]


@pytest.mark.parametrize(("changes", "message"), BAD_HEATMAPS)
def test_a_bad_heatmap_is_refused_with_a_clear_message(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(FigureError) as caught:
        heatmap(title=changes.pop("title", "Weights"), **changes)
    assert message in str(caught.value)
    assert str(caught.value).startswith("heatmap")


def test_a_masked_cell_may_hold_minus_infinity_and_json_writes_null() -> None:
    figure = heatmap(values=[[0.0, -INF], [0.0, 0.0]], mask=[[False, True], [False, False]])
    data = figure_json(figure)
    assert data["values"] == [[0.0, None], [0.0, 0.0]]
    assert data["mask"] == [[False, True], [False, False]]
    json.dumps(data, allow_nan=False)  # strict JSON: no Infinity
    assert figure.cell_text(0, 1) == "−∞"
    assert figure.bounds() == (0.0, 0.0)


def x_values(n: int) -> list[float]:
    return [float(i) for i in range(n)]


BAD_PLOTS = [
    ({"x": [0.0]}, "needs at least 2 x values"),
    ({"x": x_values(MAX_POINTS + 1)}, f"{MAX_POINTS + 1} x values is too many (at most {MAX_POINTS})"),
    ({"x": [0.0, 2.0, 1.0]}, "the x values must increase"),
    ({"x": [0.0, 0.0, 1.0]}, "the x values must increase"),
    ({"x": [0.0, NAN, 1.0]}, "not a number"),
    ({"series": []}, "no series"),
    ({"series": [Series("s", [0.0, 1.0, 2.0])] * 9}, "9 series is too many (at most 8)"),
    ({"series": [Series("s", [0.0, 1.0])]}, "series 's' has 2 values for 3 x values"),
    ({"series": [("s", [0.0, 1.0, 2.0])]}, "a series must be a Series, not tuple"),
]


@pytest.mark.parametrize(("changes", "message"), BAD_PLOTS)
def test_a_bad_line_plot_is_refused_with_a_clear_message(changes: dict[str, Any], message: str) -> None:
    fields: dict[str, Any] = {"x": [0.0, 1.0, 2.0], "series": [Series("s", [0.0, 1.0, 0.5])]}
    fields.update(changes)
    with pytest.raises(FigureError, match=re.escape(message)):
        LinePlot(**fields, title="PE")


@pytest.mark.parametrize("value", [INF, -INF, NAN])
def test_a_series_value_must_be_finite(value: float) -> None:
    with pytest.raises(FigureError, match="series 's'"):
        Series("s", [0.0, value])


def test_a_variant_checks_its_figures_and_a_generator_bug_names_them() -> None:
    answer = NumericAnswer(1.0, Tolerance.decimals(2))
    variant = Variant(prompt="p", answer=answer, solution=["s"], figures=[heatmap()])
    assert variant.figures == (heatmap(),)
    with pytest.raises(FigureError, match="a figure must be a Heatmap or a LinePlot, not dict"):
        Variant(prompt="p", answer=answer, solution=["s"], figures=[{"kind": "heatmap"}])  # type: ignore[list-item]


def test_figure_json_is_the_contract_a_script_draws_from() -> None:
    figure = heatmap(title="W", caption="c", row_title="query", col_title="key", decimals=3, where="prompt")
    assert figure_json(figure) == {
        "kind": "heatmap",
        "where": "prompt",
        "title": "W",
        "caption": "c",
        "rows": ["a", "b"],
        "cols": ["c", "d"],
        "row_title": "query",
        "col_title": "key",
        "values": [[0.5, 0.5], [0.1, 0.9]],
        "mask": None,
        "decimals": 3,
        "masked_text": "−∞",
        "low": 0.1,
        "high": 0.9,
    }
    plot = LinePlot([0.0, 1.0], [Series("sin", [0.0, 0.84])], title="PE", x_label="pos", y_label="v")
    assert figure_json(plot) == {
        "kind": "line",
        "where": "solution",
        "title": "PE",
        "caption": "",
        "x_label": "pos",
        "y_label": "v",
        "x": [0.0, 1.0],
        "series": [{"label": "sin", "values": [0.0, 0.84]}],
    }


@pytest.mark.parametrize(
    ("value", "decimals", "text"),
    [(0.125, 2, "0.12"), (-0.001, 2, "0.00"), (-1.5, 1, "−1.5"), (3.0, 0, "3"), (0.98765, 4, "0.9877")],
)
def test_values_print_at_the_stated_precision_with_a_true_minus(
    value: float, decimals: int, text: str
) -> None:
    assert format_value(value, decimals) == text


@pytest.mark.parametrize(("low", "high"), [(-1.0, 1.0), (0.0, 0.87), (0.0, 63.0), (-0.3, 1.2), (0.45, 0.99)])
def test_ticks_are_round_and_the_axis_covers_the_data(low: float, high: float) -> None:
    inner = ticks(low, high)
    assert 2 <= len(inner) <= 7
    steps = {round(b - a, 9) for a, b in itertools.pairwise(inner)}
    assert len(steps) == 1
    step = steps.pop()
    assert any(math.isclose(step, m * 10 ** math.floor(math.log10(step))) for m in (1, 2, 5))
    bottom, top, labelled = axis(low, high)
    assert bottom <= low
    assert top >= high
    assert labelled[0] <= low + (high - low) * 0.02 + 1e-12


# ---------------------------------------------------------------------------------------------
# Hostile labels: every renderer escapes them
# ---------------------------------------------------------------------------------------------

HOSTILE = [
    '<script>alert("x")</script>',
    "]]><x>&amp;",
    '#import "x": *',
    '\\" ) #panic(',
    "$x$ *bold* _u_ | pipe",
    "@@PLUGINFILE@@/../x",
    "`code` [link](javascript:x)",
]


def hostile_figures(label: str) -> list[Heatmap | LinePlot]:
    short = label[:24]
    return [
        Heatmap(
            values=[[0.25, 0.75], [1.0, 0.0]],
            rows=[short, "b"],
            cols=["c", short],
            title=label,
            caption=label,
            row_title=label,
            col_title=label,
            mask=[[False, False], [False, True]],
            masked_text=short[:8],
        ),
        LinePlot(
            [0.0, 1.0, 2.0],
            [Series(short, [0.0, 1.0, 0.5]), Series("b", [1.0, 0.0, 0.5])],
            title=label,
            caption=label,
            x_label=label,
            y_label=label,
        ),
    ]


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(node.itertext()) for node in root.iter() if node.tag.endswith(("text", "title"))]


@pytest.mark.parametrize("label", HOSTILE)
def test_svg_escapes_every_label_and_holds_no_script(label: str) -> None:
    for figure in hostile_figures(label):
        svg = figure_svg.svg(figure)
        assert "<script" not in svg
        shown = plain(label)  # figure text's $...$ is maths, drawn as Unicode
        assert shown in svg_texts(svg) or plain(label[:24]) in svg_texts(svg)
        assert ET.fromstring(figure_svg.svg_file(figure)) is not None
        html = figure_svg.html_figure(figure)
        assert "<script>" not in html


@pytest.mark.parametrize("label", HOSTILE)
def test_typst_shows_every_label_as_text(label: str) -> None:
    source = "\n".join(figure_typst.figure(f) for f in hostile_figures(label))
    assert f'"{label}"' not in source or '"' not in label  # quotes inside a label are escaped
    literal = figure_typst.string(label)
    assert literal[0] == literal[-1] == '"'
    compile_typst(source)  # a label that became markup or code would fail to compile (or run)


@pytest.mark.parametrize("label", HOSTILE)
def test_markdown_escapes_every_label(label: str) -> None:
    for figure in hostile_figures(label):
        text = figure_markdown.figure(figure)
        assert "<script>" not in text  # escaped as \<script\>
        assert not re.search(r"(?<!\\)\]\(", text)  # no link can form: its brackets are escaped
        for line in text.splitlines():
            if line.startswith("|"):
                cells = re.split(r"(?<!\\)\|", line)[1:-1]
                width = len(figure.values[0]) + 1 if isinstance(figure, Heatmap) else len(figure.series) + 1
                assert len(cells) == width, line  # a pipe in a label never splits a cell


@pytest.mark.parametrize("label", HOSTILE)
def test_the_terminal_layout_keeps_every_label_as_text(label: str) -> None:
    for figure in hostile_figures(label):
        for width in (40, 80):
            text = "\n".join("".join(t for t, _ in line) for line in figure_text.figure_lines(figure, width))
            assert plain(label)[:12] in text.replace("\n", "") or "…" in text


@pytest.mark.parametrize("label", ["\u202eevil", "x\u200by", "bell\x07", "esc\x1b[2J"])
def test_a_label_with_a_control_or_bidi_character_is_refused(label: str) -> None:
    with pytest.raises(FigureError, match="holds a control character"):
        hostile_figures(label)


@pytest.mark.parametrize("seed", range(40))
def test_a_heatmaps_shading_range_is_its_unmasked_extremes_or_its_given_ends(seed: int) -> None:
    import random

    draw = random.Random(seed)
    rows, cols = draw.randint(1, 6), draw.randint(1, 6)
    values = [[draw.uniform(-5, 5) for _ in range(cols)] for _ in range(rows)]
    mask = [[draw.random() < 0.3 for _ in range(cols)] for _ in range(rows)] if seed % 2 else None
    given = -10.0 if seed % 3 == 0 else None
    figure = Heatmap(
        values, [f"r{i}" for i in range(rows)], [f"c{j}" for j in range(cols)], mask=mask, low=given
    )
    seen = [v for i, row in enumerate(values) for j, v in enumerate(row) if not (mask and mask[i][j])]
    low = given if given is not None else min(seen, default=0.0)
    high = max(seen, default=1.0)
    assert figure.bounds() == (low, high)
    for i in range(rows):
        for j in range(cols):
            expected = 0.5 if high <= low else min(1.0, max(0.0, (values[i][j] - low) / (high - low)))
            assert figure.shade(i, j) == expected
