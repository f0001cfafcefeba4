"""A figure's accessible equivalent: a one-sentence description and its values as a real HTML table.

A drawn figure tells a sighted reader its numbers; a screen reader gets only the image's name. So
every figure also carries what a reader of its data needs (WCAG 2.1 1.1.1, 1.3.1): `description`
says what kind of figure it is, its size, what the rows, columns or axes are and the range of its
values; `table_html` is the data itself, a ``<table>`` with a caption and row and column headers
(a heatmap's matrix cell for cell as printed in the figure, a masked cell with its mask text; a
line plot one row per x value shown, one column per curve). HTML pages and `quiz serve` show the
table on request under the figure (`details_html`); Moodle and QTI put it after the image.

Every text is escaped for HTML here; figure text is plain text (`figures.plain` writes its maths
in Unicode).
"""

from __future__ import annotations

from html import escape

from attnquiz.engine.figures import Figure, Heatmap, LinePlot, corner_text, format_value, plain

MAX_ROWS = 25
"""A line plot's table has at most this many rows (its whole x values when there are few enough,
else evenly spaced points with the first and last): a table a listener can still go through."""


def shown_points(figure: LinePlot) -> list[int]:
    """The indices of the x values a line plot's table lists (all of them when they fit)."""
    count = len(figure.x)
    if count <= MAX_ROWS:
        return list(range(count))
    whole = [n for n, x in enumerate(figure.x) if float(x).is_integer()]
    if 2 <= len(whole) <= MAX_ROWS and whole[0] == 0 and whole[-1] == count - 1:
        return whole
    return sorted({round(k * (count - 1) / (MAX_ROWS - 1)) for k in range(MAX_ROWS)})


def x_text(value: float) -> str:
    """An x value as the table writes it: at most three decimals, no trailing zeros, a true minus."""
    text = format_value(value, 3)
    return text.rstrip("0").rstrip(".") if "." in text else text


def y_text(value: float) -> str:
    """A y value as the table writes it: three decimals (as the Markdown export's table)."""
    return format_value(value, 3)


def _name(figure: Figure) -> str:
    return plain(figure.title) or ("Heatmap" if isinstance(figure, Heatmap) else "Line plot")


def spoken_cell(figure: Heatmap, i: int, j: int) -> str:
    """A heatmap's cell for a listener: as printed, or "masked" for a masked cell left blank (a
    weight matrix's), which printed says nothing."""
    text = figure.cell_text(i, j)
    return text if text.strip() else "masked"


def description(figure: Figure) -> str:
    """One sentence that says what the figure shows, for a reader who cannot see it (plain text)."""
    if isinstance(figure, Heatmap):
        n_rows, n_cols = len(figure.values), len(figure.values[0])
        rows = f" ({plain(figure.row_title)})" if figure.row_title else ""
        cols = f" ({plain(figure.col_title)})" if figure.col_title else ""
        seen = [
            v for i, row in enumerate(figure.values) for j, v in enumerate(row) if not figure.is_masked(i, j)
        ]
        text = f"Heatmap of {n_rows} rows{rows} by {n_cols} columns{cols}"
        if seen:
            low, high = format_value(min(seen), figure.decimals), format_value(max(seen), figure.decimals)
            text += f", every value {low}" if low == high else f", values from {low} to {high}"
        masked = n_rows * n_cols - len(seen)
        if masked:
            shown = f"shown as {plain(figure.masked_text)}" if figure.masked_text.strip() else "left blank"
            text += f"; {masked} masked cell{'' if masked == 1 else 's'} {shown}"
        return text + "."
    curves = ", ".join(plain(s.label) for s in figure.series)
    x_label = plain(figure.x_label) or "x"
    ys = [v for s in figure.series for v in s.values]
    y_low, y_high = y_text(min(ys)), y_text(max(ys))
    noun = "curve" if len(figure.series) == 1 else "curves"
    text = (
        f"Line plot of {len(figure.series)} {noun} ({curves}) against {x_label} "
        f"from {x_text(figure.x[0])} to {x_text(figure.x[-1])}"
    )
    y_label = plain(figure.y_label)
    text += f"; {y_label} from {y_low} to {y_high}" if y_label else f"; from {y_low} to {y_high}"
    return text + "."


def table_html(figure: Figure) -> str:
    """The figure's values as an HTML table with a caption, column headers and row headers."""
    caption = f"<caption>Values of {escape(_name(figure), quote=False)}</caption>"
    if isinstance(figure, Heatmap):
        n_cols = len(figure.values[0])
        corner = escape(plain(corner_text(figure)), quote=False)
        head = f'<th scope="col">{corner}</th>' + "".join(
            f'<th scope="col">{escape(plain(c), quote=False)}</th>' for c in figure.cols
        )
        body = "".join(
            f'<tr><th scope="row">{escape(plain(label), quote=False)}</th>'
            + "".join(f"<td>{escape(figure.cell_text(i, j), quote=False)}</td>" for j in range(n_cols))
            + "</tr>"
            for i, label in enumerate(figure.rows)
        )
        note = ""
    else:
        shown = shown_points(figure)
        head = f'<th scope="col">{escape(plain(figure.x_label) or "x", quote=False)}</th>' + "".join(
            f'<th scope="col">{escape(plain(s.label), quote=False)}</th>' for s in figure.series
        )
        body = "".join(
            f'<tr><th scope="row">{x_text(figure.x[n])}</th>'
            + "".join(f"<td>{y_text(s.values[n])}</td>" for s in figure.series)
            + "</tr>"
            for n in shown
        )
        note = (
            f"<p>{len(shown)} of the {len(figure.x)} points are listed.</p>"
            if len(shown) < len(figure.x)
            else ""
        )
    table = (
        f'<table class="figure-table">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )
    return table + note


def details_html(figure: Figure) -> str:
    """The description and, shown on request, the table: what HTML pages put in a figure's caption."""
    return (
        f'<span class="figure-description">{escape(description(figure), quote=False)}</span>'
        f'<details class="figure-data"><summary>The values as a table</summary>{table_html(figure)}</details>'
    )


def alt_text(figure: Figure) -> str:
    """An image's alternative text: the figure's name and its description (plain text)."""
    return f"{_name(figure)}. {description(figure)} The values are in the table after it."


def lms_html(figure: Figure) -> str:
    """What an LMS question puts after the figure's image: the table (always shown: an LMS's HTML
    filters may drop ``<details>``)."""
    return table_html(figure)


def values(figure: Figure) -> tuple[str, list[str], list[list[str]], str]:
    """The figure's table as plain text, for a renderer that builds its own table (the PDF's
    tagged table): its caption, column headers, rows (the first cell of each its row header) and a
    note on the points left out ("" when none are); the same cells as `table_html`."""
    caption = f"Values of {_name(figure)}"
    if isinstance(figure, Heatmap):
        head = [plain(corner_text(figure))] + [plain(c) for c in figure.cols]
        rows = [
            [plain(label)] + [figure.cell_text(i, j) for j in range(len(figure.values[0]))]
            for i, label in enumerate(figure.rows)
        ]
        return caption, head, rows, ""
    shown = shown_points(figure)
    head = [plain(figure.x_label) or "x"] + [plain(s.label) for s in figure.series]
    rows = [[x_text(figure.x[n])] + [y_text(s.values[n]) for s in figure.series] for n in shown]
    note = f"{len(shown)} of the {len(figure.x)} points are listed." if len(shown) < len(figure.x) else ""
    return caption, head, rows, note


__all__ = ["alt_text", "description", "details_html", "lms_html", "shown_points", "table_html", "values"]
