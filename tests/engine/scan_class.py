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
        self, page: int, marks: dict[str, str], dpi: int, rng: np.random.Generator, pen: pens.Pen
    ) -> np.ndarray:
        """Page ``page`` with each bubble of ``marks`` (id → mark kind) drawn on it."""
        image = self.page_image(page, dpi)
        scale = dpi / 72
        for bubble_id, mark in marks.items():
            b = self.bubbles[bubble_id]
            if b["page"] == page:
                pens.draw_mark(image, b["x"] * scale, b["y"] * scale, b["r"] * scale, mark, pen, rng)
        return image
