"""Images can be sized: ``![alt](file.png){width=5cm}`` (or a percentage), honoured by every renderer."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnquiz.engine.bank import images
from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.errors import BankError
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.pdf import typst as ts
from attnquiz.engine.export.pdf.worksheets import compile_typst
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.markup import markdown as md
from tests.engine.test_images import png

BANK = """\
bank: sized
title: Sized pictures
items:
  - id: look
    kind: formula
    source: "test"
    topic: demo
    prompt: |
      A small picture, printed large:

      ![a tiny map]({path}){width}

      How many cells?
    answer: {{kind: integer, value: "4"}}
    solution: ["Four."]
"""


def _bank(tmp_path: Path, width: str) -> Path:
    (tmp_path / "figures").mkdir(exist_ok=True)
    (tmp_path / "figures" / "map.png").write_bytes(png(64, 64))
    path = tmp_path / "sized.yaml"
    path.write_text(BANK.format(path="figures/map.png", width=width), encoding="utf-8")
    return path


@pytest.mark.parametrize("width", ["6cm", "40mm", "2.5in", "50%", "100%"])
def test_a_width_is_read_and_every_renderer_honours_it(tmp_path: Path, width: str) -> None:
    bank = load_bank_file(_bank(tmp_path, "{width=" + width + "}"))
    question = bank.items[0].question(1)
    (image,) = [b for b in md.blocks(question.variant.prompt) if isinstance(b, md.Image)]
    assert image.width == width
    with images.using(bank.items[0].folder):
        typst_source = ts.content(question.variant.prompt)
        assert f"width: {width}, height: auto" in typst_source
        assert compile_typst(typst_source).startswith(b"%PDF")
        assert f'style="width: {width}"' in html.content(question.variant.prompt)
        assert f"; width: {width}" in lms.tex_html(question.variant.prompt)
    assert "{width=" + width + "}" in markdown.tex(question.variant.prompt)


def test_an_image_without_a_width_keeps_its_own_size(tmp_path: Path) -> None:
    bank = load_bank_file(_bank(tmp_path, ""))
    prompt = bank.items[0].question(1).variant.prompt
    with images.using(bank.items[0].folder):
        assert "width: auto" in ts.content(prompt)
        assert "style=" not in html.content(prompt).split("<img", 1)[1].split(">", 1)[0]


@pytest.mark.parametrize("width", ["huge", "0%", "150%", "5", "5px", "-3cm", "1e3cm"])
def test_a_width_that_is_not_a_length_is_a_located_error(tmp_path: Path, width: str) -> None:
    with pytest.raises(BankError) as caught:
        load_bank_file(_bank(tmp_path, "{width=" + width + "}"))
    (issue,) = caught.value.issues
    assert issue.line == 11
    assert issue.field == "items[0].prompt"
    assert "width is a length such as {width=6cm}" in issue.message
