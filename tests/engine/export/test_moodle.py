"""Moodle XML: the structure Moodle imports, and scores that agree with the engine's grader."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import replace

import pytest

from attnquiz.engine import banks
from attnquiz.engine.answers import (
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    Option,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.export import lms, lms_model, moodle
from attnquiz.engine.export.worksheet import ClassPlan, ExportError, plan_class
from attnquiz.engine.grading import choice_score, grade
from attnquiz.engine.variant import Question

from .golden import check_golden
from .samples import sample_plan, sample_questions

ALLOWED = {float(f) for f in moodle.MOODLE_FRACTIONS} | {-float(f) for f in moodle.MOODLE_FRACTIONS}
_BLANK = re.compile(r"\{\d+:(NUMERICAL|SHORTANSWER_C|MULTICHOICE_H):(.*?)(?<!\\)\}")


def _fraction(element: ET.Element) -> float:
    value = float(element.get("fraction", "nan"))
    assert value in ALLOWED, value
    return value


def _moodle_choice_score(fractions: list[float], letters: str, selected: frozenset[str]) -> float:
    """Moodle's multichoice grading: the sum of the ticked options' fractions, clamped to [0, 1]."""
    total = sum(f / 100 for f, letter in zip(fractions, letters, strict=True) if letter in selected)
    return min(max(total, 0.0), 1.0)


def _check_numerical(element: ET.Element, question: Question) -> None:
    answer = question.answer
    assert isinstance(answer, NumericAnswer | IntegerAnswer)
    answers = element.findall("answer")
    first = answers[0]
    assert _fraction(first) == 100
    assert float(first.findtext("text", "")) == pytest.approx(answer.value, rel=1e-15)
    half = answer.tolerance.half_width(answer.value)
    assert float(first.findtext("tolerance", "")) == pytest.approx(half, rel=1e-9)
    listed = [float(m.value) for m in question.variant.mistakes if isinstance(m.value, int | float)]
    assert len(answers) == 1 + len(listed)
    for node, value in zip(answers[1:], listed, strict=True):
        assert float(node.findtext("text", "")) == pytest.approx(value, rel=1e-15)
        assert node.findtext("feedback/text")
    # Moodle takes the first answer within its tolerance; the grader says "correct" for the same values.
    probes = [answer.value + k * half for k in (-1.01, -0.99, 0, 0.99, 1.01)] + listed
    for probe in probes:
        matched = next(
            (
                n
                for n in answers
                if abs(probe - float(n.findtext("text", ""))) <= float(n.findtext("tolerance", ""))
            ),
            None,
        )
        moodle_right = matched is not None and _fraction(matched) == 100
        assert moodle_right == (grade(question, repr(probe)).status == "correct"), probe


def _check_choice(element: ET.Element, question: Question) -> None:
    answer = question.answer
    assert isinstance(answer, ChoiceAnswer)
    if element.get("type") == "cloze":  # each-answer: one true/false per option
        decisions = [
            m.group(2).split("~")[0].split("#")[0]
            for m in _BLANK.finditer(element.findtext("questiontext/text", ""))
        ]
        assert len(decisions) == len(answer.options)
        for size in range(1, len(answer.letters) + 1):
            for chosen in itertools.combinations(answer.letters, size):
                selected = frozenset(chosen)
                right = sum(
                    (letter in selected) == (decision == "=True")
                    for letter, decision in zip(answer.letters, decisions, strict=True)
                )
                assert right / len(decisions) == pytest.approx(choice_score(answer, selected))
        return
    assert element.findtext("single") == ("false" if answer.multiple else "true")
    assert element.findtext("shuffleanswers") == "0"  # the solution refers to the options by letter
    fractions = [_fraction(a) for a in element.findall("answer")]
    assert len(fractions) == len(answer.options)
    sizes = range(1, len(answer.letters) + 1) if answer.multiple else (1,)
    for size in sizes:
        for chosen in itertools.combinations(answer.letters, size):
            selected = frozenset(chosen)
            expected = choice_score(answer, selected)
            assert _moodle_choice_score(fractions, answer.letters, selected) == pytest.approx(
                expected, abs=1e-6
            )


def _written(variants: Sequence[Question]) -> list[Question]:
    """The variants of an item that an LMS file holds: a concept question once, others all."""
    if variants and isinstance(variants[0].answer, ExplainAnswer):
        return [variants[0]]
    return list(variants)


def _answers(question: Question) -> list[SingleAnswer]:
    """The answers that get blanks: every part's, or the question's own."""
    answer = question.answer
    assert not isinstance(answer, ExplainAnswer | CodeAnswer)
    return [p.answer for p in answer.parts] if isinstance(answer, PartsAnswer) else [answer]


def _blanks_of(answer: SingleAnswer) -> int:
    """The cloze blanks one answer (or one part's) gets: one per entry or dimension, else one."""
    if isinstance(answer, MatrixAnswer):
        return answer.shape[0] * answer.shape[1]
    if isinstance(answer, VectorAnswer):
        return len(answer.values)
    if isinstance(answer, ShapeAnswer):
        return len(answer.dims)
    return 1


def check_moodle(text: str, plan: ClassPlan) -> None:
    """The structure of a Moodle export of ``plan``, question by question."""
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "quiz"
    questions = list(root)
    groups = plan.by_item()
    # A concept question is written once per item: its variants are one question (issue 27).
    written = [(item_id, _written(variants)) for item_id, variants in groups]
    assert len(questions) == sum(1 + len(variants) for _, variants in written)
    position = 0
    for item_id, variants in written:
        category = questions[position]
        assert category.get("type") == "category"
        assert category.findtext("category/text") == f"$course$/{plan.bank}/{item_id}"
        for question, element in zip(
            variants, questions[position + 1 : position + 1 + len(variants)], strict=True
        ):
            name = element.findtext("name/text", "")
            if not isinstance(question.answer, ExplainAnswer):
                assert question.code in name
                assert f"seed {question.seed}" in name
            assert element.findtext("questiontext/text")
            assert element.find("questiontext[@format='html']") is not None
            kind = element.get("type")
            answer = question.answer
            feedback = element.findtext("generalfeedback/text", "")
            if isinstance(answer, ExplainAnswer):  # marked by hand, with the key points (test_concepts)
                assert kind == "essay"
                assert feedback.startswith("<p><strong>Model answer:</strong>")
                assert (element.findtext("graderinfo/text") or "").startswith(lms.key_points_html(answer))
                continue
            assert feedback.startswith("<p><strong>Answer:</strong>")
            if lms_model.build(question).by_hand:  # a formula or a product shape: marked by hand
                assert kind == "essay"
                assert "Marked by hand" in (element.findtext("graderinfo/text") or "")
                continue
            if isinstance(answer, NumericAnswer | IntegerAnswer):
                assert kind == "numerical"
                _check_numerical(element, question)
            elif isinstance(answer, ChoiceAnswer):
                assert kind in {"multichoice", "cloze"}
                _check_choice(element, question)
            else:
                assert kind == "cloze"
                blanks = _BLANK.findall(element.findtext("questiontext/text", ""))
                if isinstance(answer, MatrixAnswer):
                    expected = answer.shape[0] * answer.shape[1]
                elif isinstance(answer, PartsAnswer | ExpressionAnswer):
                    expected = sum(_blanks_of(a) for a in _answers(question))
                else:
                    assert not isinstance(answer, CodeAnswer)
                    expected = len(answer.values if isinstance(answer, VectorAnswer) else answer.dims)
                assert len(blanks) == expected
        position += 1 + len(variants)


def test_sample_export_has_the_structure_moodle_imports_and_the_grader_scores() -> None:
    plan = sample_plan(3)
    built = moodle.build(plan)
    check_moodle(built.text, plan)
    assert any("credit blank by blank" in w for w in built.warnings)


def test_sample_export_matches_the_golden_file_and_is_byte_identical() -> None:
    plan = sample_plan(2)
    text = moodle.build(plan).text
    assert text == moodle.build(sample_plan(2)).text
    check_golden("samples-moodle.xml", text)


def test_every_week1_item_exports() -> None:
    plan = plan_class(banks.load("week1"), students=3, master_seed=2026)
    check_moodle(moodle.build(plan).text, plan)


def test_tex_is_passed_through_for_mathjax() -> None:
    text = moodle.build(sample_plan(1)).text
    assert r"\(\sqrt[3]{x}\)" in text
    assert r"\[Q = \begin{bmatrix}" in text


@pytest.mark.parametrize(
    ("fraction", "text"), [(1 / 3, "33.33333"), (-1 / 7, "-14.28571"), (1.0, "100"), (0, "0")]
)
def test_fractions_snap_to_moodles_list(fraction: float, text: str) -> None:
    assert moodle.fraction_text(fraction, "here") == text


def test_a_fraction_outside_the_list_is_an_error() -> None:
    with pytest.raises(ExportError, match="here: a score of 35 %"):
        moodle.fraction_text(0.35, "here")


def _choice_question(answer: ChoiceAnswer) -> Question:
    base = next(q for q in sample_questions() if isinstance(q.answer, ChoiceAnswer) and q.answer.multiple)
    return replace(base, variant=replace(base.variant, answer=answer))


def test_a_scheme_moodle_cannot_express_fails_loudly_naming_the_item() -> None:
    options = (Option("a", True), Option("b", True), Option("c", False))
    answer = ChoiceAnswer(options, multiple=True, scoring="all-or-nothing")
    with pytest.raises(ExportError, match=r"item 'mha-statements'.*all-or-nothing"):
        moodle.question_xml(_choice_question(answer))


def test_all_or_nothing_with_one_right_option_is_expressible() -> None:
    options = (Option("a", True), Option("b", False), Option("c", False))
    assert moodle.choice_fractions(ChoiceAnswer(options, scoring="all-or-nothing"), "x") == [
        "100",
        "-100",
        "-100",
    ]


def test_each_answer_becomes_one_true_false_choice_per_option() -> None:
    options = (Option("a", True), Option("b", False), Option("c", True, "why c"), Option("d", False))
    question = _choice_question(ChoiceAnswer(options, scoring="each-answer"))
    element = ET.fromstring("\n".join(moodle.question_xml(question)))
    assert element.get("type") == "cloze"
    _check_choice(element, question)
    assert "=True#why c~False#why c" in element.findtext("questiontext/text", "")
