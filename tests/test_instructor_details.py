"""Details instructors met (issue 27, item 8): each test failed before its fix."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from attnquiz.engine.answers.kinds import IntegerAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.bank.starter import bank_title, starter_bank
from attnquiz.engine.errors import BankError
from attnquiz.engine.export import files
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.outcome import PRECISION
from attnquiz.engine.plan.class_plan import plan_class

README = Path(__file__).resolve().parent.parent / "README.md"


def test_a_count_with_one_digit_and_zeros_is_not_called_too_coarse() -> None:
    """60 for 64: "your digits agree with the answer" would be false; 590,000 for 589,824 is a rounding."""
    grade = grade_answer(IntegerAnswer(64), "60", ())
    assert grade.status == "wrong"
    assert grade.mistake is None
    assert "digits agree" not in grade.feedback
    rounded = grade_answer(IntegerAnswer(589824), "590,000", ())
    assert rounded.mistake is not None
    assert rounded.mistake.tag == PRECISION


@pytest.mark.parametrize(("given", "meant"), [("numeric", "number"), ("int", "integer"), ("vectr", "vector")])
def test_an_answer_kind_of_another_tool_gets_did_you_mean(given: str, meant: str) -> None:
    text = f"""\
bank: kinds
title: Kinds
items:
  - id: one
    kind: formula
    source: made up
    topic: demo
    prompt: "Two?"
    answer: {{kind: {given}, value: "2"}}
    solution: ["2"]
"""
    with pytest.raises(BankError) as caught:
        load_bank_text(text, "kinds.yaml")
    (issue,) = caught.value.issues
    assert issue.line == 9
    assert issue.field == "items[0].answer.kind"
    assert issue.message.endswith(f"(got {given!r}: did you mean {meant!r}?)")


@pytest.mark.parametrize(
    ("file_name", "title"),
    [("week3.yaml", "Week 3"), ("my-bank-2.yaml", "My bank 2"), ("attention.yaml", "Attention")],
)
def test_quiz_new_titles_a_bank_as_a_person_would(file_name: str, title: str) -> None:
    assert bank_title(banks_name(file_name)) == title
    assert f'title: "{title}"' in starter_bank(file_name)


def banks_name(file_name: str) -> str:
    from attnquiz.engine.bank.starter import bank_name

    return bank_name(Path(file_name).stem)


def test_a_markdown_export_says_its_image_folder_must_travel_with_it(tmp_path: Path) -> None:
    from tests.engine.test_images import png

    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "map.png").write_bytes(png(8, 8))
    bank_file = tmp_path / "pics.yaml"
    bank_file.write_text(
        "bank: pics\ntitle: Pictures\nitems:\n  - id: look\n    kind: formula\n    source: made up\n"
        "    topic: demo\n    prompt: |\n      Look:\n\n      ![a map](figures/map.png)\n\n      How many?\n"
        '    answer: {kind: integer, value: "4"}\n    solution: ["Four."]\n',
        encoding="utf-8",
    )
    plan = plan_class(banks.load(str(bank_file)), students=2, master_seed=1)
    written = files.write(plan, "md", tmp_path / "out")
    (warning,) = written.warnings
    assert "figures/" in warning
    assert str(tmp_path / "figures") in warning
    assert "travel with it" in warning
    assert files.write(plan, "html", tmp_path / "html").warnings == []  # HTML embeds its images


def test_the_readme_says_how_long_the_default_sheet_is() -> None:
    """The README's page counts are the default sheets' (one item of each topic, one student)."""
    words = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    said = " ".join(README.read_text(encoding="utf-8").split())
    for name in ("week1", "week2"):
        bank = banks.load(name)
        plan = plan_class(bank, students=1, master_seed=2026, per_topic=1)
        pages = len(PdfReader(io.BytesIO(pdf.worksheets(plan, plan.sheets))).pages)
        week = name.removeprefix("week")
        assert re.search(rf"{len(plan.items)} (questions )?for week {week} on {words[pages]}", said), (
            name,
            pages,
        )
