"""PNG and JPEG files read far enough to know they are whole pictures of a size renderers can afford.

A signature is not enough: a 1.2 MB PNG can declare 100000 × 100000 pixels (Typst then asks for
10 GB while making the PDF), and a truncated file or a bogus JPEG header fails only deep inside an
export. So a bank's image is decoded here when the bank loads:

- PNG: every chunk's length and CRC, the IHDR fields, the chunk order (IHDR first, IDAT together,
  IEND last), and the whole compressed image data inflated (in bounded pieces, discarding the
  output) to the exact size its header implies;
- JPEG: the marker segments up to the start of the scan (lengths in bounds, a frame header with
  the size and components), then an end-of-image marker at the end of the file.

Both within `MAX_PIXELS` (and `MAX_SIDE` a side). Errors are `RasterError` with a reason a bank's
author can act on; `attnquiz.engine.bank.images` puts the file's name in front.
"""

from __future__ import annotations

import struct
import zlib

MAX_PIXELS = 4096 * 4096
"""The most pixels an image may have (16.8 million: 64 MiB as RGBA in a renderer)."""
MAX_SIDE = 16384
"""The widest or tallest an image may be, in pixels."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_PNG_DEPTHS = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
_INFLATE_PIECE = 1 << 20
# Adam7: (x start, y start, x step, y step) of each of the seven passes.
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


class RasterError(ValueError):
    """A PNG or JPEG file that is not a whole picture, or is too large to render."""


def check_size(width: int, height: int) -> None:
    """Refuse a picture of no pixels, or of more than the renderers can afford."""
    if width <= 0 or height <= 0:
        raise RasterError(f"the header says {width} × {height} pixels, which is no picture")
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise RasterError(
            f"{width:,} × {height:,} pixels is too large: at most {MAX_SIDE:,} a side and "
            f"{MAX_PIXELS:,} pixels in all (scale the picture down)"
        )


def png_size(data: bytes) -> tuple[int, int]:
    """The width and height of a whole, well-formed PNG file; raises RasterError otherwise."""
    if not data.startswith(PNG_SIGNATURE):
        raise RasterError("not a PNG file (its first bytes are not a PNG signature)")
    pos = len(PNG_SIGNATURE)
    header: tuple[int, int, int, int, int] | None = None
    compressed: list[bytes] = []
    palette = False
    idat_done = False
    while True:
        if pos + 8 > len(data):
            raise RasterError("the PNG file is cut short (it ends without an IEND chunk)")
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        end = pos + 8 + length + 4
        if length > 2**31 - 1 or end > len(data):
            raise RasterError(f"the PNG file is cut short (its {_kind(kind)} chunk runs past the end)")
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(kind + body) != crc:
            raise RasterError(f"the PNG file is damaged (its {_kind(kind)} chunk fails its checksum)")
        if header is None and kind != b"IHDR":
            raise RasterError("not a PNG file (it does not start with an IHDR chunk)")
        if kind == b"IHDR":
            if header is not None or length != 13:
                raise RasterError("the PNG file has a bad IHDR chunk")
            width, height, depth, color, compression, filtering, interlace = struct.unpack(">IIBBBBB", body)
            if color not in _PNG_DEPTHS or depth not in _PNG_DEPTHS[color]:
                raise RasterError(f"the PNG file has an impossible bit depth {depth} for colour type {color}")
            if compression != 0 or filtering != 0 or interlace not in (0, 1):
                raise RasterError("the PNG file uses an unknown compression, filter or interlace method")
            check_size(width, height)
            header = (width, height, depth, color, interlace)
        elif kind == b"PLTE":
            palette = True
        elif kind == b"IDAT":
            if idat_done:
                raise RasterError("the PNG file's image data is split by other chunks")
            compressed.append(body)
        elif kind == b"IEND":
            if end != len(data):
                raise RasterError("the PNG file has bytes after its IEND chunk")
            break
        if compressed and kind != b"IDAT":
            idat_done = True
        pos = end
    assert header is not None
    width, height, depth, color, interlace = header
    if not compressed:
        raise RasterError("the PNG file has no image data (no IDAT chunk)")
    if color == 3 and not palette:
        raise RasterError("the PNG file uses a palette but has none (no PLTE chunk)")
    _inflate_exactly(compressed, _png_data_size(width, height, depth, _PNG_CHANNELS[color], interlace))
    return width, height


def _kind(kind: bytes) -> str:
    return kind.decode("latin-1") if kind.isalpha() else repr(kind)


def _png_data_size(width: int, height: int, depth: int, channels: int, interlace: int) -> int:
    """The bytes of filtered scan lines the header implies (one filter byte a line, each pass of
    an interlaced image its own lines)."""

    def lines(w: int, h: int) -> int:
        return 0 if w == 0 or h == 0 else h * (1 + (w * channels * depth + 7) // 8)

    if interlace == 0:
        return lines(width, height)

    def span(size: int, start: int, step: int) -> int:
        return (size - start + step - 1) // step if size > start else 0

    return sum(lines(span(width, x0, dx), span(height, y0, dy)) for x0, y0, dx, dy in _ADAM7)


def _inflate_exactly(pieces: list[bytes], expected: int) -> None:
    """Inflate the image data in bounded pieces (the output is counted, not kept): it must be one
    whole zlib stream of exactly ``expected`` bytes."""
    inflater = zlib.decompressobj()
    produced = 0
    try:
        for piece in pieces:
            pending = piece
            while pending:
                produced += len(inflater.decompress(pending, _INFLATE_PIECE))
                if produced > expected:
                    raise RasterError("the PNG file's image data is larger than its header says")
                pending = inflater.unconsumed_tail
        while not inflater.eof and produced <= expected:
            more = inflater.decompress(b"", _INFLATE_PIECE)
            if not more:
                break
            produced += len(more)
    except zlib.error:
        raise RasterError("the PNG file's image data is damaged (it does not inflate)") from None
    if not inflater.eof:
        raise RasterError("the PNG file's image data is cut short")
    if produced != expected:
        raise RasterError(
            f"the PNG file's image data has {produced:,} bytes where its header implies {expected:,}"
        )


# JPEG start-of-frame markers (the size is in them): C0-CF but DHT (C4), JPG (C8) and DAC (CC).
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_STANDALONE = {0x01, *range(0xD0, 0xD8)}


def jpeg_size(data: bytes) -> tuple[int, int]:
    """The width and height of a JPEG file with a well-formed header up to its scan and an
    end-of-image marker; raises RasterError otherwise."""
    if not data.startswith(b"\xff\xd8\xff"):
        raise RasterError("not a JPEG file (its first bytes are not a JPEG signature)")
    pos = 2
    size: tuple[int, int] | None = None
    while True:
        if pos + 2 > len(data):
            raise RasterError("the JPEG file is cut short (it ends before its image data)")
        if data[pos] != 0xFF:
            raise RasterError(f"the JPEG file is damaged (no marker at byte {pos:,})")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill bytes before a marker
            pos += 1
            continue
        if marker in _STANDALONE:
            pos += 2
            continue
        if marker in (0xD8, 0xD9) or marker == 0x00:
            raise RasterError(f"the JPEG file is damaged (marker {marker:02X} in its header)")
        if pos + 4 > len(data):
            raise RasterError("the JPEG file is cut short (in a marker segment)")
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if length < 2:
            raise RasterError(f"the JPEG file is damaged (segment {marker:02X} has a bad length)")
        if pos + 2 + length > len(data):
            raise RasterError(f"the JPEG file is cut short (its segment {marker:02X} runs past the end)")
        body = data[pos + 4 : pos + 2 + length]
        if marker in _SOF:
            if size is not None or len(body) < 6:
                raise RasterError("the JPEG file has a bad frame header")
            precision, height, width, components = struct.unpack(">BHHB", body[:6])
            if precision not in (8, 12, 16) or components not in (1, 2, 3, 4):
                raise RasterError("the JPEG file has a bad frame header")
            if len(body) != 6 + 3 * components:
                raise RasterError("the JPEG file has a bad frame header")
            check_size(width, height)
            size = (width, height)
        elif marker == 0xDA:  # start of scan: the entropy-coded data follows
            if size is None:
                raise RasterError("the JPEG file has no frame header before its image data")
            break
        pos += 2 + length
    if not data.rstrip(b"\x00").endswith(b"\xff\xd9"):
        raise RasterError("the JPEG file is cut short (it has no end-of-image marker)")
    return size


__all__ = ["MAX_PIXELS", "MAX_SIDE", "RasterError", "check_size", "jpeg_size", "png_size"]
