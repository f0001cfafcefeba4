"""A class's answer sheets filled by simulated students, for the scan tests (from the layout file)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.engine import scan_pens as pens


@dataclass
class Sheets:
    """An export's answer sheets: the layout (answer-sheets.json) and the printed pages."""

    layout: dict[str, Any]
    pdf: bytes
    bubbles: dict[str, dict[str, Any]] = field(default_factory=dict)
    printed: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)  # (dpi, page) → image

    @classmethod
    def load(cls, folder: Path) -> Sheets:
        layout = json.loads((folder / "answer-sheets.json").read_bytes())
        made = cls(layout, (folder / "answer-sheets.pdf").read_bytes())
        made.bubbles = {b["id"]: b for b in layout["bubbles"]}
        return made

    def page_image(self, page: int, dpi: int) -> np.ndarray:
        """Page ``page`` (1-based) as printed, at ``dpi`` (rendered once, then kept)."""
        if (dpi, page) not in self.printed:
            self.printed[dpi, page] = pens.render(self.pdf, dpi, page - 1)
        return self.printed[dpi, page].copy()

    def fill(
        self,
        page: int,
        marks: dict[str, str],
        dpi: int,
        rng: np.random.Generator,
        pen: pens.Pen,
        written: dict[str, str] | None = None,
    ) -> np.ndarray:
        """Page ``page`` with each bubble of ``marks`` (id → mark kind; ``x3`` is an X of 3 px strokes over
        a filled bubble) drawn on it, and each digit of ``written`` (field id.position → digit) written in
        its box above the column, as a student does before filling the bubble. By default the digit of
        every bubble marked (and not crossed out) is written."""
        image = self.page_image(page, dpi)
        scale = dpi / 72
        for bubble_id, mark in marks.items():
            b = self.bubbles[bubble_id]
            if b["page"] != page:
                continue
            x, y, r = b["x"] * scale, b["y"] * scale, b["r"] * scale
            if mark.startswith("x"):
                pens.cross_out(image, x, y, r, float(mark[1:]) * dpi / 300, pen, rng)
            else:
                pens.draw_mark(image, x, y, r, mark, pen, rng)
        for column, digit in (self.written(marks) if written is None else written).items():
            top = self.bubbles.get(f"{column}.0")
            if digit and top is not None and top["page"] == page:
                # the box above the column: its centre 15.5 pt above the centre of the bubble 0
                x, y = top["x"] * scale, (top["y"] - 15.5) * scale
                pens.write_digit(image, x, y, 12.0 * scale, digit, pen, rng)
        return image

    def written(self, marks: dict[str, str]) -> dict[str, str]:
        """What a student writes above the columns of ``marks``: the digit of each bubble marked and
        not crossed out (field id.position → digit)."""
        out: dict[str, str] = {}
        for bubble_id, mark in marks.items():
            b = self.bubbles[bubble_id]
            if (
                b["position"][:1] in ("i", "d", "e")
                and b["position"][1:].isdigit()
                and mark in (*pens.CLEAR, *pens.AMBIGUOUS)
            ):
                out[f"{b['field']}.{b['position']}"] = b["value"]
        return out
