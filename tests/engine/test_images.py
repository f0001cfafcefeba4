"""Image files next to a bank: checked at load as located problems, embedded by every format."""

from __future__ import annotations

import base64
import io
import re
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from attnquiz.engine.bank import images
from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.errors import BankError
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.pdf import typst
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet
from attnquiz.engine.variant import Question


def png(width: int = 8, height: int = 4) -> bytes:
    """A real PNG (one colour), built by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = b"".join(b"\x00" + b"\xc8\x28\x28" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20" width="40" height="20">'
    '<rect x="1" y="1" width="38" height="18" fill="#cde"/><use href="#r"/></svg>'
)
JPEG = (Path(__file__).parents[1] / "data" / "images" / "python.jpg").read_bytes()
"""A real 16 × 16 baseline JPEG (CPython's own test image)."""

BANK = """\
bank: pictures
title: Pictures
items:
  - id: look
    kind: formula
    source: "test"
    topic: demo
    params:
      a: {{range: [2, 9]}}
    prompt: |
      Look at the map.

      ![the attention map]({prompt_image})

      What is $a + {{{{a}}}}$ for $a = {{{{a}}}}$?
    answer: {{kind: integer, value: "2*a"}}
    solution:
      - "![the diagram](figures/diagram.svg)"
"""


def write_bank(folder: Path, prompt_image: str = "figures/map.png") -> Path:
    (folder / "figures").mkdir(exist_ok=True)
    (folder / "figures" / "map.png").write_bytes(png())
    (folder / "figures" / "diagram.svg").write_text(SVG, encoding="utf-8")
    path = folder / "pictures.yaml"
    path.write_text(BANK.format(prompt_image=prompt_image), encoding="utf-8")
    return path


def question(folder: Path) -> Question:
    bank = load_bank_file(write_bank(folder), shown_as="pictures.yaml")
    return bank.items[0].question(3)


# ---------------------------------------------------------------------------------------------
# Checked at load
# ---------------------------------------------------------------------------------------------

# The file written as figures/bad.*, and the words of the problem.
BAD_FILES = [
    ("bad.png", b"GIF89a not a png", "not a PNG file"),
    ("bad.jpg", png(), "not a JPEG file"),
    ("bad.png", png() + b"\0" * (images.MAX_IMAGE_BYTES + 1), "at most 2,097,152"),
    ("bad.svg", b"\xff\xfe binary", "not UTF-8"),
    ("bad.svg", b"<svg", "not well-formed"),
    ("bad.svg", b"<html xmlns='http://www.w3.org/1999/xhtml'/>", "root element is not <svg>"),
    ("bad.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "<script>"),
    ("bad.svg", b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', "event attributes"),
    (
        "bad.svg",
        b'<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript:alert(1)"/></svg>',
        "<a> is not allowed",
    ),
    (
        "bad.svg",
        b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink">'
        b'<use x:href="https://example.org/x.svg#a"/></svg>',
        "outside itself",
    ),
    ("bad.svg", b'<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>', "DOCTYPE"),
    (
        "bad.svg",
        b'<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div/></foreignObject></svg>',
        "foreignObject",
    ),
    (
        "bad.svg",
        b'<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(x.css)</style></svg>',
        "selector",
    ),
    ("bad.svg", b'<svg xmlns="http://www.w3.org/2000/svg" style="fill: url(http://x/y)"/>', "loads"),
]


@pytest.mark.parametrize(("name", "data", "words"), BAD_FILES, ids=[w for _, _, w in BAD_FILES])
def test_a_bad_image_file_is_a_located_problem(tmp_path: Path, name: str, data: bytes, words: str) -> None:
    path = write_bank(tmp_path, f"figures/{name}")
    (tmp_path / "figures" / name).write_bytes(data)
    with pytest.raises(BankError) as caught:
        load_bank_file(path, shown_as="pictures.yaml")
    (issue,) = caught.value.issues
    assert (issue.file, issue.line, issue.field) == ("pictures.yaml", 13, "items[0].prompt")
    assert f"image 'figures/{name}'" in issue.message
    assert words in issue.message


@pytest.mark.parametrize(
    ("src", "words"),
    [
        ("figures/missing.png", "no such file"),
        ("figures", "PNG, JPEG or SVG"),
        ("../outside.png", "leave the bank's folder"),
        ("/etc/outside.png", "relative"),
        ("https://example.org/x.png", "URL"),
        ("data:image/png;base64,AAAA", "URL"),
        ("figures/map.gif", "PNG, JPEG or SVG"),
    ],
)
def test_a_missing_or_outside_image_is_a_located_problem(tmp_path: Path, src: str, words: str) -> None:
    path = write_bank(tmp_path, src)
    with pytest.raises(BankError) as caught:
        load_bank_file(path, shown_as="pictures.yaml")
    lines = [str(i) for i in caught.value.issues]
    assert any(words in line and line.startswith("pictures.yaml:") for line in lines), lines


def test_a_link_out_of_the_bank_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(png())
    bank = tmp_path / "bank"
    bank.mkdir()
    path = write_bank(bank, "figures/link.png")
    (bank / "figures" / "link.png").symlink_to(outside)
    with pytest.raises(BankError, match="a link out of the bank's folder"):
        load_bank_file(path, shown_as="pictures.yaml")


def test_a_good_jpeg_png_and_svg_load(tmp_path: Path) -> None:
    (tmp_path / "a.jpg").write_bytes(JPEG)
    assert images.load(tmp_path, "a.jpg").mime == "image/jpeg"
    write_bank(tmp_path)
    assert images.load(tmp_path, "figures/map.png").data == png()
    assert images.load(tmp_path, "figures/diagram.svg").mime == "image/svg+xml"


# ---------------------------------------------------------------------------------------------
# Embedded by every format
# ---------------------------------------------------------------------------------------------


def test_html_embeds_the_image_as_a_data_uri(tmp_path: Path) -> None:
    q = question(tmp_path)
    plan = ClassPlan("pictures", "Pictures", 1, ("look",), (Sheet(1, 3, q.code, (q,)),))
    page = html.worksheets(plan, plan.sheets)
    assert f'src="data:image/png;base64,{base64.b64encode(png()).decode()}"' in page
    assert 'alt="the attention map"' in page
    key = html.key(plan, plan.sheets)
    assert "data:image/svg+xml;base64," in key


def test_typst_gives_the_image_bytes_to_the_compiler(tmp_path: Path) -> None:
    from attnquiz.engine.export.pdf.worksheets import compile_typst

    q = question(tmp_path)
    plan = ClassPlan("pictures", "Pictures", 1, ("look",), (Sheet(1, 3, q.code, (q,)),))
    source = typst.worksheets(plan, plan.sheets)
    files = typst.image_files(source)
    assert list(files.values()) == [png()]
    (name,) = files
    assert f'image("/{typst.IMAGE_FOLDER}/{name}", alt: "the attention map"' in source
    pdf = compile_typst(source)
    assert b"/Subtype/Image" in pdf.replace(b"/Subtype /Image", b"/Subtype/Image")
    compile_typst(typst.key(plan, plan.sheets))  # the SVG of the solution


def test_moodle_embeds_the_file_in_the_text_that_shows_it(tmp_path: Path) -> None:
    q = question(tmp_path)
    xml = "\n".join(moodle.question_xml(q))
    name = images.load(tmp_path, "figures/map.png").name
    assert f'src="@@PLUGINFILE@@/{name}"' in xml
    text = re.search(r"<questiontext[^>]*>(.*?)</questiontext>", xml, re.DOTALL)
    assert text is not None
    assert (
        f'<file name="{name}" path="/" encoding="base64">{base64.b64encode(png()).decode()}</file>'
        in text.group(1)
    )
    feedback = re.search(r"<generalfeedback[^>]*>(.*?)</generalfeedback>", xml, re.DOTALL)
    assert feedback is not None
    assert 'encoding="base64"' in feedback.group(1)
    assert ".svg" in feedback.group(1)


def test_qti_packs_the_file_and_lists_it_in_the_manifest(tmp_path: Path) -> None:
    q = question(tmp_path)
    plan = ClassPlan("pictures", "Pictures", 1, ("look",), (Sheet(1, 3, q.code, (q,)),))
    package = qti.package(plan)
    name = images.load(tmp_path, "figures/map.png").name
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        members = archive.namelist()
        packed = next(m for m in members if m.endswith(name))
        assert archive.read(packed) == png()
        manifest = archive.read("imsmanifest.xml").decode()
        assert f'href="{packed}"' in manifest
        assessment = next(
            archive.read(m).decode() for m in members if m.endswith(".xml") and "/" in m and "meta" not in m
        )
    assert f"$IMS-CC-FILEBASE$/{packed.removeprefix('web_resources/')}" in assessment


def test_markdown_keeps_the_relative_path(tmp_path: Path) -> None:
    q = question(tmp_path)
    plan = ClassPlan("pictures", "Pictures", 1, ("look",), (Sheet(1, 3, q.code, (q,)),))
    assert "![the attention map](figures/map.png)" in markdown.worksheets(plan, plan.sheets)


def test_an_image_gone_since_load_is_shown_as_its_alt_text(tmp_path: Path) -> None:
    q = question(tmp_path)
    (tmp_path / "figures" / "map.png").unlink()
    with images.using(q.folder):
        out = html.content(q.variant.prompt)
    assert "[image: the attention map]" in out
    assert "no such file" in out


def test_show_json_lists_the_images(tmp_path: Path) -> None:
    q = question(tmp_path)
    figures = [f for f in q.to_json()["figures"] if f["kind"] == "image"]
    assert figures == [
        {
            "kind": "image",
            "where": "prompt",
            "file": "figures/map.png",
            "alt": "the attention map",
            "path": str(tmp_path.resolve() / "figures" / "map.png"),
        },
        {
            "kind": "image",
            "where": "solution",
            "file": "figures/diagram.svg",
            "alt": "the diagram",
            "path": str(tmp_path.resolve() / "figures" / "diagram.svg"),
        },
    ]
