"""Every exported LMS blank can be answered: Moodle's and Canvas's acceptance simulated for every variant
of every item of both banks (the canonical answer is accepted; no blank accepts nothing), plus the
spellings a text-matching blank lists agreeing with quiz's own reader and grader."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile
from functools import cache

import pytest

from attnquiz.engine import banks
from attnquiz.engine.answers import (
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.export import lms, lms_parts, moodle, qti
from attnquiz.engine.export.worksheet import ClassPlan, plan_class
from attnquiz.engine.grading import grade
from attnquiz.engine.variant import Question

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
VARIANTS = 20
CANVAS_SMALLEST = 1e-4  # Canvas stores a smaller non-zero number as 0


@cache
def _plan(bank: str) -> ClassPlan:
    return plan_class(banks.load(bank), students=VARIANTS, master_seed=2026)


def _questions(plan: ClassPlan) -> list[Question]:
    return [q for _, questions in plan.by_item() for q in questions]


def _canvas_number(text: str) -> float:
    value = float(text)
    return 0.0 if abs(value) < CANVAS_SMALLEST else value


def _entries(question: Question) -> list[tuple[SingleAnswer, float | int | str]]:
    """Each blank's answer and target, in order: every part's blanks for a question in parts."""
    out: list[tuple[SingleAnswer, float | int | str]] = []
    for _, _, answer, _ in lms_parts.units(question):
        if isinstance(answer, VectorAnswer):
            out += [(answer, v) for v in answer.values]
        elif isinstance(answer, MatrixAnswer):
            out += [(answer, v) for row in answer.rows for v in row]
        elif isinstance(answer, ShapeAnswer):
            out += [(answer, d) for d in answer.dims]
        elif isinstance(answer, NumericAnswer | IntegerAnswer | ExpressionAnswer):
            out.append((answer, answer.value))
        else:
            out.append((answer, ", ".join(sorted(answer.correct_letters))))
    return out


def _single_number(question: Question) -> bool:
    return isinstance(question.answer, NumericAnswer | IntegerAnswer)


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_canvas_accepts_the_canonical_answer_of_every_variant(bank: str) -> None:
    plan = _plan(bank)
    package = qti.package(plan)
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n)
        root = ET.fromstring(archive.read(name))
    items = root.findall(f".//{QTI}item")
    questions = _questions(plan)
    assert len(items) == len(questions)
    problems: list[str] = []
    for item, question in zip(items, questions, strict=True):
        where = f"{question.item_id} {question.code}"
        answer = question.answer
        text = "".join(m.text or "" for m in item.iter(f"{QTI}mattext"))
        if isinstance(answer, ExplainAnswer):
            # A concept question is an essay that the teacher marks: Canvas accepts or refuses nothing.
            if item.find(f".//{QTI}render_fib") is None or item.find(f".//{QTI}setvar") is not None:
                problems.append(f"{where}: a concept question is not an unscored essay question")
            if not all(f"<li>{lms.tex_html_inline(point)}</li>" in text for point in answer.points):
                problems.append(f"{where}: the essay's comments lack a key point")
            continue
        if _single_number(question):
            assert isinstance(answer, NumericAnswer | IntegerAnswer)
            low = _canvas_number(item.findtext(f".//{QTI}vargte") or "nan")
            high = _canvas_number(item.findtext(f".//{QTI}varlte") or "nan")
            unit = re.search(r"in units of 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
            power = int(unit.group(1).translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))) if unit else 0
            canonical = float(answer.value) if isinstance(answer, IntegerAnswer) else float(answer.format())
            entered = canonical / 10.0**power
            if not low <= entered <= high:
                problems.append(f"{where}: {entered} outside the stored range [{low}, {high}]")
            if (
                answer.value != 0
                and not answer.tolerance.accepts(float(answer.value), 0.0)
                and low <= 0 <= high
            ):
                problems.append(f"{where}: Canvas would accept 0 (range [{low}, {high}])")
        elif not isinstance(answer, ChoiceAnswer):
            blanks = item.findall(f".//{QTI}response_lid")
            targets = _entries(question)
            assert len(blanks) == len(targets), where
            for blank, (blank_answer, target) in zip(blanks, targets, strict=True):
                labels = [m.text or "" for m in blank.iter(f"{QTI}mattext")][1:]  # the first names the blank
                if not labels:
                    problems.append(f"{where}: a blank accepts nothing ({target!r})")
                    continue
                if isinstance(blank_answer, ShapeAnswer | ExpressionAnswer | ChoiceAnswer):
                    expected = str(target)
                else:
                    expected = blank_answer.tolerance.format(float(target))
                    tolerance = blank_answer.tolerance
                    wrong = [t for t in labels if not tolerance.accepts(float(target), float(t))]
                    if wrong:
                        problems.append(f"{where}: the blank for {target!r} accepts {wrong}")
                if expected not in labels:
                    problems.append(f"{where}: the blank for {target!r} refuses {expected!r} ({labels})")
    assert problems == []


_BLANK = re.compile(r"\{1:(NUMERICAL|SHORTANSWER_C|MULTICHOICE_H):(.*?)(?<!\\)\}")
_ALTERNATIVES = re.compile(r"(?<!\\)~")


def _moodle_alternatives(body: str) -> list[tuple[str, str]]:
    """(fraction, answer) of each alternative of a cloze blank (feedback dropped)."""
    out = []
    for alternative in _ALTERNATIVES.split(body):
        fraction, answer = (
            ("100", alternative[1:]) if alternative.startswith("=") else alternative[1:].split("%", 1)
        )
        out.append((fraction, re.split(r"(?<!\\)#", answer, maxsplit=1)[0]))
    return out


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_moodle_accepts_the_canonical_answer_of_every_variant(bank: str) -> None:
    plan = _plan(bank)
    root = ET.fromstring(moodle.build(plan).text)
    elements = [q for q in root.findall("question") if q.get("type") != "category"]
    questions = _questions(plan)
    assert len(elements) == len(questions)
    problems: list[str] = []
    for element, question in zip(elements, questions, strict=True):
        where = f"{question.item_id} {question.code}"
        answer = question.answer
        if isinstance(answer, ExplainAnswer):
            # A concept question is an essay that the teacher marks, with the key points to mark by.
            grader = element.findtext("graderinfo/text") or ""
            if element.get("type") != "essay" or element.findall("answer"):
                problems.append(f"{where}: a concept question is not an essay question")
            if not all(f"<li>{lms.tex_html_inline(point)}</li>" in grader for point in answer.points):
                problems.append(f"{where}: the grader information lacks key points")
            continue
        if _single_number(question):
            assert isinstance(answer, NumericAnswer | IntegerAnswer)
            right = next(a for a in element.findall("answer") if a.get("fraction") == "100")
            value = float(right.findtext("text") or "nan")
            tolerance = float(right.findtext("tolerance") or "nan")
            canonical = float(answer.value) if isinstance(answer, IntegerAnswer) else float(answer.format())
            if not abs(canonical - value) <= tolerance * (1 + 1e-12):
                problems.append(f"{where}: {canonical} outside {value} ± {tolerance}")
        elif not isinstance(answer, ChoiceAnswer):
            text = element.findtext("questiontext/text") or ""
            blanks = _BLANK.findall(text)
            targets = _entries(question)
            assert len(blanks) == len(targets), where
            for (kind, body), (blank_answer, target) in zip(blanks, targets, strict=True):
                accepted = [a for f, a in _moodle_alternatives(body) if f == "100"]
                if not accepted:
                    problems.append(f"{where}: a blank accepts nothing ({target!r})")
                elif kind == "NUMERICAL":
                    centre, half_width = (float(x) for x in accepted[0].split(":"))
                    if not abs(float(target) - centre) <= half_width * (1 + 1e-12) + 1e-300:
                        problems.append(f"{where}: {target!r} outside {accepted[0]}")
                elif isinstance(blank_answer, ExpressionAnswer):
                    texts = [a.replace("\\}", "}").replace("\\*", "*") for a in accepted]
                    if blank_answer.value not in texts:
                        problems.append(
                            f"{where}: the formula blank refuses {blank_answer.value!r} ({texts})"
                        )
                else:
                    assert isinstance(blank_answer, ShapeAnswer)
                    texts = [a.replace("\\}", "}").replace("\\*", "*") for a in accepted]
                    wanted = lms.dimension_texts(
                        blank_answer, target if isinstance(target, str) else int(target)
                    )
                    if set(wanted) - set(texts):
                        problems.append(
                            f"{where}: the blank for {target!r} refuses {set(wanted) - set(texts)}"
                        )
    assert problems == []


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_every_spelling_a_shape_blank_lists_grades_right_in_quiz(bank: str) -> None:
    """What the LMS accepts, quiz accepts: each listed spelling, put in the answer, grades correct."""
    for question in _plan(bank).sheets[0].questions:
        answer = question.answer
        if not isinstance(answer, ShapeAnswer):
            continue
        for position, dim in enumerate(answer.dims):
            for text in lms.dimension_texts(answer, dim):
                dims = [str(d) for d in answer.dims]
                dims[position] = text
                result = grade(question, "[" + ", ".join(dims) + "]")
                assert result.status == "correct", (question.item_id, text, result.feedback)


def test_a_name_is_listed_in_every_spelling_the_reader_takes() -> None:
    assert {"d_v", "dv", "d_{v}", "dᵥ"} <= set(lms.dimension_spellings("d_v"))
    assert {"d_model", "dmodel", "d_{model}"} <= set(lms.dimension_spellings("d_model"))
    assert lms.dimension_spellings("T") == ("T",)
