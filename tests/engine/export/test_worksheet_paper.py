"""Printed worksheets speak of paper: tick boxes are ticked (nothing is typed), and each question that
asks for a computed answer leaves room to work, more for a number or a matrix than for a shape."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from attnquiz.engine.answers.kinds import ChoiceAnswer, MatrixAnswer, NumericAnswer, ShapeAnswer
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.plan.class_plan import sheet_instructions, working_space

from .samples import sample_plan, sample_questions


def _worksheet_text(fmt: str) -> str:
    plan = sample_plan(1)
    if fmt == "pdf":
        reader = PdfReader(io.BytesIO(pdf.worksheets(plan, plan.sheets)))
        return "\n".join(page.extract_text() for page in reader.pages)
    if fmt == "html":
        return html.worksheets(plan, plan.sheets)
    return markdown.worksheets(plan, plan.sheets)


@pytest.mark.parametrize("fmt", ["pdf", "html", "md"])
def test_choice_questions_on_paper_say_tick_not_type(fmt: str) -> None:
    text = _worksheet_text(fmt)
    assert "type the letter" not in text
    assert "type its letter" not in text
    assert "Tick all that apply." in text
    assert "Fill in one circle." in text


@pytest.mark.parametrize("fmt", ["pdf", "html"])
def test_every_question_with_a_written_answer_has_room_to_work(fmt: str) -> None:
    text = _worksheet_text(fmt)
    written = [q for q in sample_questions(1) if not isinstance(q.answer, ChoiceAnswer)]
    assert text.count("Working") == len(written)


def _cm(length: str) -> float:
    assert length.endswith("cm")
    return float(length[:-2])


def test_working_space_follows_the_kind_of_answer() -> None:
    by_kind = {type(q.answer): _cm(working_space(q.answer)) for q in sample_questions(1)}
    assert by_kind[ChoiceAnswer] == 0
    assert 0 < by_kind[ShapeAnswer] < by_kind[NumericAnswer] <= by_kind[MatrixAnswer]


def test_numbers_counts_and_shapes_keep_their_own_instructions() -> None:
    for question in sample_questions(1):
        if isinstance(question.answer, NumericAnswer | ShapeAnswer):
            assert sheet_instructions(question.answer) == markup.escape_markdown(
                question.answer.instructions()
            )
