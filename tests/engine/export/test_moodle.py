"""Moodle XML: the structure Moodle imports, and scores that agree with the engine's grader."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from html import unescape

import pytest
from msgspec.structs import replace

from attnquiz.engine.answers.kinds import (
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
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import moodle
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.grading.choices import choice_score
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, plan_class
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
    right = [n for n in answers if _fraction(n) == 100]
    assert answers[: len(right)] == right
    # Moodle shows the first right answer as "the correct answer": the value rounded as asked.
    shown = answer.tolerance.format(float(answer.value))
    assert float(right[0].findtext("text", "")) == pytest.approx(float(shown), rel=1e-15)
    assert float(right[-1].findtext("text", "")) == pytest.approx(answer.value, rel=1e-15)
    half = answer.tolerance.half_width(answer.value)
    assert float(right[-1].findtext("tolerance", "")) == pytest.approx(half, rel=1e-9)
    listed = [float(m.value) for m in question.variant.mistakes if isinstance(m.value, int | float)]
    assert len(answers) == len(right) + len(listed)
    for node, value in zip(answers[len(right) :], listed, strict=True):
        assert float(node.findtext("text", "")) == pytest.approx(value, rel=1e-15)
        assert node.findtext("feedback/text")
    # Moodle takes the first answer within its tolerance; the grader says "correct" for the same values.
    probes = [answer.value + k * half for k in (-1.01, -0.99, 0, 0.99, 1.01)] + listed
    probes += [float(shown) + k * half for k in (-1.01, -0.5, 0.5, 1.01)]
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
    # Brackets and braces are character references (no platform syntax opens on them): MathJax
    # reads the decoded page.
    assert r"\(\sqrt&#91;3]&#123;x}\)" in text
    assert r"\(\sqrt[3]{x}\)" in unescape(text)
    assert r"\[Q = \begin{bmatrix}" in unescape(text)


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


# Moodle's reading of a numerical response (qtype_numerical's answer processor, no units declared):
# spaces out, then the number the response starts with; whatever follows is taken for a unit.
_MOODLE_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")


def _moodle_fraction(element: ET.Element, response: str) -> float | None:
    """The fraction Moodle gives ``response`` once the attempt is submitted: the first answer whose
    tolerance holds the leading number (an unknown unit costs nothing with unitgradingtype 0)."""
    found = _MOODLE_NUMBER.match(response.replace(" ", ""))
    if found is None:
        return None
    value = float(found.group())
    for node in element.findall("answer"):
        if abs(value - float(node.findtext("text", ""))) <= float(node.findtext("tolerance", "")):
            return _fraction(node)
    return 0.0


def test_moodle_marks_a_number_with_text_after_it_as_its_export_warning_says() -> None:
    """What the export's warning says Moodle does: 2.75.5, 2.75abc, 2.75/2 and 2.75*3 earn the marks
    of 2.75 (no unit setting can refuse them without refusing a plain number), while quiz refuses
    them; the warning is given once, naming every numerical item."""
    plan = sample_plan(1)
    built = moodle.build(plan)
    root = ET.fromstring(built.text)
    numerical = [q for q in root.findall("question") if q.get("type") == "numerical"]
    assert numerical
    by_name = {lms.question_name(q): q for _, qs in plan.by_item() for q in qs}
    for element in numerical:
        assert element.findtext("unitgradingtype") == "0"
        assert element.findtext("showunits") == "3"  # no unit field
        question = by_name[element.findtext("name/text", "")]
        shown = element.findall("answer")[0].findtext("text", "")
        assert _moodle_fraction(element, shown) == 100
        # ".5" after a whole number is another number (589824.5): only after a decimal is it text.
        for tail in ("abc", "/2", "*3", *((".5",) if "." in shown else ())):
            assert _moodle_fraction(element, shown + tail) == 100, shown + tail
            assert grade(question, shown + tail).status != "correct", shown + tail
    assert [w for w in built.warnings if w.startswith(moodle.LEADING_NUMBER)] != []
