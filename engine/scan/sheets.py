"""Reading scanned answer sheets back into the ``answers.csv`` that `quiz grade` reads.

A scan is a PDF (rasterised by pypdfium2, PDFium's own renderer: no system binary) or a PNG or
JPEG image. Each page is read on its own, so pages are read by a pool of processes, one per CPU:

1. the four solid corner squares are found (OpenCV contours: square, solid, of the expected size,
   nearest each corner of the image) and a perspective transform maps them onto their places in
   the layout, which undoes rotation, scale, skew and perspective at once; the page is resampled at
   `PX_PER_PT` pixels a point;
2. the QR code names the page (export, student, variant, page of the sheet); a page upside down is
   turned over; a page whose code cannot be read is never guessed: it goes to the review with its
   image, and ``quiz scan --fix`` asks whose page it is;
3. every bubble's darkness is measured inside it (relative to the paper and to the corner squares'
   ink), and in four small diagonal sectors just outside it, where the arms of a cross-out reach;
4. each field is decided: a bubble is *filled*, *empty*, *cancelled* (crossed out) or *unclear*
   (faint, erased, half crossed): any unclear bubble, two filled bubbles in one digit column, a gap
   in a number, or two options of a single choice send the field to the review with a cropped
   image, and its cell in ``answers.csv`` reads ``?review N`` (which `quiz grade` cannot read and
   counts as invalid) until it is settled.

Why OpenCV (opencv-python-headless) and not scikit-image: one wheel with no further dependencies
has everything this needs — PNG/JPEG decoding and encoding, contours, the perspective warp, and a
QR code decoder — where scikit-image needs SciPy, imageio and a separate QR decoder (pyzbar wants
the system's zbar library). OpenCV's wheel is larger (about 150 MB installed, against about 130
MB for scikit-image with SciPy, plus a decoder), but it is one well-kept package that also decodes
QR codes robustly, so it is an optional extra: ``pip install attnquiz[scan]``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.errors import QuizError
from attnquiz.engine.typed_numbers import whole

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PX_PER_PT = 2.5  # the resampled page: 180 dpi, a bubble 25 px across
RENDER_DPI = 200  # a scanned PDF's pages are rasterised at this resolution
EMPTY_BELOW = 0.16  # mean darkness inside a bubble (0 paper, 1 the corner squares' ink)
FILLED_FROM = 0.36
CROSS_SECTOR = 0.22  # mean darkness of a diagonal sector outside the bubble that an X's arm crosses
CROSS_LINE = 0.22  # darkness of a fine liner's stroke (two such pixels in each band of a sector: a line)
EMPTY_BELOW_DOUBTFUL = 0.04  # on a bilevel or low-contrast page: any more ink in a bubble is a doubt
LOW_CONTRAST = 110.0  # grey levels between paper and the corner squares' black below which a scan is faint
BILEVEL_GREYS = 0.03  # middle-grey pixels per black one below which a page is black and white only
WRITE_INSET = 2.0  # points kept clear inside a digit's box (its printed frame)
WRITING_DARK = 0.3  # darkness of a pixel of handwriting (blank paper with scanner noise: below 0.1)
WRITTEN_FROM = 0.012  # share of a digit box's pixels inked by a written digit (a small thin one: 0.02)
WRITTEN_UNCLEAR = 0.003  # below: a blank box (measured 0 on blank boxes); between: a stroke or a smudge
REVIEW_PREFIX = "?review "
# Why a review item has no picture, said where the picture would be (`quiz scan --fix`, the review page).
NO_SCAN = "no image: this page was not in the scans"
NO_PAGE_IMAGE = "no image: the file gave no picture of a page to show"
NO_FIELD_CROP = "no image: the scans were read without keeping this field's crop (scan them again to see it)"
MAX_JSON_BYTES = 64 << 20  # an answer-sheet layout or review file (a class of 10,000 writes a few MB)
MAX_ANSWERS_BYTES = 20_000_000  # the answers.csv that scan fills in (what `quiz grade` reads)
MAX_SCAN_BYTES = 64 << 20  # one page's PNG or JPEG (a page at 600 dpi is a few MB)
WRITTEN_ON_SHEET = "(written on the answer sheet)"  # a concept question's answer cell (docs/paper.md)

Progress = Callable[[int, int], None]


class ScanError(QuizError):
    """A scan that cannot be read at all (a missing layout file, a file that is no image or PDF)."""


# ---------------------------------------------------------------------------------------------
# The layout, as the scanner needs it
# ---------------------------------------------------------------------------------------------


class AnswerRefused(ScanError):
    """What the instructor gave cannot settle this item (too long, malformed): ask again."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    id: str
    kind: str
    column: str
    title: str
    box: tuple[float, float, float, float]
    bubbles: tuple[tuple[str, str, float, float], ...]  # position, value, x, y
    grid: dict[str, Any] | None = None
    entry: int = 0
    entries: int = 1
    shape: tuple[int, ...] = ()
    multiple: bool = False
    marks: int = 0
    write_box: tuple[float, float, float, float] | None = None
    answer: str = ""  # a formula's right answer (recorded when the marker fills "right")


@dataclass(frozen=True, slots=True)
class PageSpec:
    page: int
    student: int
    code: str
    sheet_page: int
    sheet_pages: int
    qr: tuple[float, float, float]
    fields: tuple[FieldSpec, ...]


@dataclass(frozen=True, slots=True)
class Layout:
    """What ``answer-sheets.json`` says, indexed for reading: pages by (student, page of the sheet)."""

    export: str
    bank: str
    master_seed: int | None
    students: int
    page_size: tuple[float, float]
    marks: tuple[tuple[float, float], ...]
    mark_size: float
    radius: float
    columns: tuple[str, ...]
    pages: dict[tuple[int, int], PageSpec]
    codes: dict[int, str]

    @property
    def sheet_pages(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for (student, _), spec in self.pages.items():
            out[student] = spec.sheet_pages
        return out


_DAMAGE = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, ZeroDivisionError)
"""What reading a damaged layout raises (a value missing, of the wrong type, out of range)."""


def load_layout(path: Path) -> Layout:
    """Read ``answer-sheets.json`` (a clear error for a file that is not one, or a damaged one)."""
    try:
        data = json.loads(read_capped(path, MAX_JSON_BYTES))
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('an answer-sheet layout')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read the answer-sheet layout ({exc.strerror or exc})") from exc
    except (ValueError, RecursionError) as exc:
        raise ScanError(f"{path}: not a JSON file ({str(exc)[:160]})") from exc
    if not isinstance(data, dict) or data.get("format") != "quiz-answer-sheets":
        raise ScanError(f"{path}: not an answer-sheets.json written by `quiz export --answer-sheet`")
    try:
        return check_layout(layout_from_json(data))
    except _DAMAGE as exc:
        said = " ".join(str(exc).split())[:160]
        raise ScanError(f"{path}: a damaged answer-sheets.json ({type(exc).__name__}: {said})") from exc


MAX_ENTRIES = 10_000  # entries of one vector or matrix answer (a sheet prints a few dozen at most)


def check_layout(layout: Layout) -> Layout:
    """``layout`` if every number the scanner computes with is sane (finite, positive where it must be,
    on the page, a grid that fits), else a `ValueError` that says which: a damaged file must not
    crash OpenCV, allocate gigabytes or loop for hours page after page."""
    import math

    from attnquiz.engine.export.pdf.answer_sheet import MAX_COLUMNS

    width, height = layout.page_size
    if not (50 <= width <= 5000 and 50 <= height <= 5000):
        raise ValueError(f"a page size of {width} x {height} points")
    if len(layout.marks) != 4 or not 2 <= layout.mark_size <= 100:
        raise ValueError("the four corner marks")
    if not 1 <= layout.radius <= 50:
        raise ValueError(f"a bubble radius of {layout.radius} points")

    def on_page(x: float, y: float, what: str) -> None:
        if not (math.isfinite(x) and math.isfinite(y) and -1 <= x <= width + 1 and -1 <= y <= height + 1):
            raise ValueError(f"{what} off the page ({x}, {y})")

    for x, y in layout.marks:
        on_page(x, y, "a corner mark")
    if len({(round(x), round(y)) for x, y in layout.marks}) != 4:
        raise ValueError("two corner marks in one place")
    if not layout.pages:
        raise ValueError("no pages")
    for spec in layout.pages.values():
        x, y, size = spec.qr
        on_page(x, y, "a QR code")
        on_page(x + size, y + size, "a QR code")
        if not 0 < spec.sheet_page <= spec.sheet_pages <= 1000:
            raise ValueError(f"page {spec.sheet_page} of {spec.sheet_pages}")
        for f in spec.fields:
            bx, by, bw, bh = (float(v) for v in f.box)
            on_page(bx, by, f"the box of field {f.id!r}")
            on_page(bx + bw, by + bh, f"the box of field {f.id!r}")
            if f.write_box is not None:
                wx, wy, ww, wh = (float(v) for v in f.write_box)
                on_page(wx, wy, f"the writing box of field {f.id!r}")
                on_page(wx + ww, wy + wh, f"the writing box of field {f.id!r}")
            for _, _, bubble_x, bubble_y in f.bubbles:
                on_page(bubble_x, bubble_y, f"a bubble of field {f.id!r}")
            if not 0 <= f.entry < f.entries <= MAX_ENTRIES or not all(0 < n <= MAX_ENTRIES for n in f.shape):
                raise ValueError(f"field {f.id!r}: entry {f.entry} of {f.entries}")
            if f.kind in ("number", "student"):
                from attnquiz.engine.export.pdf.answer_sheet import NumberGrid

                if not isinstance(f.grid, dict):
                    raise ValueError(f"field {f.id!r} has no grid")
                grid = NumberGrid.from_json(f.grid)
                if not (0 <= grid.integers <= MAX_COLUMNS and 0 <= grid.decimals <= MAX_COLUMNS):
                    raise ValueError(f"field {f.id!r}: a grid of {grid.integers} + {grid.decimals} columns")
                positions = set(grid.positions())
                if any(position not in positions for position, *_ in f.bubbles):
                    raise ValueError(f"field {f.id!r}: a bubble in a column its grid does not have")
            elif f.kind not in ("choice", "concept", "formula"):
                raise ValueError(f"field {f.id!r} of an unknown kind {f.kind!r}")
    return layout


def _box(value: Any) -> tuple[float, float, float, float]:
    """A box (x, y, width, height) from the layout file (a `ValueError` if it is not four numbers)."""
    x, y, w, h = (float(v) for v in value)
    return x, y, w, h


def layout_from_json(data: dict[str, Any]) -> Layout:
    """The layout from the parsed ``answer-sheets.json`` (a `KeyError` or `TypeError` if it is damaged)."""
    bubbles: dict[str, list[tuple[str, str, float, float]]] = {}
    radius = 5.0
    for b in data["bubbles"]:
        bubbles.setdefault(str(b["field"]), []).append(
            (str(b["position"]), str(b["value"]), float(b["x"]), float(b["y"]))
        )
        radius = float(b["r"])
    fields: dict[int, list[FieldSpec]] = {}
    for f in data["fields"]:
        spec = FieldSpec(
            id=str(f["id"]),
            kind=str(f["kind"]),
            column=str(f["column"]),
            title=str(f["title"]),
            box=_box(f["box"]),
            bubbles=tuple(bubbles.get(str(f["id"]), [])),
            grid=f.get("grid"),
            entry=int(f.get("entry", 0)),
            entries=int(f.get("entries", 1)),
            shape=tuple(int(n) for n in f.get("shape", ())),
            multiple=bool(f.get("multiple")),
            marks=int(f.get("marks", 0)),
            write_box=_box(f["write_box"]) if f.get("write_box") else None,
            answer=str(f.get("answer", "")),
        )
        fields.setdefault(int(f["page"]), []).append(spec)
    pages: dict[tuple[int, int], PageSpec] = {}
    codes: dict[int, str] = {}
    for p in data["pages"]:
        qr = p["qr"]
        spec_page = PageSpec(
            int(p["page"]),
            int(p["student"]),
            str(p["code"]),
            int(p["sheet_page"]),
            int(p["sheet_pages"]),
            (float(qr["x"]), float(qr["y"]), float(qr["size"])),
            tuple(fields.get(int(p["page"]), [])),
        )
        pages[spec_page.student, spec_page.sheet_page] = spec_page
        codes[spec_page.student] = spec_page.code
    marks = tuple((float(m["x"]), float(m["y"])) for m in data["corner_marks"])
    width, height = data["page_size"]
    return Layout(
        str(data["export"]),
        str(data["bank"]),
        data.get("master_seed"),
        int(data["students"]),
        (float(width), float(height)),
        marks,
        float(data["corner_marks"][0]["size"]),
        radius,
        tuple(str(c) for c in data["columns"]),
        pages,
        codes,
    )


# ---------------------------------------------------------------------------------------------
# Reading one page
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Flag:
    """Something on a page that is not decided by the scan: a field, or the page itself."""

    reason: str
    field: str = ""
    column: str = ""
    title: str = ""
    crop: bytes = b""  # PNG
    read: str = ""  # what the bubbles would spell, for the instructor's information
    readings: tuple[str, ...] = ()  # what the student may have meant, offered as choices
    likely: str = ""  # the reading the marks point to (taken with one key), "" when none does
    no_crop: str = ""  # why there is no ``crop``, said in the review
    whole_cell: bool = False  # ``crop`` shows every entry of a vector already (each scan's, labelled)


@dataclass(slots=True)
class PageRead:
    """One scanned page: where it came from, whose page it is, and what its fields say."""

    source: str
    index: int
    student: int | None = None
    sheet_page: int | None = None
    values: dict[str, dict[int, str]] = field(default_factory=dict)  # column → entry → text
    flags: list[Flag] = field(default_factory=list)
    student_number: str = ""
    problem: str = ""  # why the page could not be read at all (then ``image`` holds it)
    image: bytes = b""  # PNG of the page, kept when its identity must be settled by hand
    resampled: bool = False  # ``image`` is the page mapped onto its layout: it can be read once named
    notes: list[str] = field(default_factory=list)  # what the instructor should know about the page
    # The crop of each entry of a vector or matrix read blank: shown if some of its entries are filled.
    blank_crops: dict[tuple[str, int], bytes] = field(default_factory=dict)
    # The crop of every field (field id → PNG), kept only when asked: for a page scanned twice whose two
    # scans read differently (kept for every page, a large class's crops would fill the memory).
    field_crops: dict[str, bytes] = field(default_factory=dict)


MAX_PIXELS = 64_000_000  # a page image larger than this (A4 at 900 dpi) is refused or rendered smaller


def _cv2() -> Any:
    # OpenCV refuses to decode an image of more pixels than this (a "decompression bomb"): read before import.
    os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))
    try:
        import cv2
    except ImportError as exc:  # the scan extra is optional
        raise ScanError(
            "quiz scan needs OpenCV and PDFium: pip install 'attnquiz[scan]' (opencv-python-headless, "
            "pypdfium2)"
        ) from exc
    return cv2


def _corner_marks(gray: npt.NDArray[np.uint8], layout: Layout) -> list[tuple[float, float]] | None:
    """The centres of the four corner squares in the image (top-left, top-right, bottom-left,
    bottom-right), or None when one is missing."""
    import numpy as np

    cv2 = _cv2()
    height, width = gray.shape
    scale = width / layout.page_size[0]
    expected = layout.mark_size * scale
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    _, ink = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found: list[tuple[float, float, float]] = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not (0.35 * expected**2 < area < 2.6 * expected**2):
            continue
        (cx, cy), (w, h), _ = cv2.minAreaRect(contour)
        if min(w, h) <= 0 or max(w, h) / min(w, h) > 1.35 or area / (w * h) < 0.82:
            continue
        found.append((cx, cy, area))
    if len(found) < 4:
        return None
    corners = [(0.0, 0.0), (width, 0.0), (0.0, height), (width, height)]
    chosen: list[tuple[float, float]] = []
    reach = 0.25 * np.hypot(width, height)
    for corner in corners:
        best = min(found, key=lambda f: np.hypot(f[0] - corner[0], f[1] - corner[1]))
        if np.hypot(best[0] - corner[0], best[1] - corner[1]) > reach:
            return None
        chosen.append((best[0], best[1]))
    if len(set(chosen)) < 4:
        return None
    return chosen


def _decode_qr(image: npt.NDArray[np.uint8], qr: tuple[float, float, float]) -> str:
    cv2 = _cv2()
    x, y, size = qr
    pad = 12.0
    top, left = max(0, int((y - pad) * PX_PER_PT)), max(0, int((x - pad) * PX_PER_PT))
    crop = image[top : int((y + size + pad) * PX_PER_PT), left : int((x + size + pad) * PX_PER_PT)]
    detectors = [cv2.QRCodeDetector()]
    if hasattr(cv2, "QRCodeDetectorAruco"):  # a second decoder, more tolerant of blur and noise
        detectors.append(cv2.QRCodeDetectorAruco())

    def attempts() -> Iterator[npt.NDArray[np.uint8]]:
        # Made one at a time: a clean scan is decoded at the first, most pages never need the others.
        yield crop
        yield cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
        yield cv2.GaussianBlur(crop, (3, 3), 0)
        for factor in (2.0, 1.5, 3.0):
            bigger = cv2.resize(crop, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)
            yield bigger
            yield cv2.threshold(bigger, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]

    for detector in detectors:
        for candidate in attempts():
            try:
                text, _, _ = detector.detectAndDecode(candidate)
            except cv2.error:
                text = ""
            if text:
                return str(text)
    return ""


def _png(image: npt.NDArray[np.uint8]) -> bytes:
    cv2 = _cv2()
    ok, data = cv2.imencode(".png", image)
    return bytes(data.tobytes()) if ok else b""


MIN_SIDE = 200  # pixels: a page image narrower than this is no page (an A4 page at 150 dpi: 1240 x 1754)
MAX_ASPECT = 4.0  # a page image longer than this many times its width is a strip, not a page


def read_image(
    gray: npt.NDArray[np.uint8],
    layout: Layout,
    source: str,
    index: int,
    identity: tuple[int, int] | None = None,
    bilevel: bool = False,
    keep_crops: bool = False,
) -> PageRead:
    """Read one page image (grey, any resolution and orientation up to a few degrees, or upside down).

    ``identity`` (student, page of the sheet) settles a page whose QR code could not be read;
    ``bilevel``: the page is known to be black and white (a PDF's 1-bit image); ``keep_crops``: keep
    every field's crop in ``field_crops``. Whatever
    the image, the answer is a page read or a page with a one-line problem, never an exception."""
    shape = getattr(gray, "shape", ())
    if len(shape) != 2 or min(shape) < MIN_SIDE or max(shape) > MAX_ASPECT * min(shape):
        size = " x ".join(str(n) for n in reversed(shape)) or "no"
        return PageRead(source, index, problem=f"not a page: an image of {size} pixels")
    try:
        return _read_image(gray, layout, source, index, identity, bilevel, keep_crops)
    except Exception as exc:  # OpenCV's and NumPy's errors on a page nobody foresaw
        # One page's problem, said in one line; the rest of the batch is read and written.
        reason = " ".join(str(exc).split())[-160:]
        return PageRead(
            source, index, problem=f"this page could not be read ({type(exc).__name__}: {reason})"
        )


def _read_image(
    gray: npt.NDArray[np.uint8],
    layout: Layout,
    source: str,
    index: int,
    identity: tuple[int, int] | None = None,
    bilevel: bool = False,
    keep_crops: bool = False,
) -> PageRead:
    import numpy as np

    cv2 = _cv2()
    result = PageRead(source, index)
    width, height = layout.page_size
    size = (round(width * PX_PER_PT), round(height * PX_PER_PT))
    if identity is None or gray.shape[:2] != (size[1], size[0]):
        marks = _corner_marks(gray, layout)
        if marks is None:
            result.problem = (
                "the four black corner squares were not all found (is the page cut off or folded?)"
            )
            result.image = _png(_shrink(gray))
            return result
        target = np.array([(x * PX_PER_PT, y * PX_PER_PT) for x, y in layout.marks], dtype=np.float32)
        transform = cv2.getPerspectiveTransform(np.array(marks, dtype=np.float32), target)
        page = cv2.warpPerspective(gray, transform, size, flags=cv2.INTER_LINEAR, borderValue=255)
    else:
        page = gray
    spec: PageSpec | None = None
    if identity is not None:
        spec = layout.pages.get(identity)
        if spec is None:
            result.problem = f"the answer sheets have no page {identity[1]} for student {identity[0]}"
            result.image = _png(page)
            return result
    else:
        any_spec = next(iter(layout.pages.values()))
        for turned in (page, cv2.rotate(page, cv2.ROTATE_180)):
            text = _decode_qr(turned, any_spec.qr)
            if text:
                page = turned
                break
        else:
            result.problem = "the QR code could not be read: whose page is it?"
            result.image, result.resampled = _png(page), True
            return result
        parts = text.split("|")
        if len(parts) != 6 or parts[0] != "QUIZSHEET1":
            result.problem = f"the QR code ({text[:60]!r}) is not a quiz answer sheet's"
            result.image, result.resampled = _png(page), True
            return result
        if parts[1] != layout.export:
            result.problem = (
                f"this page belongs to another export ({parts[1]}, the layout file is {layout.export}): "
                "scan it with that export's answer-sheets.json"
            )
            result.image = _png(page)  # the page as the scan mapped it: the instructor sees what it is
            return result
        try:
            key = (int(parts[2]), int(parts[4]))
        except ValueError:
            key = (-1, -1)
        spec = layout.pages.get(key)
        if spec is None or spec.code != parts[3]:
            result.problem = f"the QR code names a page the layout file does not have ({text[:60]!r})"
            result.image, result.resampled = _png(page), True
            return result
    result.student, result.sheet_page = spec.student, spec.sheet_page
    _read_fields(page, spec, layout, result, bilevel or is_bilevel(gray))
    if keep_crops:
        result.field_crops = {f.id: _crop(page, f.box) for f in spec.fields if f.kind != "student"}
    return result


def _shrink(gray: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    cv2 = _cv2()
    height, width = gray.shape[:2]
    factor = min(1.0, 1600 / max(height, width))
    return (
        gray if factor == 1.0 else cv2.resize(gray, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
    )


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


def _read_fields(
    page: npt.NDArray[np.uint8], spec: PageSpec, layout: Layout, result: PageRead, bilevel: bool = False
) -> None:
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
        written = _written_columns(dark, spec_field) if spec_field.kind in ("number", "student") else {}
        # ink past the circle, but not only above it (where bubble 0 meets the box of the written digit)
        touched = [c not in (0, 0b1100) for c in crossed.tolist()]
        _decide(spec_field, states, page, dark, result, layout, written, touched)


def _written_columns(dark: npt.NDArray[np.float32], spec: FieldSpec) -> dict[str, str]:
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


def _crop(page: npt.NDArray[np.uint8], box: tuple[float, float, float, float]) -> bytes:
    x, y, w, h = box
    pad = 8.0
    top, left = max(0, int((y - pad) * PX_PER_PT)), max(0, int((x - pad) * PX_PER_PT))
    return _png(page[top : int((y + h + pad) * PX_PER_PT), left : int((x + w + pad) * PX_PER_PT)])


MAX_LABEL = 70  # characters of a label written above a crop (a file name is cut to its end)


def _label(text: str) -> str:
    """``text`` as a crop's label shows it: printable ASCII (OpenCV's fonts have no other), its end kept."""
    shown = "".join(c if " " <= c <= "~" else "?" for c in text)
    return shown if len(shown) <= MAX_LABEL else "..." + shown[-(MAX_LABEL - 3) :]


def stacked(parts: Sequence[tuple[str, bytes]]) -> bytes:
    """One PNG of the crops ``parts`` (label, PNG) one below the other, each under its label: both scans
    of a field read differently, or a vector's entries. A part that is no image is left out."""
    import numpy as np

    cv2 = _cv2()
    blocks: list[npt.NDArray[np.uint8]] = []
    for label, data in parts:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE) if data else None
        if image is None:
            continue
        if label:
            strip = np.full((26, max(image.shape[1], 8 * len(_label(label)) + 12)), 255, np.uint8)
            cv2.putText(strip, _label(label), (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0,), 1, cv2.LINE_AA)
            blocks.append(strip)
        blocks += [np.asarray(image, np.uint8), np.full((6, 1), 255, np.uint8)]
    if not blocks:
        return b""
    width = max(b.shape[1] for b in blocks)
    padded = [np.pad(b, ((0, 0), (0, width - b.shape[1])), constant_values=255) for b in blocks]
    return _png(np.vstack(padded[:-1]))


def _decide(
    spec: FieldSpec,
    states: list[str],
    page: npt.NDArray[np.uint8],
    dark: npt.NDArray[np.float32],
    result: PageRead,
    layout: Layout,
    written: dict[str, str] | None = None,
    touched: list[bool] | None = None,
) -> None:
    """What one field says, or a flag for the review. ``written``: whether a digit is written in each
    digit column's box (a number or the student number); ``touched``: each bubble has ink just outside
    it (a stroke of a cross-out, maybe)."""
    by_position: dict[str, list[tuple[str, str]]] = {}
    for (position, value, _, _), state in zip(spec.bubbles, states, strict=True):
        by_position.setdefault(position, []).append((value, state))
    struck = {
        (position, value)
        for (position, value, _, _), hit in zip(spec.bubbles, touched or [False] * len(states), strict=True)
        if hit
    }
    what = "the student number" if spec.kind == "student" else f"question {spec.title}"

    def flag(reason: str, read: str = "", readings: Sequence[str] = (), likely: str = "") -> None:
        result.flags.append(
            Flag(
                f"{what}: {reason}",
                spec.id,
                spec.column,
                spec.title,
                _crop(page, spec.box),
                read,
                tuple(dict.fromkeys([likely, *readings] if likely else readings)),
                likely,
            )
        )

    unclear = [p for p, marks in by_position.items() if any(s == "unclear" for _, s in marks)]
    filled = {p: [v for v, s in marks if s == "filled"] for p, marks in by_position.items()}
    if spec.kind in ("number", "student"):
        from attnquiz.engine.export.pdf.answer_sheet import NumberGrid

        assert spec.grid is not None
        grid = NumberGrid.from_json(spec.grid)
        doubled = [p for p, values in filled.items() if len(values) > 1]
        values = {p: v[0] for p, v in filled.items() if len(v) == 1}
        if unclear:
            # Only bubbles with strokes past their circle unclear (an X the scan saw in part), each beside
            # one clear digit: that digit is the likely reading (the X cancels); a faint mark has none.
            doubtful = [(p, v) for p, marks in by_position.items() for v, s in marks if s == "unclear"]
            likely = ""
            if (
                all(d in struck for d in doubtful)
                and all(len(filled[p]) == 1 for p in unclear)
                and not doubled
            ):
                likely = _spelled(grid, values)
            flag(
                f"a faint, erased or half-crossed mark in {_columns(unclear)}",
                likely,
                [likely] if likely else [],
                likely,
            )
            return
        if doubled:
            options, likely = _doubled_readings(grid, values, {p: filled[p] for p in doubled}, struck)
            flag(
                f"two bubbles filled in {_columns(doubled)}"
                + (" (one has a stroke past its circle: crossed out?)" if likely else ""),
                likely,
                options,
                likely,
            )
            return
        # The digits written above the grid are the student's second statement of the number: a column
        # written but not bubbled (a digit dropped) or bubbled but not written is not read.
        written = written or {}
        unbubbled = [p for p, w in written.items() if w != "blank" and p not in values]
        unwritten = [p for p in values if p in written and written[p] != "written"]
        read_so_far = _spelled(grid, values)
        if unbubbled:
            flag(
                f"{'a digit' if len(unbubbled) == 1 else 'digits'} written (or a mark) above "
                f"{_columns(unbubbled)} with no bubble filled: read the written number",
                read_so_far,
            )
            return
        if unwritten:
            flag(
                f"a bubble filled in {_columns(unwritten)} with no digit written above it: check the number",
                read_so_far,
                [read_so_far] if read_so_far else [],
            )
            return
        try:
            text = grid.read(values)
        except ValueError as exc:
            flag(str(exc))
            return
        if spec.kind == "student":
            result.student_number = text
        else:
            result.values.setdefault(spec.column, {})[spec.entry] = text
            if not text and spec.entries > 1:
                result.blank_crops[spec.column, spec.entry] = _crop(page, spec.box)
        return
    chosen = [v for v, s in ((v, s) for marks in by_position.values() for v, s in marks) if s == "filled"]
    if unclear:
        doubtful = [(p, v) for p, marks in by_position.items() for v, s in marks if s == "unclear"]
        likely = ", ".join(chosen) if spec.kind == "choice" and all(d in struck for d in doubtful) else ""
        if likely and not spec.multiple and len(chosen) != 1:
            likely = ""
        flag("a faint, erased or half-crossed mark", ", ".join(chosen), [likely] if likely else [], likely)
        return
    if spec.kind == "choice":
        if not spec.multiple and len(chosen) > 1:
            clean = [v for v in chosen if ("letter", v) not in struck]
            likely = clean[0] if len(clean) == 1 else ""
            flag(
                f"{len(chosen)} options filled in a question with one answer"
                + (" (the others have strokes past their circles: crossed out?)" if likely else ""),
                ", ".join(chosen),
                chosen,
                likely,
            )
            return
        result.values.setdefault(spec.column, {})[0] = ", ".join(chosen)
        return
    boxed = _has_writing(dark, spec.write_box)
    if spec.kind == "concept":
        # The answer stays on paper: the answers file says that there is one (or not), the mark is the score.
        item = spec.column.rsplit(" mark", 1)[0]
        result.values.setdefault(item, {})[0] = WRITTEN_ON_SHEET if boxed else ""
        if len(chosen) > 1:
            flag("two marks filled by the marker", ", ".join(chosen))
            return
        result.values.setdefault(spec.column, {})[0] = chosen[0] if chosen else ""
        return
    # A formula (or a shape in symbols), marked right or wrong by the marker.
    if chosen == ["right"] and spec.answer:
        result.values.setdefault(spec.column, {})[0] = spec.answer
        return
    if not chosen and not boxed:
        result.values.setdefault(spec.column, {})[0] = ""
        return
    reason = {
        (): "written but not marked: type what the student wrote (quiz grade marks it)",
        ("wrong",): "marked wrong: type what the student wrote, so that quiz grade can name the mistake",
        ("right",): "marked right: type what the student wrote",
    }.get(tuple(chosen), "both right and wrong are filled")
    flag(reason, ", ".join(chosen))


MAX_READINGS = 6  # readings offered for a field with doubled columns (two in each of two columns: four)


def _doubled_readings(
    grid: Any, values: dict[str, str], doubled: dict[str, list[str]], struck: set[tuple[str, str]]
) -> tuple[list[str], str]:
    """The numbers a grid with two (or more) bubbles filled in some columns may mean: one bubble of each
    such column with the rest; and the likely one, when in every such column all bubbles but one have
    ink past their circle (a cross-out the scan could not be sure of)."""
    import itertools

    options: list[str] = []
    for combination in itertools.product(*doubled.values()):
        text = _spelled(grid, {**values, **dict(zip(doubled, combination, strict=True))})
        if text and text not in options:
            options.append(text)
        if len(options) >= MAX_READINGS:
            break
    kept = {p: [v for v in vs if (p, v) not in struck] for p, vs in doubled.items()}
    likely = ""
    if all(len(v) == 1 for v in kept.values()):
        likely = _spelled(grid, {**values, **{p: v[0] for p, v in kept.items()}})
    return options, likely


def _spelled(grid: Any, values: dict[str, str]) -> str:
    """What the filled bubbles spell, for the instructor's information ("" when they spell no number)."""
    try:
        return str(grid.read(values))
    except ValueError:
        return ""


def _columns(positions: Sequence[str]) -> str:
    names = {"sign": "the sign", "esign": "the sign of the power of ten"}
    said = [
        names.get(p) or f"{ {'i': 'whole-part', 'd': 'decimal', 'e': 'power'}[p[0]] } column {int(p[1:]) + 1}"
        for p in positions
    ]
    return ", ".join(s.replace("{", "").replace("}", "").strip() for s in said)


def _has_writing(dark: npt.NDArray[np.float32], box: tuple[float, float, float, float] | None) -> bool:
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


# ---------------------------------------------------------------------------------------------
# Files and the pool
# ---------------------------------------------------------------------------------------------

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def scan_files(paths: Sequence[Path]) -> list[Path]:
    """The scans named: each file as given, and a folder's PDF, PNG and JPEG files (what a scanner's
    "scan to folder" writes; its other files are left alone), in the natural order of their names
    (page-2 before page-10)."""

    def natural(path: Path) -> list[tuple[int, int | str]]:
        return [
            (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", path.name.lower())
        ]

    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            out.append(path)
            continue
        try:
            found = [
                p for p in path.iterdir() if p.suffix.lower() in (".pdf", *IMAGE_SUFFIXES) and p.is_file()
            ]
        except OSError as exc:
            raise ScanError(f"{path}: cannot read the folder ({exc.strerror or exc})") from exc
        if not found:
            raise ScanError(f"{path}: a folder with no PDF, PNG or JPEG file in it")
        out += sorted(found, key=natural)
    return out


def page_cap(layout: Layout) -> int:
    """The most pages one run reads: every page of the sheets scanned four times over, and a hundred
    strays; a file of thousands of pages more is a wrong file, not a class, and would run for hours."""
    return 4 * len(layout.pages) + 100


def pages_of(paths: Sequence[Path], cap: int | None = None) -> list[tuple[Path, int]]:
    """Every page to read: (file, page index) for each page of a PDF, (file, 0) for an image; a folder
    stands for the scans in it. More than ``cap`` pages in all is refused, before any is read."""
    out: list[tuple[Path, int]] = []

    def check(path: Path) -> None:
        if cap is not None and len(out) > cap:
            raise ScanError(
                f"{path}: the scans hold {len(out)} pages or more, but at most {cap} are read in one run "
                "(four times the answer sheets' pages, and some strays): is it the right file? Scan the "
                "class in smaller batches"
            )

    for path in scan_files(paths):
        suffix = path.suffix.lower()
        if suffix == ".pdf":
            try:
                import pypdfium2 as pdfium
            except ImportError as exc:
                raise ScanError("reading a PDF needs pypdfium2: pip install 'attnquiz[scan]'") from exc
            try:
                document = pdfium.PdfDocument(str(path))
            except (pdfium.PdfiumError, OSError) as exc:
                raise ScanError(f"{path}: not a readable PDF ({exc})") from exc
            out += [(path, k) for k in range(min(len(document), (cap or len(document)) + 1))]
            document.close()
            check(path)
        elif suffix in IMAGE_SUFFIXES:
            if not path.is_file():
                raise ScanError(f"{path}: no such file")
            out.append((path, 0))
            check(path)
        else:
            raise ScanError(f"{path}: a scan is a PDF, PNG or JPEG file")
    return out


def load_page(path: Path, index: int, dpi: int = RENDER_DPI) -> npt.NDArray[np.uint8]:
    """One page as a grey image."""
    return _load(path, index, dpi)[0]


def _load(path: Path, index: int, dpi: int = RENDER_DPI) -> tuple[npt.NDArray[np.uint8], bool]:
    """One page as a grey image, and whether it is known to be black and white: a PDF page whose scan
    is a 1-bit image (a black-and-white scanner's CCITT or JBIG2 page), which rendering smooths into
    greys that `is_bilevel` cannot tell from a greyscale scan's."""
    import numpy as np

    cv2 = _cv2()
    if path.suffix.lower() == ".pdf":
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_raw

        document = pdfium.PdfDocument(str(path))
        try:
            page = document[index]
            one_bit = any(
                image.get_metadata().bits_per_pixel == 1
                for image in page.get_objects(filter=[pdfium_raw.FPDF_PAGEOBJ_IMAGE], max_depth=2)
            )
            width, height = page.get_size()
            # A page of absurd size is rendered smaller (its marks are then simply not found), never in GBs.
            scale = min(dpi / 72, (MAX_PIXELS / max(1.0, width * height)) ** 0.5)
            bitmap = page.render(scale=scale, grayscale=True)
            image = np.array(bitmap.to_numpy(), dtype=np.uint8)
        finally:
            document.close()
        return (image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)), one_bit
    try:
        data = np.frombuffer(read_capped(path, MAX_SCAN_BYTES), dtype=np.uint8)
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('a scanned page')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    try:
        image = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    except cv2.error as exc:  # e.g. more pixels than OPENCV_IO_MAX_IMAGE_PIXELS
        raise ScanError(f"{path}: not a readable image ({str(exc).strip()[-120:]})") from exc
    if image is None:
        raise ScanError(f"{path}: not a readable image")
    return np.asarray(image, dtype=np.uint8), False


_WORKER: dict[str, Layout] = {}  # the layout a worker process reads pages against, set once at its start


def _init_worker(layout: Layout) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    _WORKER["layout"] = layout


def _read_task(task: tuple[str, int, int]) -> PageRead:
    return read_page(Path(task[0]), task[1], _WORKER["layout"], task[2])


def read_page(
    path: Path, index: int, layout: Layout, dpi: int = RENDER_DPI, keep_crops: bool = False
) -> PageRead:
    """Read page ``index`` of ``path`` (a problem on the page, never an exception, for a bad page)."""
    source = f"{path}" + (f" page {index + 1}" if path.suffix.lower() == ".pdf" else "")
    try:
        gray, one_bit = _load(path, index, dpi)
    except ScanError as exc:
        return PageRead(source, index, problem=str(exc))
    except Exception as exc:  # PDFium's or OpenCV's error on one damaged page: that page's problem
        said = " ".join(str(exc).split())[-160:]
        return PageRead(source, index, problem=f"this page could not be read ({type(exc).__name__}: {said})")
    return read_image(gray, layout, source, index, bilevel=one_bit, keep_crops=keep_crops)


def read_scans(
    paths: Sequence[Path],
    layout: Layout,
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    dpi: int = RENDER_DPI,
) -> list[PageRead]:
    """Read every page of every scan, in order, with ``jobs`` processes (default: every CPU)."""
    tasks = pages_of(paths, page_cap(layout))
    if progress is not None:
        progress(0, len(tasks))
    from attnquiz.engine.parallel import default_jobs

    jobs = default_jobs() if jobs is None else jobs
    out: list[PageRead] = []
    if jobs <= 1 or len(tasks) < 4:
        for done, (path, index) in enumerate(tasks, 1):
            out.append(read_page(path, index, layout, dpi))
            if progress is not None:
                progress(done, len(tasks))
        return _with_duplicate_crops(out, tasks, layout, dpi)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker, initargs=(layout,)) as pool:
        work = [(str(path), index, dpi) for path, index in tasks]
        for done, page in enumerate(pool.map(_read_task, work, chunksize=2), 1):
            out.append(page)
            if progress is not None:
                progress(done, len(tasks))
    return _with_duplicate_crops(out, tasks, layout, dpi)


def _with_duplicate_crops(
    pages: list[PageRead], tasks: Sequence[tuple[Path, int]], layout: Layout, dpi: int
) -> list[PageRead]:
    """``pages`` with every field's crop kept on each scan of a page scanned more than once whose scans
    read differently: the review shows both crops of each field that differs. Those few pages are
    read again (keeping every page's crops from the start would hold a large class's in memory)."""
    scans: dict[tuple[int, int], list[int]] = {}
    for k, page in enumerate(pages):
        if page.student is not None and page.sheet_page is not None:
            scans.setdefault((page.student, page.sheet_page), []).append(k)
    for ks in scans.values():
        if len(ks) < 2 or all(_same_reading(pages[ks[0]], pages[k]) for k in ks[1:]):
            continue
        for k in ks[:MAX_SCANS_SHOWN]:
            again = read_page(tasks[k][0], tasks[k][1], layout, dpi, keep_crops=True)
            pages[k].field_crops = again.field_crops
    return pages


def _same_reading(first: PageRead, other: PageRead) -> bool:
    """Whether two scans of one page read the same: the same values and the same doubts."""
    return first.values == other.values and [f.reason for f in first.flags] == [f.reason for f in other.flags]


# ---------------------------------------------------------------------------------------------
# The class: pages → answers.csv and the review
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ReviewItem:
    """One thing the instructor settles: a field (``column`` of ``student``) or a whole page."""

    n: int
    kind: str  # "field", "page", "missing", "duplicate", "student-number", "note"
    reason: str
    source: str = ""
    student: int | None = None
    sheet_page: int | None = None
    column: str = ""
    field: str = ""
    read: str = ""
    crop: str = ""
    value: str | None = None  # what the instructor settled (None: not yet)
    rereadable: bool = False  # a page whose image can be read once the instructor says whose it is
    # (``field`` is a name of this class: the dataclasses function under its full name)
    readings: list[str] = dataclasses.field(default_factory=list)  # what the student may have meant
    likely: str = ""  # the reading the marks point to: settled with one key
    no_crop: str = ""  # why an item has no picture (``no image: this page was not in the scans``)

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kind": self.kind,
            "reason": self.reason,
            "source": self.source,
            "student": self.student,
            "page": self.sheet_page,
            "column": self.column,
            "field": self.field,
            "read": self.read,
            "crop": self.crop,
            "value": self.value,
            "rereadable": self.rereadable,
            "readings": self.readings,
            "likely": self.likely,
            "no_crop": self.no_crop,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReviewItem:
        return cls(
            int(data["n"]),
            str(data["kind"]),
            str(data["reason"]),
            str(data.get("source", "")),
            data.get("student"),
            data.get("page"),
            str(data.get("column", "")),
            str(data.get("field", "")),
            str(data.get("read", "")),
            str(data.get("crop", "")),
            data.get("value"),
            bool(data.get("rereadable", False)),
            [str(r) for r in data.get("readings", []) if isinstance(r, str)][:MAX_READINGS],
            str(data.get("likely", "")),
            str(data.get("no_crop", "")),
        )


@dataclass(slots=True)
class ClassScan:
    """The answers read from a class's scans, and what is left to settle."""

    layout: Layout
    rows: dict[int, dict[str, str]]  # student → column → cell
    review: list[ReviewItem]
    crops: dict[str, bytes]  # file name → PNG
    unscanned: list[int]
    pages: int

    def csv(self) -> str:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.layout.columns)
        for student in sorted(self.rows):
            cells = self.rows[student]
            writer.writerow([cells.get(c, "") for c in self.layout.columns])
        return buffer.getvalue()

    @property
    def open_items(self) -> list[ReviewItem]:
        return [item for item in self.review if item.value is None]


def assemble(layout: Layout, pages: Sequence[PageRead], crop_folder: str = "review") -> ClassScan:
    """The class's answers from its pages: a row per student whose sheet was scanned, each
    undecided cell ``?review N``; every undecided thing listed once in the review."""
    review: list[ReviewItem] = []
    crops: dict[str, bytes] = {}

    def add(kind: str, reason: str, image: bytes = b"", **where: Any) -> ReviewItem:
        item = ReviewItem(len(review) + 1, kind, reason, **where)
        if image:
            name = f"{crop_folder}/{item.n:04d}.png"
            crops[name] = image
            item.crop = name
        review.append(item)
        return item

    seen: dict[tuple[int, int], PageRead] = {}
    copies: dict[tuple[int, int], list[PageRead]] = {}  # every scan of each page, the first first
    for page in pages:
        if page.student is None or page.sheet_page is None:
            add(
                "page",
                page.problem,
                page.image,
                source=page.source,
                rereadable=page.resampled,
                no_crop="" if page.image else NO_PAGE_IMAGE,
            )
            continue
        key = (page.student, page.sheet_page)
        for note in page.notes:  # said, and settled: the page's doubtful marks are items of their own
            add(
                "note", f"{page.source}: {note}", source=page.source, student=key[0], sheet_page=key[1]
            ).value = "noted"
        if key in seen:
            first = seen[key]
            same = _same_reading(first, page)
            reason = (
                f"student {key[0]}'s page {key[1]} was scanned twice ({first.source} and {page.source})"
                + (": both read the same, the first is used" if same else ": they differ")
            )
            item = add("duplicate", reason, source=page.source, student=key[0], sheet_page=key[1])
            # Settled here: when the two differ, each field that differs is an item of its own.
            item.value = "same" if same else "each field that differs is listed"
            copies[key].append(page)
            continue
        seen[key] = page
        copies[key] = [page]
    for key, scanned in copies.items():
        # A column the scans of one page read differently is not guessed: one item, every scan's crops.
        first = scanned[0]
        columns = sorted({c for copy in scanned for c in copy.values})
        differ = [c for c in columns if any(copy.values.get(c) != first.values.get(c) for copy in scanned)]
        flags = [_read_differently(c, key[1], scanned, layout.pages.get(key)) for c in differ]
        for column in differ:
            first.values.pop(column, None)
        first.flags.extend(flags)
    rows: dict[int, dict[str, str]] = {}
    students = sorted({s for s, _ in seen})
    expected = layout.sheet_pages
    for student in students:
        cells: dict[str, str] = {"student": str(student), "code": layout.codes.get(student, "")}
        entries: dict[str, dict[int, str]] = {}
        flagged: dict[str, ReviewItem] = {}
        entry_readings: list[tuple[ReviewItem, FieldSpec]] = []  # readings of one entry of a vector
        shown: set[tuple[str, int]] = set()  # the vector entries read empty already in an item's crop
        pieces: dict[int, list[tuple[int, str, bytes]]] = {}  # item → its crops (entry, label, PNG), in order
        for sheet_page in range(1, expected.get(student, 1) + 1):
            read = seen.get((student, sheet_page))
            spec = layout.pages.get((student, sheet_page))
            if read is None:
                item = add(
                    "missing",
                    f"page {sheet_page} of student {student}'s sheet was not scanned",
                    student=student,
                    sheet_page=sheet_page,
                    no_crop=NO_SCAN,
                )
                for lost in spec.fields if spec is not None else ():
                    if lost.kind != "student":
                        flagged.setdefault(lost.column, item)
                        if lost.kind == "concept":
                            flagged.setdefault(lost.column.rsplit(" mark", 1)[0], item)
                continue
            for column, values in read.values.items():
                entries.setdefault(column, {}).update(values)
            for f in read.flags:
                own = next((x for x in spec.fields if x.id == f.field), None) if spec is not None else None
                new: list[tuple[int, str, bytes]] = [(-1, "", f.crop)] if f.crop else []
                if own is not None and own.entries > 1 and f.crop and not f.whole_cell:
                    # The cell is settled whole: the entries of the vector read empty on this page are shown
                    # too (a faint entry the scan took for empty is seen there), each labelled.
                    new = [
                        (own.entry, f"entry {own.entry + 1}", f.crop),
                        *(
                            (k, f"entry {k + 1}: read empty", read.blank_crops[own.column, k])
                            for k in range(own.entries)
                            if (own.column, k) in read.blank_crops and (own.column, k) not in shown
                        ),
                    ]
                    shown.update((own.column, k) for k in range(own.entries))
                crop = f.crop if len(new) == 1 and not new[0][1] else stacked([(t, png) for _, t, png in new])
                earlier = flagged.get(f.column)
                if earlier is not None and earlier.kind == "field":
                    # Another entry of the same vector in doubt: the answers file has one cell, so one item
                    # settles it, with each entry's reason and crop (two items would leave the second's
                    # marker nowhere in the file, and settling it would change nothing).
                    earlier.reason += f"; {f.reason}"
                    earlier.read = "; ".join(r for r in (earlier.read, f.read) if r)
                    earlier.readings, earlier.likely = [], ""
                    entry_readings[:] = [(i, o) for i, o in entry_readings if i is not earlier]
                    if new:
                        held = sorted([*pieces.get(earlier.n, []), *new], key=lambda p: p[0])
                        pieces[earlier.n] = held
                        name = earlier.crop or f"{crop_folder}/{earlier.n:04d}.png"
                        crops[name] = stacked([(t, png) for _, t, png in held])
                        earlier.crop, earlier.no_crop = name, ""
                    continue
                item = add(
                    "field",
                    f.reason,
                    crop,
                    source=read.source,
                    student=student,
                    sheet_page=sheet_page,
                    column=f.column,
                    field=f.field,
                    read=f.read,
                    readings=list(f.readings),
                    likely=f.likely,
                    no_crop="" if crop else f.no_crop,
                )
                flagged.setdefault(f.column, item)
                pieces[item.n] = new
                if own is not None and own.entries > 1 and item.readings:
                    entry_readings.append((item, own))
            if read.student_number and read.student_number.lstrip("0") != str(student):
                add(
                    "student-number",
                    f"the student number filled in ({read.student_number}) is not the sheet's ({student}): "
                    "the answers are graded as this sheet's variant; check who wrote it",
                    source=read.source,
                    student=student,
                    sheet_page=sheet_page,
                    value="noted",
                )
        fields = [f for (s, _), spec in layout.pages.items() if s == student for f in spec.fields]
        blanks = {
            where: (sheet_page, crop)
            for sheet_page in range(1, expected.get(student, 1) + 1)
            if (read := seen.get((student, sheet_page))) is not None
            for where, crop in read.blank_crops.items()
        }
        for column in dict.fromkeys(f.column for f in fields if f.kind != "student"):
            if column in flagged:
                continue
            _cell(column, entries.get(column, {}), fields, cells, flagged, add, student, blanks)
        for concept in fields:
            # A concept question's answer column says whether an answer is written on the sheet (read
            # from its box); its mark column holds the marker's mark.
            answer_column = concept.column.rsplit(" mark", 1)[0]
            if concept.kind == "concept" and answer_column not in flagged:
                cells[answer_column] = entries.get(answer_column, {}).get(0, "")
        for item, own in entry_readings:
            # The cell holds the whole vector or matrix: a reading of one entry is offered as the whole,
            # with the other entries as read, and not at all when another entry is in doubt too.
            known = entries.get(own.column, {})
            others = [k for k in range(own.entries) if k != own.entry]
            if (
                all(known.get(k) for k in others)
                and sum(1 for i, _ in entry_readings if i.column == own.column) == 1
            ):
                whole = {
                    r: _vector_cell(
                        own.shape, [r if k == own.entry else known[k] for k in range(own.entries)]
                    )
                    for r in item.readings
                }
                item.readings, item.likely = list(whole.values()), whole.get(item.likely, "")
            else:
                item.readings, item.likely = [], ""
        for column, item in flagged.items():
            cells[column] = f"{REVIEW_PREFIX}{item.n}"
        rows[student] = cells
    for item in review:
        if item.value is None and not item.crop and not item.no_crop:
            item.no_crop = "no image: the scan kept no picture of this"
    unscanned = [s for s in sorted(layout.codes) if s not in rows]
    return ClassScan(layout, rows, review, crops, unscanned, len(pages))


MAX_SCANS_SHOWN = 4  # scans of a page whose crops a field read differently shows (a PDF scanned many times)


def _read_differently(
    column: str, sheet_page: int, scanned: Sequence[PageRead], spec: PageSpec | None
) -> Flag:
    """The flag of a column the scans of one page read differently, with each scan's crops of its
    fields (a vector's entries: each), one scan's below the other's, each labelled by its file."""
    own = [
        f
        for f in (spec.fields if spec is not None else ())
        if f.column == column or (f.kind == "concept" and f.column.rsplit(" mark", 1)[0] == column)
    ]
    shown = scanned[:MAX_SCANS_SHOWN]
    parts = [
        (copy.source + (f", entry {f.entry + 1}" if f.entries > 1 else ""), copy.field_crops[f.id])
        for copy in shown
        for f in own
        if f.id in copy.field_crops
    ]
    crop = stacked(parts) if parts else b""
    what = f"question {own[0].title.split(' ')[0]}: " if own else ""
    said = "; ".join(f"{copy.source}: {_said(copy.values.get(column))}" for copy in shown)
    more = len(scanned) - len(shown)
    return Flag(
        f"{what}read differently on {len(scanned)} scans of page {sheet_page} ({said}"
        + (f"; {more} more scans not shown)" if more else ")"),
        own[0].id if own else "",
        column,
        own[0].title if own else "",
        crop,
        no_crop="" if crop else NO_FIELD_CROP,
        whole_cell=True,
    )


def _said(entries: dict[int, str] | None) -> str:
    """What one scan read in a column, for the review: its entries, or that it read nothing sure."""
    if not entries:
        return "not read"
    return ", ".join(entries[k] or "empty" for k in sorted(entries))


def _cell(
    column: str,
    entries: dict[int, str],
    fields: Sequence[FieldSpec],
    cells: dict[str, str],
    flagged: dict[str, ReviewItem],
    add: Callable[..., ReviewItem],
    student: int,
    blanks: dict[tuple[str, int], tuple[int, bytes]] | None = None,
) -> None:
    own = [f for f in fields if f.column == column]
    if own and own[0].kind == "number" and own[0].shape:
        shape = own[0].shape
        texts = [entries.get(k, "") for k in range(own[0].entries)]
        if not any(texts):
            cells[column] = ""
            return
        if not all(texts):
            missing = [k for k, t in enumerate(texts) if not t]
            empty = ", ".join(str(k + 1) for k in missing)
            # The first empty entry's page and crop: where the instructor looks for what was left out.
            sheet_page, crop = (blanks or {}).get((column, missing[0]), (None, b""))
            flagged[column] = add(
                "field",
                f"question {own[0].title.split(' ')[0]}: entries {empty} are empty",
                crop,
                student=student,
                sheet_page=sheet_page,
                column=column,
                read=", ".join(texts),
            )
            return
        cells[column] = _vector_cell(shape, texts)
        return
    cells[column] = entries.get(0, "")


def _vector_cell(shape: Sequence[int], texts: Sequence[str]) -> str:
    """A vector's or matrix's entries as the answers file writes them: ``[1, 2]``, ``[[1, 2], [3, 4]]``."""
    if len(shape) == 2:
        rows = [texts[r * shape[1] : (r + 1) * shape[1]] for r in range(shape[0])]
        return "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    return "[" + ", ".join(texts) + "]"


def write_outputs(scan: ClassScan, answers: Path, review: Path, sheets: Path | None = None) -> list[Path]:
    """Write ``answers.csv``, the review file and its cropped images, all or nothing."""
    from attnquiz.engine.export.files import save

    folder = review.parent / (review.stem + "-images")
    outputs: dict[Path, bytes] = {answers: scan.csv().encode("utf-8")}
    for name, data in scan.crops.items():
        outputs[folder / Path(name).name] = data
    for item in scan.review:
        if item.crop:
            item.crop = str((folder / Path(item.crop).name).relative_to(review.parent))
    doc = {
        "format": "quiz-scan-review",
        "answers": str(answers.resolve()),
        "sheets": str(sheets.resolve()) if sheets is not None else "",
        "layout_columns": list(scan.layout.columns),
        "unscanned": scan.unscanned,
        "items": [item.to_json() for item in scan.review],
    }
    outputs[review] = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    if scan.crops:
        folder.mkdir(parents=True, exist_ok=True)
    return save(outputs)


def default_review(answers: Path) -> Path:
    return answers.with_name(answers.stem + ".review.json")


# ---------------------------------------------------------------------------------------------
# Settling the review
# ---------------------------------------------------------------------------------------------


def answers_text(path: Path) -> str:
    """The text of the answers.csv a scan fills in, read with its cap."""
    try:
        data = read_capped(path, MAX_ANSWERS_BYTES)
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('an answers file')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read the answers file ({exc.strerror or exc})") from exc
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise ScanError(f"{path}: not a UTF-8 text file ({exc.reason})") from None


def load_review(path: Path) -> tuple[dict[str, Any], list[ReviewItem]]:
    try:
        data = json.loads(read_capped(path, MAX_JSON_BYTES))
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('a review file')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read the review file ({exc.strerror or exc})") from exc
    except ValueError as exc:
        raise ScanError(f"{path}: not a review file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != "quiz-scan-review":
        raise ScanError(f"{path}: not a review file written by `quiz scan`")
    return data, [ReviewItem.from_json(item) for item in data["items"]]


def settle(
    review_path: Path,
    answers: Path,
    item: ReviewItem,
    value: str,
    items: list[ReviewItem],
    doc: dict[str, Any],
) -> None:
    """Record ``value`` for ``item`` and put it into ``answers.csv`` in place of ``?review N``."""
    import csv
    import io

    from attnquiz.engine.export.files import save

    text = answers_text(answers)
    rows = list(csv.reader(io.StringIO(text)))
    marker = f"{REVIEW_PREFIX}{item.n}"
    for row in rows[1:]:
        for k, cell in enumerate(row):
            if cell == marker:
                row[k] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    item.value = value
    doc["items"] = [i.to_json() for i in items]
    save(
        {
            answers: buffer.getvalue().encode("utf-8"),
            review_path: (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8"),
        }
    )


MAX_SETTLED_LENGTH = 500
"""Characters an instructor's answer may have (a matrix of a few dozen entries fits)."""


def readings(item: ReviewItem) -> list[str]:
    """The readings to offer for a field as choices: those the scan found (a number with two bubbles in
    a column: each of them; the likely one first), or each option filled on a choice question with a
    doubtful mark (``A``, ``C``) and all of them together; else nothing (the answer is typed)."""
    if item.kind != "field":
        return []
    parts = [p.strip() for p in item.read.split(",") if p.strip()]
    letters: list[str] = []
    if parts and all(len(p) == 1 and p.isalpha() and p.isupper() for p in parts):
        letters = parts + ([", ".join(parts)] if len(parts) > 1 else [])
    return list(dict.fromkeys([*item.readings, *letters]))


def settle_answer(
    review_path: Path,
    answers: Path,
    item: ReviewItem,
    value: str,
    items: list[ReviewItem],
    doc: dict[str, Any],
) -> list[ReviewItem]:
    """Settle ``item`` with what the instructor gave, as `quiz scan --fix` and the `quiz serve` page
    both do: a field takes the answer as the student wrote it (empty: no answer); a page whose QR
    code could not be read takes ``STUDENT PAGE`` and is read (what it leaves is returned, and added
    to the review); a page missing or scanned twice can only be scanned again. Refused with a
    `ScanError` that says why, with nothing written."""
    if item.value is not None:
        raise ScanError(f"item {item.n} was already settled ({item.value or 'no answer'})")
    text = value.strip()
    if len(text) > MAX_SETTLED_LENGTH:
        raise AnswerRefused(f"an answer of at most {MAX_SETTLED_LENGTH} characters, please")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise AnswerRefused("an answer on one line, without control characters")
    if item.kind == "page" and text.lower() == STRAY:
        _record(review_path, item, STRAY_VALUE, items, doc)
        return []
    if item.kind == "missing":
        if text.lower() != ABSENT:
            raise AnswerRefused(f"type {ABSENT} if the student did not hand this page in; else scan it again")
        # Its cells become blank answers: counted as not answered, as on a sheet handed in empty.
        settle(review_path, answers, item, "", items, doc)
        _record(review_path, item, ABSENT_VALUE, items, doc)
        return []
    if item.kind == "page":
        if not item.rereadable:
            raise ScanError(
                f"this page's image cannot be read: scan it again, or type {STRAY} to set it aside"
            )
        split = text.split()
        student, page = (whole(split[0]), whole(split[1])) if len(split) == 2 else (None, None)
        if student is None or page is None:
            raise AnswerRefused("give the student number and the page of their sheet, e.g. 12 1")
        return settle_page(review_path, answers, item, student, page, items, doc)
    if item.kind != "field":
        raise ScanError("scan this page again (with --overwrite, or into another file)")
    if text.startswith(REVIEW_PREFIX.strip()):
        raise AnswerRefused(f"{text!r} is how the answers file marks a cell under review, not an answer")
    refused = spreadsheet_formula(text)
    if refused:
        raise AnswerRefused(refused)
    settle(review_path, answers, item, text, items, doc)
    return []


_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")


def spreadsheet_formula(text: str) -> str:
    """Why ``text`` may not go into a cell of ``answers.csv`` ("" when it may): a spreadsheet that opens
    the file runs a cell starting with ``=``, ``+``, ``-`` or ``@`` as a formula, and a formula can call
    out (``=HYPERLINK(…)``, ``=WEBSERVICE(…)``, a ``cmd|`` DDE link). A student's answer never starts
    with ``=`` or ``@``; one starting with a sign may be a number or a formula of the quiz's own
    functions (``-3``, ``-exp(x)``), and is refused only when it calls anything else or holds a
    character that only a spreadsheet formula uses (``|``, ``!``, ``"``)."""
    from attnquiz.engine.formula.arithmetic import FUNCTIONS

    if not text or text[0] not in "=+-@\t\r":
        return ""
    if text[0] in "=@\t\r":
        return f"an answer may not start with {text[0]!r}: a spreadsheet runs such a cell as a formula"
    if any(c in text for c in '|!"') or any(name.lower() not in FUNCTIONS for name in _CALL.findall(text)):
        return (
            "a spreadsheet would run this as a formula (a sign, then a call of a function that is not "
            "one of the quiz's, or | ! \"): write a product with *, e.g. -x*(y+1)"
        )
    return ""


STRAY = "stray"
"""What sets aside a page that is not one of the class's (another export's, a blank sheet, a cover)."""
STRAY_VALUE = "set aside: not a page of these answer sheets"
ABSENT = "absent"
"""What records a page missing from a sheet as not handed in (its answers blank)."""
ABSENT_VALUE = "not handed in (its answers blank)"


def _record(
    review_path: Path, item: ReviewItem, value: str, items: list[ReviewItem], doc: dict[str, Any]
) -> None:
    """Record ``value`` as how ``item`` was settled, in the review file alone."""
    from attnquiz.engine.export.files import save

    item.value = value
    doc["items"] = [i.to_json() for i in items]
    save({review_path: (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")})


def _upright(image: npt.NDArray[np.uint8], layout: Layout) -> npt.NDArray[np.uint8]:
    """A resampled page turned the right way up: the sheet's title and instructions are at the top left,
    where the bottom right is empty; a page that shows neither way is refused, not guessed."""
    import numpy as np

    cv2 = _cv2()
    left, top = int(40 * PX_PER_PT), int(40 * PX_PER_PT)
    region = (slice(top, top + int(120 * PX_PER_PT)), slice(left, left + int(220 * PX_PER_PT)))
    turned = cv2.rotate(image, cv2.ROTATE_180)
    ink = float(np.mean(image[region] < 128))
    ink_turned = float(np.mean(turned[region] < 128))
    if ink > 2 * ink_turned and ink > 0.01:
        return image
    if ink_turned > 2 * ink and ink_turned > 0.01:
        return np.asarray(turned, dtype=np.uint8)
    raise ScanError("cannot tell which way up this page is: scan it again")


def settle_page(
    review_path: Path,
    answers: Path,
    item: ReviewItem,
    student: int,
    sheet_page: int,
    items: list[ReviewItem],
    doc: dict[str, Any],
) -> list[ReviewItem]:
    """Read a page whose QR code could not be read, now that the instructor says whose it is, into
    ``answers.csv``; returns what it leaves for review (added to the review file)."""
    import csv
    import io

    import numpy as np

    from attnquiz.engine.export.files import save

    cv2 = _cv2()
    if not item.rereadable or not item.crop:
        raise ScanError("this page's image cannot be read: scan it again")
    if not doc.get("sheets"):
        raise ScanError("the review file does not say which answer-sheets.json it was scanned with")
    layout = load_layout(Path(doc["sheets"]))
    spec = layout.pages.get((student, sheet_page))
    if spec is None:
        raise ScanError(f"the answer sheets have no page {sheet_page} for student {student}")
    picture = review_path.parent / item.crop
    try:
        data = np.frombuffer(read_capped(picture, MAX_SCAN_BYTES), dtype=np.uint8)
    except TooLarge as exc:
        raise ScanError(f"{picture}: {exc.said('a scanned page')}") from None
    except OSError as exc:
        raise ScanError(f"{picture}: cannot read the page's image ({exc.strerror or exc})") from exc
    image = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    if image is None:
        raise ScanError(f"{picture}: cannot read the page's image")
    upright = _upright(np.asarray(image, dtype=np.uint8), layout)
    read = read_image(upright, layout, item.source, 0, (student, sheet_page))
    if read.problem:
        raise ScanError(read.problem)
    partial = assemble(layout, [read])
    columns = {f.column for f in spec.fields if f.kind != "student"}
    columns |= {f.column.rsplit(" mark", 1)[0] for f in spec.fields if f.kind == "concept"}
    folder = review_path.parent / (review_path.stem + "-images")
    added: list[ReviewItem] = []
    renumber: dict[str, str] = {}
    outputs: dict[Path, bytes] = {}
    rows = list(csv.reader(io.StringIO(answers_text(answers))))
    first_page_of_student = not any(r and r[0] == str(student) for r in rows[1:])
    if first_page_of_student:
        # The scan had no page of this student: their other pages are missing until scanned (their
        # cells wait for review, never blank answers), and the row is written whole.
        columns = set(partial.rows[student]) - {"student", "code"}
    for new in partial.review:
        if new.kind != "field" and not (new.kind == "missing" and first_page_of_student):
            continue
        old = new.n
        new.n = max((i.n for i in items), default=0) + 1
        if new.crop:
            target = folder / f"{new.n:04d}.png"
            outputs[target] = partial.crops[new.crop]
            new.crop = str(target.relative_to(review_path.parent))
        renumber[f"{REVIEW_PREFIX}{old}"] = f"{REVIEW_PREFIX}{new.n}"
        items.append(new)
        added.append(new)
    cells = partial.rows[student]
    header = rows[0]
    row = next((r for r in rows[1:] if r and r[0] == str(student)), None)
    if row is None:
        row = [""] * len(header)
        row[header.index("student")], row[header.index("code")] = str(student), layout.codes.get(student, "")
        rows.append(row)
        rows[1:] = sorted(rows[1:], key=lambda r: (whole(r[0]) or 0) if r else 0)
    for column in columns:
        if column in header:
            value = cells.get(column, "")
            row[header.index(column)] = renumber.get(value, value)
    for other in items:  # the page "missing" from this student's sheet has now been read
        if other.kind == "missing" and (other.student, other.sheet_page) == (student, sheet_page):
            other.value = "read from a page named by hand"
    item.value = f"student {student} page {sheet_page}"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    doc["items"] = [i.to_json() for i in items]
    outputs[answers] = buffer.getvalue().encode("utf-8")
    outputs[review_path] = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    save(outputs)
    return added


__all__ = [
    "AnswerRefused",
    "ClassScan",
    "Flag",
    "Layout",
    "PageRead",
    "ReviewItem",
    "ScanError",
    "assemble",
    "default_review",
    "layout_from_json",
    "load_layout",
    "load_page",
    "load_review",
    "pages_of",
    "read_image",
    "read_page",
    "read_scans",
    "readings",
    "settle",
    "settle_answer",
    "settle_page",
    "write_outputs",
]
