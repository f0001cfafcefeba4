"""Every figure kind carries its data for a reader who cannot see it (issue 31): in the HTML export and
`quiz serve` a description and the values as a table in the figure's caption; in Moodle and QTI an
alternative text and the same table after the image. The tables are read back from the files the
exports write and compared with the figure's own data (not with the code that wrote them)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.figures import svg as figure_svg
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.text import html
from attnquiz.engine.figures import Figure, Heatmap, LinePlot, Series, plain
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.variant import Question

# Each figure kind: a heatmap (week1), a masked heatmap and a line plot (week2).
ITEMS = {"week1": ["it-referent-weight", "unscaled-saturation"], "week2": ["causal-mask-matrix", "pe-pair"]}
SEED = 3


@dataclass
class Table:
    caption: str = ""
    rows: list[list[tuple[str, str]]] = field(default_factory=list)  # (tag, text) per cell


class Reader(HTMLParser):
    """The tables (caption, cells with th/td) and the images' alt texts of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self.alts: list[str] = []
        self.descriptions: list[str] = []
        self._cell: list[str] | None = None
        self._tag = ""
        self._in_caption = False
        self._in_description = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "img":
            self.alts.append(named.get("alt") or "")
        elif tag == "table":
            self.tables.append(Table())
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr":
            self.tables[-1].rows.append([])
        elif tag in ("th", "td"):
            self._cell, self._tag = [], tag
        elif tag == "span" and named.get("class") == "figure-description":
            self._in_description = True
            self.descriptions.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            self.tables[-1].rows[-1].append((self._tag, "".join(self._cell).strip()))
            self._cell = None
        elif tag == "caption":
            self._in_caption = False
        elif tag == "span":
            self._in_description = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption:
            self.tables[-1].caption += data
        elif self._in_description:
            self.descriptions[-1] += data


def read(fragment: str) -> Reader:
    reader = Reader()
    reader.feed(fragment)
    reader.close()
    return reader


def number(text: str) -> float:
    return float(text.replace("−", "-"))


def check_table(table: Table, figure: Figure) -> None:
    """The table holds the figure's data: every cell of a heatmap as printed, or a line plot's points."""
    assert table.caption == f"Values of {plain(figure.title)}"
    head, *body = table.rows
    assert all(tag == "th" for tag, _ in head)
    assert all(row[0][0] == "th" and all(tag == "td" for tag, _ in row[1:]) for row in body)
    if isinstance(figure, Heatmap):
        assert [text for _, text in head[1:]] == [plain(c) for c in figure.cols]
        assert [row[0][1] for row in body] == [plain(r) for r in figure.rows]
        for i, row in enumerate(body):
            for j, (_, text) in enumerate(row[1:]):
                value = figure.values[i][j]
                if figure.mask is not None and figure.mask[i][j]:
                    assert text == figure.masked_text
                else:
                    assert text == f"{value:.{figure.decimals}f}".replace("-", "−").replace("−0.00", "0.00")
        return
    assert [text for _, text in head[1:]] == [plain(s.label) for s in figure.series]
    xs = [number(row[0][1]) for row in body]
    assert xs[0] == figure.x[0]
    assert xs[-1] == pytest.approx(figure.x[-1])
    assert len(body) == len(figure.x) or 2 <= len(body) <= 25
    for row, x in zip(body, xs, strict=True):
        (n,) = [k for k, v in enumerate(figure.x) if abs(v - x) < 5e-4]
        for series, (_, text) in zip(figure.series, row[1:], strict=True):
            assert number(text) == pytest.approx(series.values[n], abs=5e-4)


def questions() -> list[tuple[Question, Figure]]:
    found = []
    for key, items in ITEMS.items():
        plan = plan_practice(banks.load(key), seed=SEED, items=items, count=len(items))
        for planned in plan.questions:
            question = planned.build()
            found += [(question, f) for f in question.variant.figures]
    return found


def test_every_figure_kind_is_covered() -> None:
    drawn = [f for _, f in questions()]
    assert any(isinstance(f, Heatmap) and f.mask is None for f in drawn)
    assert any(isinstance(f, Heatmap) and f.mask is not None for f in drawn)
    assert any(isinstance(f, LinePlot) and len(f.x) > 25 for f in drawn)


def test_html_figures_carry_a_description_and_their_values_as_a_table() -> None:
    for question, figure in questions():
        drawn = html.figures(question, figure.where)
        (fragment,) = [d for d in drawn if f"Values of {escape(plain(figure.title), quote=False)}<" in d]
        reader = read(fragment)
        (table,) = reader.tables
        check_table(table, figure)
        (description,) = reader.descriptions
        kind = "Heatmap" if isinstance(figure, Heatmap) else "Line plot"
        assert description.startswith(kind)
        # Inside the figure's own caption: the figure and its table are one element for a reader.
        assert fragment.index("<figcaption>") < fragment.index("<table") < fragment.index("</figcaption>")


def test_a_heatmap_description_names_its_size_range_and_masked_cells() -> None:
    figure = Heatmap(
        values=[[1.5, float("-inf")], [-0.25, 2.0]],
        rows=["a", "b"],
        cols=["x", "y"],
        row_title="query",
        col_title="key",
        mask=[[False, True], [False, False]],
        title="Scores",
    )
    (table,) = read(figure_svg.html_figure(figure)).tables
    check_table(table, figure)
    (description,) = read(figure_svg.html_figure(figure)).descriptions
    assert description == (
        "Heatmap of 2 rows (query) by 2 columns (key), values from −0.25 to 2.00; 1 masked cell shown as −∞."
    )


def test_hostile_labels_are_escaped_in_the_table() -> None:
    figure = LinePlot(
        x=[0, 1, 2],
        series=[Series("<b>s</b>", [0, 1, 2])],
        title="a < b & c",
        x_label='x "quoted"',
    )
    fragment = figure_svg.html_figure(figure)
    assert "<b>" not in fragment
    (table,) = read(fragment).tables
    check_table(table, figure)


def _plan(key: str) -> ClassPlan:
    """A plan of one variant of the figure items of ``key``: the very questions `questions` draws."""
    plan = plan_practice(banks.load(key), seed=SEED, items=ITEMS[key], count=len(ITEMS[key]))
    built = tuple(planned.build() for planned in plan.questions)
    return ClassPlan(key, key, SEED, tuple(q.item_id for q in built), (Sheet(1, SEED, "A", built),))


def _check_lms_text(texts: list[str], key: str) -> None:
    """Every figure of every item is an image with an alt text that names it, then its table."""
    reader = read("".join(texts))
    figures = [f for q, f in questions() if q.item_id in ITEMS[key]]
    assert figures
    for figure in figures:
        (table,) = [t for t in reader.tables if t.caption == f"Values of {plain(figure.title)}"]
        check_table(table, figure)
        (alt,) = [a for a in reader.alts if a.startswith(f"{plain(figure.title)}. ")]
        assert ("Heatmap of " if isinstance(figure, Heatmap) else "Line plot of ") in alt
    for text in texts:
        if "<img" in text:
            assert text.index("<img") < text.index('<table class="figure-table">')


@pytest.mark.parametrize("key", sorted(ITEMS))
def test_moodle_puts_the_table_after_each_figure(key: str) -> None:
    root = ET.fromstring(moodle.build(_plan(key)).text.encode("utf-8"))
    _check_lms_text([node.text or "" for node in root.iter("text")], key)


@pytest.mark.parametrize("key", sorted(ITEMS))
def test_qti_puts_the_table_after_each_figure(key: str) -> None:
    texts: list[str] = []
    with zipfile.ZipFile(io.BytesIO(qti.package(_plan(key)).data)) as package:
        for name in package.namelist():
            if name.endswith(".xml") and "/" in name and not name.endswith("assessment_meta.xml"):
                root = ET.fromstring(package.read(name))
                texts += [node.text or "" for node in root.iter() if node.tag.endswith("mattext")]
    _check_lms_text(texts, key)
