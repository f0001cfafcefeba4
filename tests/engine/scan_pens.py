"""Filled answer sheets for the scanner's tests, made from the layout file alone.

A printed page is rendered from the answer-sheet PDF (pypdfium2) at a scan resolution; marks are
drawn where ``answer-sheets.json`` says the bubbles are, by simulated pens and pencils; then the
page goes through what a scanner and a careless hand do: rotation, scale, skew, a little
perspective, blur, noise and JPEG compression. Every mark knows what it is meant to be, so a test
can tell a clear mark read right from an ambiguous one, which must be flagged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

Mark = str
"""``full``, ``partial``, ``light`` (clear marks: read as filled); ``faint``, ``erased`` (ambiguous:
flagged); ``crossed`` (an X through a filled bubble: cancelled, never read as a mark)."""
CLEAR = ("full", "partial", "light")
AMBIGUOUS = ("faint", "erased")


@dataclass(frozen=True)
class Pen:
    ink: float  # grey level of the stroke, 0 black … 255 paper
    jitter: float  # how far the fill strays from the circle (in radii)


PEN = Pen(ink=25.0, jitter=0.08)
PENCIL = Pen(ink=70.0, jitter=0.12)


def draw_mark(
    page: np.ndarray, x: float, y: float, r: float, mark: Mark, pen: Pen, rng: np.random.Generator
) -> None:
    """Draw one mark on ``page`` (grey, uint8) at bubble centre (x, y), radius r, in pixels."""
    h, w = page.shape
    span = int(r * 2.4) + 2
    x0, y0 = max(0, int(x) - span), max(0, int(y) - span)
    x1, y1 = min(w, int(x) + span + 1), min(h, int(y) + span + 1)
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    dx, dy = xs - x, ys - y
    dist = np.hypot(dx, dy) / r
    region = page[y0:y1, x0:x1].astype(np.float32)
    angle = np.arctan2(dy, dx)
    wobble = 1.0 + pen.jitter * np.sin(3 * angle + rng.uniform(0, 6.3)) + rng.uniform(-0.05, 0.1)

    def lay(mask: np.ndarray, level: float) -> None:
        # ink darkens what is there (multiply), as a pencil on a printed circle does
        texture = rng.normal(0.0, 10.0, mask.shape).astype(np.float32)
        target = np.clip(level + texture, 0, 255)
        region[:] = np.where(mask, np.minimum(region, target), region)

    if mark == "full":
        lay(dist <= 0.95 * wobble, pen.ink)
    elif mark == "light":
        lay(dist <= 0.92 * wobble, 95.0 + rng.uniform(0, 20))  # a light pencil hand: grey, but all over
    elif mark == "partial":
        # most of the bubble, with a white sliver left on one side
        side = rng.uniform(0, 2 * math.pi)
        keep = (dx * math.cos(side) + dy * math.sin(side)) / r < rng.uniform(0.35, 0.55)
        lay((dist <= 0.95 * wobble) & keep, pen.ink)
    elif mark == "faint":
        lay(dist <= 0.9 * wobble, 180.0 + rng.uniform(0, 12))
    elif mark == "erased":
        # what a rubber leaves of a pencil mark: a grey smudge, patchy
        patches = rng.random(dist.shape) < 0.8
        lay((dist <= 1.0 * wobble) & patches, 175.0 + rng.uniform(0, 15))
    elif mark == "crossed":
        lay(dist <= 0.95 * wobble, pen.ink)
        width = max(1.2, 0.22 * r)
        reach = rng.uniform(1.95, 2.3)
        for slope in (1.0, -1.0):
            along = (dx + slope * dy) / math.sqrt(2)
            across = np.abs(dx - slope * dy) / math.sqrt(2)
            lay((across <= width) & (np.abs(along) <= reach * r), pen.ink)
    else:
        raise ValueError(mark)
    page[y0:y1, x0:x1] = np.clip(region, 0, 255).astype(np.uint8)


def write_digit(
    page: np.ndarray, x: float, y: float, height: float, digit: str, pen: Pen, rng: np.random.Generator
) -> None:
    """Write ``digit`` by hand, centred at (x, y), about ``height`` pixels tall, in ``pen``'s ink."""
    font = int(
        rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_PLAIN])
    )
    thickness = max(1, round(height / 9))
    (w, h), _ = cv2.getTextSize(digit, font, 1.0, thickness)
    scale = height * rng.uniform(0.55, 0.8) / max(1, h)
    (w, h), _ = cv2.getTextSize(digit, font, scale, thickness)
    ox = x - w / 2 + rng.uniform(-0.12, 0.12) * height
    oy = y + h / 2 + rng.uniform(-0.1, 0.1) * height
    level = int(min(150, pen.ink + rng.uniform(0, 25)))
    _ink(page, int(x), int(y), int(2 * height), lambda canvas, left, top: cv2.putText(
        canvas, digit, (int(ox) - left, int(oy) - top), font, scale, (level,), thickness, cv2.LINE_AA
    ))  # fmt: skip


def _ink(page: np.ndarray, x: int, y: int, span: int, draw: Callable[[np.ndarray, int, int], object]) -> None:
    """Draw with ``draw`` (on a white canvas, given its top-left corner) around (x, y), darkening the page."""
    h, w = page.shape
    left, top = max(0, x - span), max(0, y - span)
    right, bottom = min(w, x + span), min(h, y + span)
    canvas = np.full((bottom - top, right - left), 255, np.uint8)
    draw(canvas, left, top)
    np.minimum(page[top:bottom, left:right], canvas, out=page[top:bottom, left:right])


def cross_out(
    page: np.ndarray, x: float, y: float, r: float, stroke: float, pen: Pen, rng: np.random.Generator
) -> None:
    """An X of ``stroke`` pixels wide lines through the bubble at (x, y) of radius ``r``, reaching past it
    (as a fine liner draws one, over a filled bubble)."""
    draw_mark(page, x, y, r, "full", pen, rng)
    reach = rng.uniform(1.9, 2.3) * r
    for slope in (1.0, -1.0):
        tilt = rng.uniform(-0.12, 0.12)
        dx, dy = reach * math.cos(math.pi / 4 + tilt), slope * reach * math.sin(math.pi / 4 + tilt)
        ends = (int(x - dx), int(y - dy)), (int(x + dx), int(y + dy))

        def line(canvas: np.ndarray, left: int, top: int, ends: tuple[tuple[int, int], ...] = ends) -> None:
            start, end = ((a - left, b - top) for a, b in ends)
            cv2.line(canvas, start, end, (int(pen.ink),), max(1, round(stroke)), cv2.LINE_AA)

        _ink(page, int(x), int(y), int(reach) + 4, line)


def bilevel(png_or_jpeg: bytes, cut: int) -> bytes:
    """A scan as a black-and-white scanner returns it: every pixel black or white at ``cut``."""
    gray = np.asarray(cv2.imdecode(np.frombuffer(png_or_jpeg, np.uint8), cv2.IMREAD_GRAYSCALE))
    ok, data = cv2.imencode(".png", np.where(gray < cut, 0, 255).astype(np.uint8))
    assert ok
    return bytes(data.tobytes())


def one_bit_pdf(png_or_jpeg: bytes, dpi: int, cut: int) -> bytes:
    """A page as a black-and-white scanner's "scan to PDF" writes it: a 1-bit image (written by hand here,
    a few PDF objects around a Flate-compressed bitmap, as PDFium's own API writes 8-bit images only)."""
    import zlib

    gray = np.asarray(cv2.imdecode(np.frombuffer(png_or_jpeg, np.uint8), cv2.IMREAD_GRAYSCALE))
    h, w = gray.shape
    data = zlib.compress(np.packbits((gray >= cut).astype(np.uint8), axis=1).tobytes())
    width, height = w * 72 / dpi, h * 72 / dpi
    content = f"q {width:.2f} 0 0 {height:.2f} 0 0 cm /Im0 Do Q".encode()
    image = (
        f"<</Type/XObject/Subtype/Image/Width {w}/Height {h}/ColorSpace/DeviceGray/BitsPerComponent 1"
        f"/Filter/FlateDecode/Length {len(data)}>>stream\n"
    ).encode()
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        f"<</Type/Page/Parent 2 0 R/MediaBox[0 0 {width:.2f} {height:.2f}]"
        "/Resources<</XObject<</Im0 4 0 R>>>>/Contents 5 0 R>>".encode(),
        image + data + b"\nendstream",
        f"<</Length {len(content)}>>stream\n".encode() + content + b"\nendstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer<</Size {len(objects) + 1}/Root 1 0 R>>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


@dataclass(frozen=True)
class Scanner:
    dpi: int
    angle: float = 0.0  # degrees
    scale: float = 1.0
    shear: float = 0.0
    perspective: float = 0.0
    blur: float = 0.0
    noise: float = 0.0
    jpeg: int = 0  # quality, 0 for PNG


def scan(page: np.ndarray, scanner: Scanner, rng: np.random.Generator) -> bytes:
    """The page as a scanner returns it (PNG or JPEG bytes)."""
    # The scanner's bed is larger than the paper: a paper turned a few degrees keeps its corners.
    pad = int(0.04 * max(page.shape))
    page = cv2.copyMakeBorder(page, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=238)
    h, w = page.shape
    centre = np.array([w / 2, h / 2])
    a = math.radians(scanner.angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) * scanner.scale
    rot = rot @ np.array([[1.0, scanner.shear], [0.0, 1.0]])
    src = np.array([[0, 0], [w, 0], [0, h], [w, h]], dtype=np.float64)
    dst = (src - centre) @ rot.T + centre
    dst[0] += scanner.perspective * w * np.array([1, 0.3])
    dst[1] += scanner.perspective * w * np.array([-0.5, 0.6])
    transform = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    out = cv2.warpPerspective(page, transform, (w, h), flags=cv2.INTER_LINEAR, borderValue=245)
    if scanner.blur:
        out = cv2.GaussianBlur(out, (0, 0), scanner.blur)
    if scanner.noise:
        noise = np.empty(out.shape, np.int16)
        cv2.setRNGSeed(int(rng.integers(2**31)))
        cv2.randn(
            noise, np.array([0.0]), np.array([scanner.noise])
        )  # numpy's normal is ten times slower on a 300 dpi page
        out = np.clip(out.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    if scanner.jpeg:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scanner.jpeg])
    else:
        ok, data = cv2.imencode(".png", out)
    assert ok
    return bytes(data.tobytes())


def render(pdf: bytes, dpi: int, index: int) -> np.ndarray:
    """Page ``index`` (0-based) of the answer-sheet PDF as the printer puts it on paper, at ``dpi``."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    bitmap = document[index].render(scale=dpi / 72, grayscale=True)
    image = np.array(bitmap.to_numpy(), dtype=np.uint8).reshape(bitmap.height, bitmap.width)
    document.close()
    return image
