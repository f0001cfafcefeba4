"""PDF worksheets and keys: typeset by Typst from pip-installed packages, deterministic, fonts embedded."""

from __future__ import annotations

import io
from typing import Any

import pytest
from pypdf import PdfReader

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.plan.class_plan import Paper, plan_class

from .samples import sample_plan


def _reader(data: bytes) -> PdfReader:
    return PdfReader(io.BytesIO(data))


def _text(reader: PdfReader) -> list[str]:
    return [page.extract_text() for page in reader.pages]


def test_every_student_code_and_question_is_in_the_worksheets_one_student_per_page() -> None:
    plan = sample_plan(3)
    pages = _text(_reader(pdf.worksheets(plan, plan.sheets)))
    codes = [sheet.code for sheet in plan.sheets]
    for page in pages:
        # A page break between students: no page shows two students' codes.
        assert sum(code in page for code in codes) == 1
    everything = "\n".join(pages)
    for sheet in plan.sheets:
        assert f"Student {sheet.student}" in everything
        assert sheet.code in everything
    for number in range(1, len(plan.items) + 1):
        assert everything.count(f"Question {number}") == len(plan.sheets)
    assert "Give a number to 2 decimal places." in everything


def test_the_key_lists_each_answer_per_student_and_code() -> None:
    plan = sample_plan(2)
    text = "\n".join(_text(_reader(pdf.key(plan, plan.sheets))))
    for sheet in plan.sheets:
        assert sheet.code in text
        for question in sheet.questions:
            assert question.answer.format() in text
            assert question.item_id in text
    assert "Wrong answers to recognise" in text
    brief = "\n".join(_text(_reader(pdf.key(plan, plan.sheets, style="brief"))))
    assert "Wrong answers to recognise" not in brief
    assert all(sheet.code in brief for sheet in plan.sheets)


def test_the_same_plan_gives_the_same_bytes_with_no_date() -> None:
    plan = sample_plan(2)
    first = pdf.worksheets(plan, plan.sheets)
    assert first == pdf.worksheets(plan, plan.sheets)
    metadata: Any = _reader(first).metadata or {}
    assert "/CreationDate" not in metadata
    assert "/ModDate" not in metadata


@pytest.mark.parametrize(("paper", "size"), [("a4", (595.3, 841.9)), ("us-letter", (612.0, 792.0))])
def test_paper_sizes(paper: Paper, size: tuple[float, float]) -> None:
    plan = sample_plan(1)
    box = _reader(pdf.worksheets(plan, plan.sheets, paper)).pages[0].mediabox
    assert (round(float(box.width), 1), round(float(box.height), 1)) == size


def _descriptor(font: Any) -> Any:
    if "/DescendantFonts" in font:
        return font["/DescendantFonts"][0].get_object()["/FontDescriptor"].get_object()
    return font["/FontDescriptor"].get_object()


def test_every_font_is_embedded() -> None:
    plan = sample_plan(1)
    reader = _reader(pdf.key(plan, plan.sheets))
    seen = 0
    for page in reader.pages:
        resources: Any = page["/Resources"]
        for font in resources["/Font"].values():
            descriptor = _descriptor(font.get_object())
            assert any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))
            seen += 1
    assert seen >= 3  # text, maths and the monospaced variant codes


def test_every_week1_item_typesets_as_variant_and_as_original() -> None:
    bank = banks.load("week1")
    plan = plan_class(bank, students=2, master_seed=99)
    text = "\n".join(_text(_reader(pdf.worksheets(plan, plan.sheets))))
    assert all(sheet.code in text for sheet in plan.sheets)
    assert text.count(f"Question {len(plan.items)}") == 2
    key_text = "\n".join(_text(_reader(pdf.key(plan, plan.sheets))))
    assert all(q.item_id in key_text for q in plan.sheets[0].questions)
    original = plan_class(bank, students=1, master_seed=None)
    assert "Past-paper questions" in "\n".join(_text(_reader(pdf.worksheets(original, original.sheets))))
