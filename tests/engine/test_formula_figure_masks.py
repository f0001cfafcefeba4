"""``mask:`` of a YAML heatmap (the causal mask, or a matrix an expression gives): the same figure a
plugin builds with ``Heatmap(mask=...)``, and drawn masked in every format: the terminal, its plain
(spoken) form, SVG, Typst (PDF), HTML with its table, Markdown and JSON."""

from __future__ import annotations

import re

import pytest

from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.export.figures import markdown as figure_markdown
from attnquiz.engine.export.figures import svg as figure_svg
from attnquiz.engine.export.figures import table as figure_table
from attnquiz.engine.export.figures import text as figure_text
from attnquiz.engine.export.figures import typst as figure_typst
from attnquiz.engine.export.text import html
from attnquiz.engine.figures import Heatmap, figure_json
from attnquiz.figure_terminal import value_lines

BANK = """\
bank: masks
title: Masks
items:
  - id: causal-scores
    kind: formula
    source: "Guide example"
    topic: masked-attention
    params:
      t: {range: [2, 5]}
      a: {range: [1, 3]}
    prompt: "How many of the {{t^2}} scores of a causal mask over {{t}} tokens are kept?"
    answer: {kind: integer, value: "t*(t+1)/2"}
    solution: ["Row $i$ keeps $i$ keys: ${{t*(t+1)/2}}$."]
    figures:
      - kind: heatmap
        where: prompt
        values: "SCORES"
        row_title: query
        col_title: key
        mask: causal
        title: "Scores, causal mask"
      - kind: heatmap
        values: "[[1, 0], [1/(1 + exp(a)), exp(a)/(1 + exp(a))]]"
        mask: "[[0, 1], [false, a < 0]]"
        masked_text: ""
        decimals: 3
        title: "Weights"
""".replace(
    # The score a*(i - j) of query i and key j, written out: negative for a key after its query.
    "SCORES",
    "[" + ", ".join("[" + ", ".join(f"a*({i} - {j})" for j in range(5)) + "]" for i in range(5)) + "]",
)


def figures(seed: int) -> tuple[Heatmap, Heatmap]:
    question = load_bank_text(BANK, "masks.yaml").get("causal-scores").question(seed)
    scores, weights = question.variant.figures
    assert isinstance(scores, Heatmap)
    assert isinstance(weights, Heatmap)
    return scores, weights


CAUSAL_5 = [[j > i for j in range(5)] for i in range(5)]


@pytest.mark.parametrize("seed", range(8))
def test_a_causal_mask_is_the_figure_a_plugin_would_build(seed: int) -> None:
    scores, weights = figures(seed)
    assert scores.mask == tuple(tuple(row) for row in CAUSAL_5)
    # Equal, field for field, to the figure a plugin writes by hand: every writer draws both alike
    # (the golden files of tests/engine/export/test_figure_golden.py hold how).
    assert scores == Heatmap(
        values=scores.values,
        rows=[str(n) for n in range(1, 6)],
        cols=[str(n) for n in range(1, 6)],
        title="Scores, causal mask",
        row_title="query",
        col_title="key",
        mask=CAUSAL_5,
        where="prompt",
    )
    assert weights.mask == ((False, True), (False, False))
    assert weights.masked_text == ""
    # The shading spans the cells kept: the masked ones (a key after its query, negative here) are left out.
    assert scores.bounds() == (0.0, max(max(row) for row in scores.values))
    assert min(min(row) for row in scores.values) < 0


def cells(figure: Heatmap) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i in range(len(figure.values))
        for j in range(len(figure.values[0]))
        if figure.is_masked(i, j)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_every_format_draws_the_masked_cells(seed: int) -> None:
    scores, weights = figures(seed)
    for figure in (scores, weights):
        masked = cells(figure)
        shown = figure.masked_text
        # Terminal: the masked text in each masked cell's place, on the grey of a masked cell.
        lines = figure_text.figure_lines(figure, 80)
        grey = [text for line in lines for text, look in line if look.bg == "#d9d9d9"]
        assert len(grey) == len(masked)
        assert all(text.strip() == shown for text in grey)
        # SVG: a grey rectangle per masked cell.
        svg = figure_svg.svg(figure)
        assert svg.count('fill="#d9d9d9"') == len(masked)
        # Typst (the PDF): a grey cell per masked cell, its text the masked text.
        typst = figure_typst.figure(figure)
        assert typst.count('fill: rgb("#d9d9d9")') == len(masked), typst
        # Markdown: the masked text in the table.
        table = [line for line in figure_markdown.heatmap(figure) if line.startswith("| **")]
        for i, j in masked:
            assert table[i].split("|")[j + 2].strip() == shown
        # HTML's table of values and the description a screen reader reads.
        table_html = figure_table.table_html(figure)
        assert table_html.count(f"<td>{shown}</td>") >= len(masked)
        described = figure_table.description(figure)
        count = f"{len(masked)} masked cell{'s' if len(masked) != 1 else ''}"
        assert count + (f" shown as {shown}" if shown else " left blank") in described
        # Spoken (quiz --plain): a blank masked cell is said to be masked, never "is ;".
        spoken = "\n".join(value_lines(figure))
        assert " is ;" not in spoken
        assert " is ." not in spoken
        assert spoken.count(" is masked") == (len(masked) if not shown else 0)
        # JSON: the mask as data.
        data = figure_json(figure)
        assert [[bool(m) for m in row] for row in data["mask"]] == [
            [figure.is_masked(i, j) for j in range(len(row))] for i, row in enumerate(data["mask"])
        ]


def test_html_export_carries_the_masked_figure() -> None:
    question = load_bank_text(BANK, "masks.yaml").get("causal-scores").question(1)
    [fragment] = html.figures(question, "prompt")
    assert "10 masked cells shown as −∞" in fragment
    assert re.search(r"<td>−∞</td>", fragment)


@pytest.mark.parametrize(
    ("mask", "expected"),
    [
        ("causal", ((False, True), (False, False))),
        ('"[[1, 0], [0, 1]]"', ((True, False), (False, True))),
        ('"[[true, false], [false, false]]"', ((True, False), (False, False))),
        ('"[[a > 99, a > 0], [0, 0]]"', ((False, True), (False, False))),
        ('"[[0, 0], [1, 0]]"', ((False, False), (True, False))),
    ],
)
def test_a_mask_expression_of_the_parameters(mask: str, expected: tuple[tuple[bool, ...], ...]) -> None:
    text = f"""\
bank: m
title: M
items:
  - id: two
    kind: formula
    source: s
    topic: t
    params:
      a: {{range: [1, 3]}}
    prompt: "a is {{{{a}}}}."
    answer: {{value: "a"}}
    solution: ["{{{{a}}}}"]
    figures:
      - kind: heatmap
        values: "[[a, 1], [2, a]]"
        mask: {mask}
"""
    [figure] = load_bank_text(text, "m.yaml").get("two").question(0).variant.figures
    assert isinstance(figure, Heatmap)
    assert figure.mask == expected


def test_one_row_takes_a_flat_mask() -> None:
    text = BANK.split("    figures:")[0] + (
        '    figures:\n      - kind: heatmap\n        values: "[1, 2, 3]"\n        mask: "[0, 0, 1]"\n'
    )
    [figure] = load_bank_text(text, "m.yaml").get("causal-scores").question(0).variant.figures
    assert isinstance(figure, Heatmap)
    assert figure.mask == ((False, False, True),)
