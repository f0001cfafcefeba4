"""Written cells: whether a digit is written above a column, or anything in a formula's or concept's box."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnquiz.engine.scan.layout import PX_PER_PT, FieldSpec

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


WRITE_INSET = 2.0  # points kept clear inside a digit's box (its printed frame)
WRITING_DARK = 0.3  # darkness of a pixel of handwriting (blank paper with scanner noise: below 0.1)
WRITTEN_FROM = 0.012  # share of a digit box's pixels inked by a written digit (a small thin one: 0.02)
WRITTEN_UNCLEAR = 0.003  # below: a blank box (measured 0 on blank boxes); between: a stroke or a smudge


def written_columns(dark: npt.NDArray[np.float32], spec: FieldSpec) -> dict[str, str]:
    """Each digit column's box above the grid: "written" (a digit is there), "blank", or "unclear" (a
    few strokes: a digit or a smudge?). The box is found from the column's bubble 0, as the sheet places
    it (`WRITE_IN` points tall, 3 points above the bubble's circle)."""
    import numpy as np

    from attnquiz.engine.export.pdf.answer_sheet import BUBBLE_R, PITCH_X, WRITE_IN

    out: dict[str, str] = {}
    height, width = dark.shape
    for position, value, x, y in spec.bubbles:
        if value != "0" or position in ("sign", "esign"):
            continue
        bottom = y - BUBBLE_R - 3.0
        # Inset from the printed frame (and from a neighbour's decimal point) by a margin that a crooked
        # scan's resampling cannot push the frame across.
        left, right = x - PITCH_X / 2 + 1.0 + WRITE_INSET, x + PITCH_X / 2 - 1.0 - WRITE_INSET
        top, low = bottom - WRITE_IN + WRITE_INSET, bottom - WRITE_INSET
        region = dark[
            max(0, int(top * PX_PER_PT)) : min(height, int(low * PX_PER_PT)),
            max(0, int(left * PX_PER_PT)) : min(width, int(right * PX_PER_PT)),
        ]
        ink = float(np.mean(region > WRITING_DARK)) if region.size else 0.0
        out[position] = "written" if ink >= WRITTEN_FROM else "blank" if ink < WRITTEN_UNCLEAR else "unclear"
    return out


def has_writing(dark: npt.NDArray[np.float32], box: tuple[float, float, float, float] | None) -> bool:
    """Whether anything is written in ``box`` (a formula's or a concept question's writing box), kept
    clear of its printed frame; False when the field has no such box."""
    import numpy as np

    if box is None:
        return False
    x, y, w, h = box
    inset = 4.0
    region = dark[
        int((y + inset) * PX_PER_PT) : int((y + h - inset) * PX_PER_PT),
        int((x + inset) * PX_PER_PT) : int((x + w - inset) * PX_PER_PT),
    ]
    return bool(region.size) and float(np.mean(region > 0.5)) > 0.002
