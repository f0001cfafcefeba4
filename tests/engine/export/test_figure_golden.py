"""Golden files of a heatmap (and a line plot) in each format: terminal text, SVG, Typst, Markdown."""

from __future__ import annotations

import re

import pytest

from attnquiz.engine.export.figures import markdown as figure_markdown
from attnquiz.engine.export.figures import svg as figure_svg
from attnquiz.engine.export.figures import text as figure_text
from attnquiz.engine.export.figures import typst as figure_typst
from attnquiz.engine.figures import Heatmap, LinePlot, Series
from attnquiz.terminal import to_ascii
from tests.engine.export.golden import check_golden

WEIGHTS = Heatmap(
    values=[[1.0, 0.0, 0.0], [0.731, 0.269, 0.0], [0.422, 0.155, 0.423]],
    rows=["The", "animal", "it"],
    cols=["The", "animal", "it"],
    title="Causal attention weights",
    caption="Grey: a later word, hidden by the mask.",
    row_title="query",
    col_title="key",
    mask=[[False, True, True], [False, False, True], [False, False, False]],
    masked_text="0",
    low=0.0,
    high=1.0,
    decimals=3,
)

CURVES = LinePlot(
    x=[0.0, 1.0, 2.0, 3.0, 4.0],
    series=[
        Series("dim 0 (sin)", [0.0, 0.841, 0.909, 0.141, -0.757]),
        Series("dim 1 (cos)", [1.0, 0.54, -0.416, -0.99, -0.654]),
    ],
    title="Sinusoidal encoding, d_model = 4",
    x_label="position",
    y_label="PE value",
)


def ascii_spelling(text: str) -> str:
    return to_ascii(text.translate(figure_text.BOX_ASCII))


@pytest.mark.parametrize("width", [80, 40])
def test_heatmap_in_the_terminal(width: int) -> None:
    check_golden(f"figure-heatmap-{width}.txt", figure_text.plain_text(WEIGHTS, width) + "\n")


def test_heatmap_in_an_ascii_terminal_at_40_columns() -> None:
    text = figure_text.plain_text(WEIGHTS, 40, ascii_spelling) + "\n"
    assert text.isascii()
    check_golden("figure-heatmap-40-ascii.txt", text)


def test_line_plot_in_the_terminal() -> None:
    check_golden("figure-line-80.txt", figure_text.plain_text(CURVES, 80) + "\n")
    ascii_text = figure_text.plain_text(CURVES, 40, ascii_spelling) + "\n"
    assert ascii_text.isascii()
    check_golden("figure-line-40-ascii.txt", ascii_text)


def test_heatmap_as_svg() -> None:
    check_golden("figure-heatmap.svg", figure_svg.svg_file(WEIGHTS).decode("utf-8"))


def test_line_plot_as_svg() -> None:
    check_golden("figure-line.svg", figure_svg.svg_file(CURVES).decode("utf-8"))


def test_heatmap_and_line_plot_as_typst() -> None:
    check_golden("figure-heatmap.typ", figure_typst.figure(WEIGHTS))
    check_golden("figure-line.typ", figure_typst.figure(CURVES))


def test_heatmap_and_line_plot_as_markdown() -> None:
    check_golden("figure-heatmap.md", figure_markdown.figure(WEIGHTS) + "\n")
    check_golden("figure-line.md", figure_markdown.figure(CURVES) + "\n")


def test_a_wide_heatmap_is_cut_into_blocks_that_fit_40_columns() -> None:
    wide = Heatmap(
        values=[[i / 10 + j / 100 for j in range(9)] for i in range(3)],
        rows=["q1", "q2", "q3"],
        cols=[f"key number {j}" for j in range(9)],
        decimals=2,
    )
    lines = figure_text.plain_text(wide, 40).splitlines()
    assert max(len(line) for line in lines) <= 40
    assert sum(1 for line in lines if line.startswith("q1")) == 3  # three blocks of three columns
    assert "key num…" in lines[0]


MATHS = LinePlot(
    x=[0.0, 4.0, 8.0, 12.0],
    series=[
        Series(r"without $1/\sqrt{d_k}$", [0.5, 0.8, 0.95, 0.99]),
        Series(r"with $1/\sqrt{d_k}$", [0.5, 0.5, 0.5, 0.5]),
    ],
    title=r"Largest weight as $d_k$ grows, $d_{\text{model}} = 512$",
    caption=r"$d_k = 64$ is at $\log_2 d_k = 6$; a price of \$5 stays a dollar.",
    x_label=r"$\log_2 d_k$",
    y_label=r"largest $\alpha_{ij}$",
)
MATHS_MAP = Heatmap(
    values=[[0.7, 0.3], [0.2, 0.8]],
    rows=["$q_1$", "$q_2$"],
    cols=["$k_1$", "$k_2$"],
    title=r"Weights $\operatorname{softmax}(QK^\top/\sqrt{d_k})$",
    row_title="query",
    col_title="key",
)


def test_figure_text_is_typeset_in_every_format() -> None:
    """Titles, axis labels, legends, row labels and captions: the prompts' maths, per format."""
    from attnquiz.engine.export.pdf import typst
    from attnquiz.engine.export.pdf.worksheets import compile_typst

    source = figure_typst.figure(MATHS, typst.figure_text) + figure_typst.figure(MATHS_MAP, typst.figure_text)
    check_golden("figure-maths.typ", source)
    assert "attach(d, b: k)" in source
    assert "sqrt(" in source
    assert "d_k" not in source
    assert compile_typst(source).startswith(b"%PDF")
    svg = figure_svg.svg_file(MATHS).decode("utf-8") + figure_svg.svg_file(MATHS_MAP).decode("utf-8")
    check_golden("figure-maths.svg", svg)
    assert "without 1/√dₖ" in svg
    assert "log₂ dₖ" in svg
    assert "$" not in svg.replace("$5", "")
    terminal = figure_text.plain_text(MATHS, 80) + "\n\n" + figure_text.plain_text(MATHS_MAP, 80) + "\n"
    check_golden("figure-maths-80.txt", terminal)
    assert "dₖ" in terminal
    assert "d_k" not in terminal
    ascii_text = figure_text.plain_text(MATHS, 40, ascii_spelling) + "\n"
    assert ascii_text.isascii()
    check_golden("figure-maths-40-ascii.txt", ascii_text)
    check_golden(
        "figure-maths.md", figure_markdown.figure(MATHS) + "\n\n" + figure_markdown.figure(MATHS_MAP) + "\n"
    )


def test_figure_text_outside_the_maths_subset_is_refused() -> None:
    from attnquiz.engine.figures import FigureError

    with pytest.raises(FigureError, match="frack"):
        LinePlot(x=[0, 1], series=[Series("a", [0, 1])], title=r"$\frack{1}{2}$")
    with pytest.raises(FigureError, match="unmatched"):
        LinePlot(x=[0, 1], series=[Series("a", [0, 1])], x_label="costs $5")


def test_a_bar_inside_a_labels_maths_never_splits_a_markdown_cell() -> None:
    bars = Heatmap(values=[[1.0, 0.5]], rows=["$a|b$"], cols=["$P(x|y)$", "$|k|$"])
    lines = figure_markdown.figure(bars).splitlines()
    assert all(len(re.split(r"(?<!\\)\|", line)) == 5 for line in lines if line.startswith("|"))
    assert r"$P(x\mid y)$" in lines[0]
