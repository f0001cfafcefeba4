"""Figures that generators attach to their variants: attention weights, masks and encoding curves.

Every figure is built from the arrays the generator computed its answer from (never from rounded
text), so what a reader sees is this variant's own numbers; each renderer prints the values at
the figure's precision.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.figures import Heatmap, LinePlot, Series, Where, format_value


def numbered(count: int) -> list[str]:
    """Labels 1, 2, ... for the tokens of a small example (row i is query i, column j is key j)."""
    return [str(n) for n in range(1, count + 1)]


def number_label(value: float) -> str:
    """A number as a short label: ``2``, ``0.5``, ``−1.25`` (a true minus sign)."""
    text = f"{float(value):.4g}"
    return text.replace("-", "−")


def weight_map(
    weights: np.ndarray,
    *,
    title: str,
    caption: str = "",
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    row_title: str = "query",
    col_title: str = "key",
    hidden: np.ndarray | None = None,
    masked_text: str = "0",
    decimals: int = 2,
    where: Where = "solution",
) -> Heatmap:
    """Attention weights (rows sum to 1) shaded from 0 to 1; ``hidden`` (True = masked) greys out the
    entries a mask hides (their weight is exactly 0, shown as ``masked_text``)."""
    return _matrix_map(
        weights, title, caption, rows, cols, row_title, col_title, hidden, decimals, where,
        masked_text, low=0.0, high=1.0,
    )  # fmt: skip


def score_map(
    scores: np.ndarray,
    *,
    title: str,
    hidden: np.ndarray | None = None,
    caption: str = "",
    decimals: int = 2,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    row_title: str = "query",
    col_title: str = "key",
    where: Where = "solution",
) -> Heatmap:
    """Raw scores, shaded from the smallest to the largest; hidden entries shown as −∞."""
    return _matrix_map(
        scores, title, caption, rows, cols, row_title, col_title, hidden, decimals, where, "−∞"
    )


def _matrix_map(
    values: np.ndarray,
    title: str,
    caption: str,
    rows: Sequence[str] | None,
    cols: Sequence[str] | None,
    row_title: str,
    col_title: str,
    hidden: np.ndarray | None,
    decimals: int,
    where: Where,
    masked_text: str,
    *,
    low: float | None = None,
    high: float | None = None,
) -> Heatmap:
    """A matrix as a heatmap: tokens numbered 1, 2, ... unless labelled; shaded from ``low`` to
    ``high`` (by default the matrix's own smallest and largest value)."""
    matrix = np.atleast_2d(np.asarray(values, dtype=float))
    n_rows, n_cols = matrix.shape
    return Heatmap(
        values=matrix.tolist(),
        rows=list(rows) if rows is not None else numbered(n_rows),
        cols=list(cols) if cols is not None else numbered(n_cols),
        title=title,
        caption=caption,
        row_title=row_title,
        col_title=col_title,
        decimals=decimals,
        mask=np.atleast_2d(hidden).tolist() if hidden is not None else None,
        low=low,
        high=high,
        masked_text=masked_text,
        where=where,
    )


def pe_curves(
    d_model: int,
    dims: Sequence[int],
    end: int,
    *,
    title: str,
    caption: str = "",
    per_position: int = 10,
) -> LinePlot:
    """Dimensions ``dims`` of the sinusoidal encoding as curves over positions 0 to ``end``, with
    ``per_position`` points per position (so every whole position is a point of the curve)."""
    xs = np.arange(end * per_position + 1) / per_position
    table = np.array([numerics.sinusoidal_encoding(float(x), d_model) for x in xs])
    series = [Series(f"dim {k} ({'sin' if k % 2 == 0 else 'cos'})", table[:, k].tolist()) for k in dims]
    return LinePlot(
        x=xs.tolist(),
        series=series,
        title=title,
        caption=caption,
        x_label="position",
        y_label="PE value",
    )


__all__ = ["format_value", "number_label", "numbered", "pe_curves", "score_map", "weight_map"]
