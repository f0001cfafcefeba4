"""Deciding a scanned bubble: filled, empty, cancelled (crossed out) or unclear, from the ink measured.

Every bubble's darkness is measured inside it (relative to the paper and to the corner squares' ink),
and in four small diagonal sectors just outside it, where the arms of a cross-out reach; the states of
a field's bubbles then go to `attnquiz.engine.scan.fields.decide`, which says what the field reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attnquiz.engine.scan.fields import decide
from attnquiz.engine.scan.handwriting import written_columns
from attnquiz.engine.scan.layout import PX_PER_PT, Layout, PageSpec
from attnquiz.engine.scan.page_read import PageRead

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


EMPTY_BELOW = 0.16  # mean darkness inside a bubble (0 paper, 1 the corner squares' ink)
FILLED_FROM = 0.36
CROSS_SECTOR = 0.22  # mean darkness of a diagonal sector outside the bubble that an X's arm crosses
CROSS_LINE = 0.22  # darkness of a fine liner's stroke (two such pixels in each band of a sector: a line)
EMPTY_BELOW_DOUBTFUL = 0.04  # on a bilevel or low-contrast page: any more ink in a bubble is a doubt
LOW_CONTRAST = 110.0  # grey levels between paper and the corner squares' black below which a scan is faint
BILEVEL_GREYS = 0.03  # middle-grey pixels per black one below which a page is black and white only


_ONE_SIDE = frozenset({0b0011, 0b1100, 0b0101, 0b1010})
"""Two sectors on one side of a bubble: the arms of a neighbour's cross reaching it, not its own cross."""


def _state(inner: float, crossed: int, empty_below: float = EMPTY_BELOW) -> str:
    """A bubble's state from its inner darkness and the sectors outside it with ink (a bitmask)."""
    if crossed == 0b1111:
        return "cancelled"  # an X through it, both arms past the circle
    sectors = bin(crossed).count("1")
    if sectors == 3 or (sectors == 2 and crossed not in _ONE_SIDE):
        return "unclear"  # a cross with an arm missing, or one stroke through it: cancelled or not?
    if inner >= FILLED_FROM:
        return "filled"
    if inner < empty_below:
        return "empty"
    return "unclear"


def _offsets(radius_px: float, inner: float, outer: float, sectors: bool) -> list[npt.NDArray[np.intp]]:
    """Pixel offsets (dy, dx) of a disc (``sectors`` False) or of the four diagonal sectors of a ring."""
    import numpy as np

    span = int(np.ceil(outer * radius_px)) + 1
    ys, xs = np.mgrid[-span : span + 1, -span : span + 1]
    dist = np.hypot(ys, xs) / radius_px
    ring = (dist >= inner) & (dist <= outer)
    if not sectors:
        return [np.stack([ys[ring], xs[ring]], axis=1)]
    angle = np.degrees(np.arctan2(ys, xs))
    out = []
    for centre in (45.0, 135.0, -45.0, -135.0):
        near = np.abs((angle - centre + 180.0) % 360.0 - 180.0) <= 20.0
        chosen = ring & near
        out.append(np.stack([ys[chosen], xs[chosen]], axis=1))
    return out


def _darkness(page: npt.NDArray[np.uint8], layout: Layout) -> tuple[npt.NDArray[np.float32], float]:
    """Ink per pixel, 0 for the paper and 1 for the corner squares' black; and the grey levels between
    the paper and that black (the page's contrast)."""
    import numpy as np

    paper = float(np.percentile(page[::4, ::4], 90))  # a sample: the paper's white, a sixteenth of the work
    half = layout.mark_size * 0.3 * PX_PER_PT
    inks = []
    for x, y in layout.marks:
        cx, cy = x * PX_PER_PT, y * PX_PER_PT
        inks.append(float(np.median(page[int(cy - half) : int(cy + half), int(cx - half) : int(cx + half)])))
    contrast = paper - float(np.median(inks))
    ink = min(float(np.median(inks)), paper - 40.0)
    dark: npt.NDArray[np.float32] = np.clip((paper - page.astype(np.float32)) / (paper - ink), 0.0, 1.0)
    return dark, contrast


def is_bilevel(gray: npt.NDArray[np.uint8]) -> bool:
    """Whether a page image is black and white only (a bilevel scan, maybe saved as JPEG): its black
    has almost no middle grey around it, where in a greyscale scan every printed stroke has a grey edge
    (measured: at least a third as many grey pixels as black ones, against none on a bilevel page)."""
    import numpy as np

    sample = gray[::3, ::3]
    black = int(np.count_nonzero(sample <= 60))
    grey = int(np.count_nonzero((sample > 60) & (sample < 195)))
    return black > 0 and grey < BILEVEL_GREYS * black


def read_fields(
    page: npt.NDArray[np.uint8], spec: PageSpec, layout: Layout, result: PageRead, bilevel: bool = False
) -> None:
    """Read every field of a resampled page into ``result``: each bubble measured and its state decided,
    then what the field says (or its flag) decided from them; ``bilevel``: the scan is black and white."""
    import numpy as np

    dark, contrast = _darkness(page, layout)
    # On a black-and-white scan light pencil breaks up into specks, and on a washed-out one it is barely
    # darker than the paper: there a part-filled bubble is a doubt, never an empty bubble.
    doubtful = bilevel or contrast < LOW_CONTRAST
    if bilevel:
        result.notes.append(
            "a black-and-white (bilevel) scan: light pencil may be lost, so every part-filled bubble is "
            "listed for review (scan in greyscale to avoid this)"
        )
    elif doubtful:
        result.notes.append(
            "a low-contrast scan (the ink is barely darker than the paper): every part-filled bubble is "
            "listed for review (scan darker, or in greyscale, to avoid this)"
        )
    radius = layout.radius * PX_PER_PT
    (disc,) = _offsets(radius, 0.0, 0.58, sectors=False)
    sectors = _offsets(radius, 1.3, 1.8, sectors=True)
    # The same sectors cut into three bands outward: a fine liner's stroke (1 px here) darkens too little
    # of a sector to show in its mean, but it crosses every band, where specks and a neighbour's fill do not.
    bands = [
        _offsets(radius, low, high, sectors=True) for low, high in ((1.3, 1.47), (1.47, 1.63), (1.63, 1.8))
    ]
    height, width = dark.shape

    def measure(
        points: Sequence[tuple[float, float]],
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int_]]:
        centres = np.rint(np.array(points, dtype=np.float64).reshape(-1, 2) * PX_PER_PT).astype(np.intp)

        def mean(offsets: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
            ys = np.clip(centres[:, 1, None] + offsets[None, :, 0], 0, height - 1)
            xs = np.clip(centres[:, 0, None] + offsets[None, :, 1], 0, width - 1)
            means: npt.NDArray[np.float64] = dark[ys, xs].mean(axis=1).astype(np.float64)
            return means

        def inked(offsets: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
            ys = np.clip(centres[:, 1, None] + offsets[None, :, 0], 0, height - 1)
            xs = np.clip(centres[:, 0, None] + offsets[None, :, 1], 0, width - 1)
            found: npt.NDArray[np.bool_] = (dark[ys, xs] > CROSS_LINE).sum(axis=1) >= 2
            return found

        inner = mean(disc)
        # A bit per diagonal sector with ink: 1 lower right, 2 lower left, 4 upper right, 8 upper left.
        crossed = sum(
            ((mean(s) > CROSS_SECTOR) | np.logical_and.reduce([inked(b[bit]) for b in bands])).astype(np.int_)
            << bit
            for bit, s in enumerate(sectors)
        )
        return inner, np.asarray(crossed)

    for spec_field in spec.fields:
        if not spec_field.bubbles:
            continue
        inner, crossed = measure([(x, y) for _, _, x, y in spec_field.bubbles])
        empty_below = EMPTY_BELOW_DOUBTFUL if doubtful else EMPTY_BELOW
        states = [_state(d, c, empty_below) for d, c in zip(inner.tolist(), crossed.tolist(), strict=True)]
        written = written_columns(dark, spec_field) if spec_field.kind in ("number", "student") else {}
        # ink past the circle, but not only above it (where bubble 0 meets the box of the written digit)
        touched = [c not in (0, 0b1100) for c in crossed.tolist()]
        decide(spec_field, states, page, dark, result, layout, written, touched)
