"""A hostile corpus for the readers of a bank's images and maths, and for every export of them.

Each input is what an attacker (or a careless colleague) could put next to a bank: SVGs that try to
run or fetch something past a pattern match, PNG and JPEG headers that lie, formulas nested past
any renderer's stack, and file names built to break out of HTML, XML and Typst. Every one is
refused at load with a located message, or comes out of every export as inert data.
"""

from __future__ import annotations

import base64
import re
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine.bank import image_raster, image_svg, images
from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.errors import BankError
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain
from attnquiz.engine.markup import tex as markup

DATA = Path(__file__).parent / "data" / "images"
JPEG = (DATA / "python.jpg").read_bytes()
SVG_NS = "http://www.w3.org/2000/svg"
QUICK = 2.0
"""Seconds within which every hostile input must be answered (measured, with a message)."""


def timed(action: object) -> float:
    began = time.monotonic()
    assert callable(action)
    action()
    return time.monotonic() - began


# ---------------------------------------------------------------------------------------------
# PNG and JPEG files that lie
# ---------------------------------------------------------------------------------------------


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(
    width: int = 8,
    height: int = 4,
    *,
    rows: int | None = None,
    color: int = 2,
    depth: int = 8,
    interlace: int = 0,
    raw: bytes | None = None,
    palette: bool = False,
) -> bytes:
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    line = 1 + (width * channels * depth + 7) // 8
    data = raw if raw is not None else b"\x00" * line * (height if rows is None else rows)
    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    body = chunk(b"IHDR", header) + (chunk(b"PLTE", b"\x00\x00\x00") if palette else b"")
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IDAT", zlib.compress(data)) + chunk(b"IEND", b"")


def adam7_size(width: int, height: int, channels: int = 3) -> int:
    total = 0
    for x0, y0, dx, dy in (
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    ):
        w = (width - x0 + dx - 1) // dx if width > x0 else 0
        h = (height - y0 + dy - 1) // dy if height > y0 else 0
        total += 0 if w == 0 or h == 0 else h * (1 + w * channels)
    return total


def damaged_crc(data: bytes) -> bytes:
    return data[:29] + bytes([data[29] ^ 0xFF]) + data[30:]


def huge_png() -> bytes:
    """A small file that declares 100000 × 100000 pixels (Typst would ask for 10 GB)."""
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 1000))
        + chunk(b"IEND", b"")
    )


def jpeg_frame(width: int, height: int) -> bytes:
    sof = (
        b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    )
    return b"\xff\xd8" + sof + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\x12\x34" + b"\xff\xd9"


BAD_RASTERS = [
    ("huge.png", huge_png(), "100,000 × 100,000 pixels is too large"),
    ("wide.png", png(20_000, 1), "too large"),
    ("zero.png", png(0, 4), "no picture"),
    ("cut.png", png()[:-20], "cut short"),
    ("cut-header.png", png()[:20], "cut short"),
    ("crc.png", damaged_crc(png()), "checksum"),
    ("rows.png", png(8, 4, rows=3), "image data has"),
    ("more.png", png(8, 4, rows=9), "larger than its header"),
    ("garbage.png", png(raw=b"").replace(zlib.compress(b""), b"\x78\x9cnot zlib"), ""),
    ("after.png", png() + b"trailing", "after its IEND"),
    ("no-iend.png", png()[:-12], "IEND"),
    ("palette.png", png(color=3), "no PLTE"),
    ("depth.png", png(color=2, depth=4), "impossible bit depth"),
    ("signature.png", b"GIF89a" + png()[6:], "not a PNG"),
    ("truncated.jpg", JPEG[: len(JPEG) // 2], "cut short"),
    ("bogus.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 64 + b"\xff\xd9", "damaged"),
    ("no-frame.jpg", b"\xff\xd8\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\x12\xff\xd9", "no frame header"),
    ("huge.jpg", jpeg_frame(65_535, 65_535), "65,535 × 65,535 pixels is too large"),
    ("length.jpg", b"\xff\xd8\xff\xe0\x00\x01" + b"\x00" * 10, "bad length"),
    ("past-end.jpg", b"\xff\xd8\xff\xe0\xff\xff" + b"\x00" * 10, "runs past the end"),
    ("png-as.jpg", png(), "not a JPEG"),
]


@pytest.mark.parametrize(("name", "data", "said"), BAD_RASTERS, ids=[n for n, _, _ in BAD_RASTERS])
def test_a_lying_raster_image_is_refused_at_load_with_its_reason(
    tmp_path: Path, name: str, data: bytes, said: str
) -> None:
    (tmp_path / name).write_bytes(data)
    began = time.monotonic()
    with pytest.raises(images.ImageError) as caught:
        images.load(tmp_path, name)
    assert time.monotonic() - began < QUICK
    message = str(caught.value)
    assert message.startswith(f"image {name!r}: "), message
    assert said in message, message
    assert "\n" not in message


@pytest.mark.parametrize(
    "data",
    [
        png(),
        png(3, 5, color=0, depth=1),
        png(7, 3, color=6, depth=16),
        png(5, 5, color=3, palette=True, depth=2),
    ],
    ids=["rgb", "grey-1bit", "rgba-16", "palette-2bit"],
)
def test_a_whole_png_of_any_kind_loads(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "ok.png").write_bytes(data)
    assert images.load(tmp_path, "ok.png").data == data


def test_an_interlaced_png_is_measured_pass_by_pass(tmp_path: Path) -> None:
    data = png(13, 7, interlace=1, raw=b"\0" * adam7_size(13, 7))
    assert image_raster.png_size(data) == (13, 7)
    wrong = png(13, 7, interlace=1, raw=b"\0" * (13 * 3 + 1) * 7)  # the rows of a non-interlaced image
    with pytest.raises(image_raster.RasterError, match="image data has"):
        image_raster.png_size(wrong)


def test_a_decompression_bomb_within_the_budget_is_read_in_bounded_time() -> None:
    side = 4096  # the largest square the budget allows, RGBA: 64 MiB inflated from about 65 KB
    data = png(side, side, color=6)
    took = timed(lambda: image_raster.png_size(data))
    print(f"{len(data):,} bytes inflated to {side * (side * 4 + 1):,} in {took:.2f} s")
    assert took < QUICK * 5
    over = png(side + 1, side, color=6, rows=1)
    began = time.monotonic()
    with pytest.raises(image_raster.RasterError, match="too large"):
        image_raster.png_size(over)
    assert time.monotonic() - began < QUICK


def test_a_real_jpeg_loads_and_its_size_is_read() -> None:
    assert image_raster.jpeg_size(JPEG) == (16, 16)


# ---------------------------------------------------------------------------------------------
# SVG: rebuilt from an allow-list, or refused
# ---------------------------------------------------------------------------------------------

S = f'<svg xmlns="{SVG_NS}" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'
HOSTILE_SVGS = [
    (
        "tab-entity-scheme",
        S + '<a href="java&#x9;script:alert(1)"><rect width="1" height="1"/></a></svg>',
        "<a>",
    ),
    ("entity-href", S + '<use xlink:href="&#106;avascript:alert(1)"/></svg>', "outside itself"),
    ("css-escape-url", S + "<style>rect { fill: u\\72l(http://evil/x) }</style></svg>", "not allowed"),
    ("css-escape-import", S + "<style>@\\69mport 'http://evil/x.css';</style></svg>", "CSS"),
    ("css-import", S + "<style>@import url(http://evil/x.css);</style></svg>", "selector"),
    ("css-escape-in-attribute", S + '<rect style="fill: u\\72l(http://evil/x)"/></svg>', "not allowed"),
    ("url-in-attribute", S + '<rect fill="url(http://evil/x#a)"/></svg>', "url(#id)"),
    ("url-quoted", S + '<rect fill="url(&quot;http://evil/x&quot;)"/></svg>', "url(#id)"),
    ("url-spaced", S + '<rect fill="url (http://evil/x)"/></svg>', "url(#id)"),
    ("expression", S + '<rect fill="expression(alert(1))"/></svg>', "expression()"),
    ("behavior", S + '<rect style="behavior: url(#x)"/></svg>', "behavior"),
    ("moz-binding", S + '<rect style="-moz-binding: url(#x)"/></svg>', "-moz-binding"),
    (
        "foreign-script",
        S + '<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script></svg>',
        "namespace",
    ),
    (
        "foreign-iframe",
        S + '<h:iframe xmlns:h="http://www.w3.org/1999/xhtml" src="http://evil"/></svg>',
        "namespace",
    ),
    ("mathml", S + '<m:math xmlns:m="http://www.w3.org/1998/Math/MathML"/></svg>', "namespace"),
    ("script", S + "<script>alert(1)</script></svg>", "<script>"),
    ("svg-namespace-script", S + f'<s:script xmlns:s="{SVG_NS}">alert(1)</s:script></svg>', "<script>"),
    ("onload", f'<svg xmlns="{SVG_NS}" onload="alert(1)"/>', "event attributes"),
    ("ONLOAD", f'<svg xmlns="{SVG_NS}" ONLOAD="alert(1)"/>', "event attributes"),
    ("foreign-onload", f'<svg xmlns="{SVG_NS}" xmlns:e="urn:x" e:onload="alert(1)"/>', "is not allowed"),
    ("animate-href", S + '<a><animate attributeName="href" to="javascript:alert(1)"/></a></svg>', "<a>"),
    ("set", S + '<rect><set attributeName="fill" to="red"/></rect></svg>', "<set>"),
    ("image", S + '<image href="http://evil/x.png"/></svg>', "<image>"),
    ("image-data", S + '<image href="data:image/svg+xml;base64,PHN2Zy8+"/></svg>', "<image>"),
    ("foreignObject", S + "<foreignObject><div>x</div></foreignObject></svg>", "<foreignObject>"),
    ("filter-feimage", S + '<filter id="f"><feImage href="http://evil/x"/></filter></svg>', "<filter>"),
    ("xml-base", S + '<g xml:base="http://evil/"><use xlink:href="#a"/></g></svg>', "base"),
    (
        "doctype",
        '<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
        "DOCTYPE",
    ),
    ("billion-laughs", '<!DOCTYPE x [<!ENTITY a "1"><!ENTITY b "&a;&a;">]><svg>&b;</svg>', "DOCTYPE"),
    ("external-entity", '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>', "DOCTYPE"),
    ("style-breakout", S + "<style><![CDATA[</style><script>alert(1)</script>]]></style></svg>", "plain CSS"),
    ("style-type", S + '<style type="text/xsl">rect { fill: red }</style></svg>', "text/css"),
    ("deep", S + "<g>" * 100 + "</g>" * 100 + "</svg>", "more than 64 deep"),
    ("many", S + "<g/>" * (image_svg.MAX_ELEMENTS + 1) + "</svg>", "elements"),
    ("not-svg-root", '<html xmlns="http://www.w3.org/1999/xhtml"/>', "root element"),
    ("href-data", S + '<use xlink:href="data:image/svg+xml,%3Csvg/%3E"/></svg>', "outside itself"),
]


@pytest.mark.parametrize(("name", "text", "said"), HOSTILE_SVGS, ids=[n for n, _, _ in HOSTILE_SVGS])
def test_a_hostile_svg_is_refused_with_its_reason(tmp_path: Path, name: str, text: str, said: str) -> None:
    (tmp_path / "x.svg").write_text(text, encoding="utf-8")
    began = time.monotonic()
    with pytest.raises(images.ImageError) as caught:
        images.load(tmp_path, "x.svg")
    assert time.monotonic() - began < QUICK
    assert str(caught.value).startswith("image 'x.svg': "), caught.value
    assert said in str(caught.value), caught.value


REBUILT_SVGS = [
    ("stylesheet-pi", '<?xml-stylesheet href="http://evil/x.xsl" type="text/xsl"?>' + S + "<rect/></svg>"),
    ("pi-inside", S + '<?xml-stylesheet href="http://evil/x.css"?><rect/></svg>'),
    ("comment", S + "<!-- <script>alert(1)</script> --><rect/></svg>"),
    ("css-comment", S + "<style>/* @import url(x) */ rect { fill: red } /* } */</style><rect/></svg>"),
    ("text", S + "<text>&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</text></svg>"),
    ("cdata-text", S + "<text><![CDATA[<img src=x onerror=alert(1)>]]></text></svg>"),
    (
        "inkscape",
        f'<svg xmlns="{SVG_NS}" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" '
        'xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" '
        'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" inkscape:version="1.2">'
        '<sodipodi:namedview id="n"/><metadata><rdf:RDF/></metadata>'
        '<g inkscape:label="Layer 1" inkscape:groupmode="layer"><rect width="5" height="5"/></g></svg>',
    ),
    (
        "matplotlib",
        f'<svg xmlns="{SVG_NS}" xmlns:xlink="http://www.w3.org/1999/xlink" width="460.8pt" height="345.6pt" '
        'viewBox="0 0 460.8 345.6" version="1.1"><defs><style type="text/css">*{stroke-linejoin: round; '
        'stroke-linecap: butt}</style></defs><g id="figure_1"><path d="M 0 345.6 L 460.8 345.6 z" '
        'style="fill: #ffffff"/><g clip-path="url(#p1)"><use xlink:href="#m0" x="57" y="307" '
        'style="stroke: #000000; stroke-width: 0.8"/></g></g><defs><clipPath id="p1"><rect x="57" y="41" '
        'width="357" height="266"/></clipPath><path id="m0" d="M 0 0 L 0 3.5"/></defs></svg>',
    ),
    ("no-namespace", '<svg viewBox="0 0 4 4"><rect width="4" height="4" fill="rgb(10, 20, 30)"/></svg>'),
    ("href-space", S + '<use xlink:href=" #a "/></svg>'),
    ("attribute-whitespace", S + '<rect transform="translate(1&#9;2)&#10;rotate(3)" fill="#c00"/></svg>'),
]


def assert_inert_svg(data: bytes) -> None:
    """Only allow-listed elements and attributes, no processing instruction, comment or doctype, and
    every link a fragment of the file itself."""
    text = data.decode("utf-8")
    assert "<!" not in text
    assert text.count("<?") == 1
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text)
    for element in root.iter():
        namespace, _, tag = element.tag[1:].partition("}")
        assert namespace == SVG_NS, element.tag
        assert tag in image_svg.ELEMENTS, tag
        for name, value in element.attrib.items():
            local = name.rpartition("}")[2]
            assert local in image_svg.ATTRIBUTES or local in {"space", "lang"}, name
            assert not local.lower().startswith("on")
            if local == "href":
                assert re.fullmatch(r"#[A-Za-z_][\w.:-]*", value), value
            for found in re.finditer(r"url\(([^)]*)\)", value):
                assert found.group(1).strip("'\"").startswith("#"), value
            assert "\\" not in value
            assert "@" not in value
    assert "script" not in text.lower() or "&lt;script&gt;" in text
    assert image_svg.clean(data) == data  # rebuilt once, it rebuilds to itself


@pytest.mark.parametrize(("name", "text"), REBUILT_SVGS, ids=[n for n, _ in REBUILT_SVGS])
def test_an_svg_is_rebuilt_inert_from_its_allowed_parts(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / "x.svg").write_text(text, encoding="utf-8")
    cleaned = images.load(tmp_path, "x.svg").data
    assert_inert_svg(cleaned)
    assert b"evil" not in cleaned
    assert b"inkscape" not in cleaned
    assert b"sodipodi" not in cleaned


# ---------------------------------------------------------------------------------------------
# Formulas nested past every renderer's stack
# ---------------------------------------------------------------------------------------------

DEEP_TEX = [
    ("sqrt-300", "\\sqrt{" * 300 + "x" + "}" * 300),
    ("frac-200", "\\frac{" * 200 + "1" + "}{2}" * 200),
    ("braces-5000", "{" * 5000 + "x" + "}" * 5000),
    ("scripts-400", "x^{" * 400 + "2" + "}" * 400),
    ("sqrt-index-300", "\\sqrt[" * 300 + "2" + "]{x}" * 300),
    ("matrix-100", "\\begin{bmatrix}" * 100 + "1" + "\\end{bmatrix}" * 100),
    ("accents-300", "\\hat{" * 300 + "x" + "}" * 300),
    ("text-in-deep", "\\frac{" * 40 + "\\text{a}" + "}{2}" * 40),
]


@pytest.mark.parametrize(("name", "tex"), DEEP_TEX, ids=[n for n, _ in DEEP_TEX])
def test_a_formula_nested_too_deep_is_one_clear_error(name: str, tex: str) -> None:
    began = time.monotonic()
    with pytest.raises(markup.MarkupError) as caught:
        markup.parse(f"${tex}$")
    assert time.monotonic() - began < QUICK
    assert f"nests more than {markup.MAX_DEPTH} deep" in str(caught.value)
    assert len(str(caught.value)) < 300


def test_a_formula_at_the_depth_limit_renders_everywhere(tmp_path: Path) -> None:
    from attnquiz.engine.export.lms import question_html as lms
    from attnquiz.engine.export.pdf import typst
    from attnquiz.engine.export.pdf.worksheets import compile_typst
    from attnquiz.engine.export.text import html

    depth = markup.MAX_DEPTH - 1
    text = (
        "Simplify $"
        + "\\frac{1}{1 + " * depth
        + "x"
        + "}" * depth
        + "$ and $"
        + "\\sqrt{" * (markup.MAX_DEPTH - 1)
        + "2"
        + "}" * (markup.MAX_DEPTH - 1)
        + "$."
    )
    md.check(text)
    assert plain.to_terminal(text)
    assert "<math" in html.content(text)
    assert "\\frac" in lms.tex_html(text)
    source = f"#set page(width: 30cm, height: auto)\n{typst.content(text)}"
    assert compile_typst(source).startswith(b"%PDF")


DEEP_BANK = """\
bank: deep
title: Deep
items:
  - id: deep
    kind: formula
    source: "test"
    topic: demo
    params:
      a: {{range: [2, 9]}}
    prompt: "What is ${tex}$ for $a = {{{{a}}}}$?"
    answer: {{kind: integer, value: "2*a"}}
    solution:
      - "It is ${{{{2*a}}}}$."
"""


@pytest.mark.parametrize("tex", ["\\\\sqrt{" * 300 + "a" + "}" * 300, "\\\\frac{" * 200 + "1" + "}{2}" * 200])
def test_a_bank_with_a_formula_nested_too_deep_is_an_error_at_its_line(tmp_path: Path, tex: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(DEEP_BANK.format(tex=tex), encoding="utf-8")
    began = time.monotonic()
    with pytest.raises(BankError) as caught:
        load_bank_file(path, shown_as="deep.yaml")
    assert time.monotonic() - began < QUICK
    (issue,) = caught.value.issues
    assert (issue.file, issue.line, issue.field) == ("deep.yaml", 10, "items[0].prompt")
    assert "nests more than" in issue.message
    for command in (["list", str(path)], ["export", str(path), "--format", "pdf", "-o", str(tmp_path / "o")]):
        run = subprocess.run(
            [sys.executable, "-m", "attnquiz", *command],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 1, run.stderr
        assert "Traceback" not in run.stderr
        assert "deep.yaml:10: items[0].prompt: the formula nests more than" in run.stderr


# ---------------------------------------------------------------------------------------------
# Every export of a bank with hostile file names, SVGs and maths
# ---------------------------------------------------------------------------------------------

HOSTILE_NAMES = {
    "html": 'figures/q"onerror="alert`1`"x=".svg',
    "typst": 'figures/a"+panic[evaluated]+".png',
    "xml": "figures/x]]><script>alert`2`&amp;<!--.jpg",
}
SVG_WITH_TRICKS = (
    '<?xml-stylesheet href="http://evil/x.xsl" type="text/xsl"?>'
    + S
    + "<!-- <script>alert(3)</script> --><style>/* @import url(http://evil) */ rect { fill: #c00 }</style>"
    + '<rect width="10" height="10"/><text>&lt;script&gt;alert(4)&lt;/script&gt;</text></svg>'
)
HOSTILE_BANK = """\
bank: hostile
title: "Hostile <script>alert(5)</script>"
items:
  - id: look
    kind: formula
    source: "test"
    topic: demo
    params:
      a: {{range: [2, 9]}}
    prompt: |
      Look $\\text{{<script>alert(6)</script>}}$, $\\text{{<img src=x onerror=alert(7)>}}$ and
      $\\text{{[link](javascript:alert(8))}} \\text{{&lt;b&gt;}}$.

      ![x" onerror="alert(9)]({html})

      ![a]({typst})

      ![b]({xml})

      What is $a + {{{{a}}}}$ for $a = {{{{a}}}}$?
    answer: {{kind: integer, value: "2*a"}}
    solution:
      - "It is ${{{{2*a}}}}$ $\\\\text{{</p><script>alert(10)</script>}}$."
"""


@pytest.fixture(scope="module")
def hostile_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "figures").mkdir()
    (folder / HOSTILE_NAMES["html"]).write_text(SVG_WITH_TRICKS, encoding="utf-8")
    (folder / HOSTILE_NAMES["typst"]).write_bytes(png())
    (folder / HOSTILE_NAMES["xml"]).write_bytes(JPEG)
    path = folder / "hostile.yaml"
    path.write_text(HOSTILE_BANK.format(**HOSTILE_NAMES), encoding="utf-8")
    return path


def export(bank: Path, fmt: str, out: Path) -> Path:
    run = subprocess.run(
        [sys.executable, "-m", "attnquiz", "export", str(bank), "--format", fmt, "--students", "2",
         "--variants", "2", "--seed", "4", "-o", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    return out


class Live(HTMLParser):
    """What in an HTML document could run or fetch: script elements, event attributes, links and
    sources that are not the document's own data or package files."""

    def __init__(self, allowed_src: str) -> None:
        super().__init__()
        self.allowed = re.compile(allowed_src)
        self.found: list[str] = []
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "iframe", "object", "embed", "base", "link", "form"}:
            self.found.append(f"<{tag}>")
        if tag == "meta" and any(name == "http-equiv" for name, _ in attrs):
            self.found.append(f"<meta {attrs}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"{tag} {name}={value}")
            if name in {"src", "href", "xlink:href", "action", "formaction", "srcset"} and value is not None:
                self.sources.append(value)
                if not self.allowed.fullmatch(value):
                    self.found.append(f"{tag} {name}={value[:80]}")
            if name == "style" and value and re.search(r"url\(|@import|expression", value, re.I):
                self.found.append(f"{tag} style={value}")


def live_parts(html_text: str, allowed_src: str) -> tuple[list[str], list[str]]:
    parser = Live(allowed_src)
    parser.feed(html_text)
    parser.close()
    return parser.found, parser.sources


SAFE_NAME = r"[A-Za-z0-9._-]+"


def test_moodle_has_no_live_script_and_safe_file_names(hostile_bank: Path, tmp_path: Path) -> None:
    xml = export(hostile_bank, "moodle", tmp_path / "q.xml").read_text(encoding="utf-8")
    root = ET.fromstring(xml)  # well-formed whatever the names were
    texts = root.findall(".//text")
    assert texts
    for text in texts:
        found, _ = live_parts(text.text or "", rf"@@PLUGINFILE@@/{SAFE_NAME}")
        assert found == [], found
    files = root.findall(".//file")
    assert len({f.get("name") for f in files}) == 3
    for element in files:
        assert re.fullmatch(SAFE_NAME, element.get("name", "")), element.get("name")
        data = base64.b64decode(element.text or "")
        if element.get("name", "").endswith(".svg"):
            assert_inert_svg(data)


def test_qti_has_no_live_script_and_safe_file_names(hostile_bank: Path, tmp_path: Path) -> None:
    package = export(hostile_bank, "qti", tmp_path / "q.zip")
    with zipfile.ZipFile(package) as archive:
        names = archive.namelist()
        for name in names:
            assert re.fullmatch(r"[A-Za-z0-9._/-]+", name), name
            if name.endswith(".xml"):
                document = ET.fromstring(archive.read(name))
                for element in document.iter():
                    if element.tag.rpartition("}")[2] == "mattext" and element.text:
                        found, _ = live_parts(
                            element.text, r"\$IMS-CC-FILEBASE\$/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*"
                        )
                        assert found == [], (name, found)
            if name.endswith(".svg"):
                assert_inert_svg(archive.read(name))
        assert sum(n.endswith((".svg", ".png", ".jpg")) for n in names) == 3


def test_html_has_no_live_script_and_only_data_images(hostile_bank: Path, tmp_path: Path) -> None:
    folder = export(hostile_bank, "html", tmp_path / "html")
    for page in ("worksheets.html", "key.html"):
        text = (folder / page).read_text(encoding="utf-8")
        found, sources = live_parts(text, r"data:image/(png|jpeg|svg\+xml);base64,[A-Za-z0-9+/=]+")
        assert found == [], (page, found)
        for source in sources:
            if source.startswith("data:image/svg+xml"):
                assert_inert_svg(base64.b64decode(source.partition(",")[2]))
        assert "alert(5)" not in text or "&lt;script&gt;alert(5)" in text


def test_markdown_renders_to_no_live_html(hostile_bank: Path, tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    folder = export(hostile_bank, "md", tmp_path / "md")
    reader = MarkdownIt("commonmark", {"html": True})  # a viewer that passes raw HTML through
    for page in ("worksheets.md", "key.md"):
        text = (folder / page).read_text(encoding="utf-8")
        found, sources = live_parts(reader.render(text), r"figures/[A-Za-z0-9._~%/-]+")
        assert found == [], (page, found, text)
        for source in sources:
            assert not source.lower().startswith("javascript")


def test_the_pdf_evaluates_no_code_from_a_file_name(hostile_bank: Path, tmp_path: Path) -> None:
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.pdf import typst

    bank = banks.load(str(hostile_bank))
    question = bank.items[0].question(3)
    with images.using(question.folder):
        source = typst.content(question.variant.prompt)
    assert "panic" not in re.sub(r"/a-panic-evaluated-[0-9a-f]{16}\.png", "", source)
    for name in re.findall(rf'image\("/{typst.IMAGE_FOLDER}/([^"]*)"', source):
        assert re.fullmatch(SAFE_NAME, name), name
    folder = export(hostile_bank, "pdf", tmp_path / "pdf")  # a panic() would fail the compile
    assert (folder / "worksheets.pdf").read_bytes().startswith(b"%PDF")


def test_the_moodle_question_text_runs_nothing_in_chromium(hostile_bank: Path, tmp_path: Path) -> None:
    """The question text as Moodle shows it (its files served as data), in a real browser with
    scripts enabled: no dialog opens, no request leaves the page."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    from tests.web.conftest import CHROMIUM_ARGS, chromium_path

    browser_path = chromium_path()
    if browser_path is None:
        pytest.skip("no Chromium found (apt-get install chromium)")
    xml = export(hostile_bank, "moodle", tmp_path / "q.xml").read_text(encoding="utf-8")
    root = ET.fromstring(xml)
    question = next(q for q in root.iter("question") if q.get("type") != "category")
    text = question.find("questiontext/text")
    assert text is not None
    assert text.text
    body = text.text
    for element in question.findall("questiontext/file"):
        kind = {"svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg"}[
            element.get("name", "").rpartition(".")[2]
        ]
        body = body.replace(f"@@PLUGINFILE@@/{element.get('name')}", f"data:{kind};base64,{element.text}")
    page_html = f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"
    events: list[str] = []
    with sync_api.sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        except sync_api.Error as exc:
            pytest.skip(f"Chromium does not start here: {str(exc).splitlines()[0]}")
        try:
            page = browser.new_page()

            def on_dialog(dialog: Any) -> None:
                events.append(f"dialog {dialog.message}")
                dialog.dismiss()

            def on_request(request: Any) -> None:
                if not request.url.startswith(("data:", "about:")):
                    events.append(f"request {request.url[:80]}")

            page.on("dialog", on_dialog)
            page.on("request", on_request)
            page.on("pageerror", lambda error: events.append(f"error {error}"))
            page.set_content(page_html, wait_until="load")
            page.wait_for_timeout(500)
            shown = page.evaluate("[...document.images].map(i => [i.complete, i.naturalWidth])")
            scripts = page.evaluate("document.scripts.length")
        finally:
            browser.close()
    assert events == []
    assert scripts == 0
    assert len(shown) == 3
    assert all(complete and width > 0 for complete, width in shown), shown  # every image still shows
