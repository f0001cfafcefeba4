"""Every exported LMS blank can be answered: Moodle's and Canvas's acceptance simulated for every variant
of every item of both banks (the canonical answer is accepted; no blank accepts nothing), plus the
spellings a text-matching blank lists agreeing with quiz's own reader and grader."""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
import zipfile
from functools import cache
from html import escape

import pytest

from attnquiz.engine.answers import carry
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.grading.grade import grade, grade_answer
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet, plan_class
from attnquiz.engine.seeding import variant_code
from attnquiz.engine.variant import Question, Variant

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
VARIANTS = 20
CANVAS_SMALLEST = 1e-4  # Canvas stores a smaller non-zero number as 0


@cache
def _plan(bank: str) -> ClassPlan:
    return plan_class(banks.load(bank), students=VARIANTS, master_seed=2026)


@cache
def _moodle(bank: str) -> moodle.MoodleFile:
    return moodle.build(_plan(bank))


@cache
def _canvas(bank: str) -> qti.Package:
    return qti.package(_plan(bank))


def _canvas_items(package: qti.Package) -> list[ET.Element]:
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n)
        return ET.fromstring(archive.read(name)).findall(f".//{QTI}item")


def _questions(plan: ClassPlan) -> list[Question]:
    """The questions the LMS files hold, in order: every variant, a concept question once per item."""
    out: list[Question] = []
    for _, questions in plan.by_item():
        out += [questions[0]] if isinstance(questions[0].answer, ExplainAnswer) else list(questions)
    return out


def _canvas_number(text: str) -> float:
    value = float(text)
    return 0.0 if abs(value) < CANVAS_SMALLEST else value


def _answers(question: Question) -> list[SingleAnswer]:
    """The answers that get blanks: every part's, or the question's own."""
    answer = question.answer
    assert not isinstance(answer, ExplainAnswer | CodeAnswer)
    return [p.answer for p in answer.parts] if isinstance(answer, PartsAnswer) else [answer]


def _entries(question: Question) -> list[tuple[SingleAnswer, float | int | str]]:
    """Each blank's answer and target, in order: every part's blanks for a question in parts."""
    out: list[tuple[SingleAnswer, float | int | str]] = []
    for answer in _answers(question):
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


def _by_hand(question: Question) -> bool:
    """Whether no text blank can list every right answer: a formula answer, or a shape stated with a
    product (quiz reads both in endless forms), alone or as a part. The LMS then leaves it to a teacher."""
    answer = question.answer
    answers = [p.answer for p in answer.parts] if isinstance(answer, PartsAnswer) else [answer]
    return any(
        isinstance(a, ExpressionAnswer) or (isinstance(a, ShapeAnswer) and lms.lists_products(a))
        for a in answers
    )


def _answers_in(html: str, question: Question) -> list[str]:
    """The answers (every part's) that the grader's information of a by-hand question lacks."""
    answer = question.answer
    answers = [p.answer for p in answer.parts] if isinstance(answer, PartsAnswer) else [answer]
    return [a.format() for a in answers if f"<code>{escape(a.format(), quote=False)}</code>" not in html]


def _rounded_entries(question: Question) -> list[float | int | str]:
    """Each blank's entry as a student computes it who rounds every earlier part as asked (the exact
    entry where nothing carries), aligned with `_entries`."""
    answer = question.answer
    if not isinstance(answer, PartsAnswer):
        return [target for _, target in _entries(question)]
    out: list[float | int | str] = []
    for link in carry.rounded_chain(answer):
        single = Question(question.bank, question.item_id, question.source, question.topic, question.seed,
                          question.code, Variant(prompt="", answer=link.target, solution=()))  # fmt: skip
        out += [target for _, target in _entries(single)]
    return out


def _single_number(question: Question) -> bool:
    return isinstance(question.answer, NumericAnswer | IntegerAnswer)


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_canvas_accepts_the_canonical_answer_of_every_variant(bank: str) -> None:
    plan = _plan(bank)
    items = _canvas_items(_canvas(bank))
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
        if _by_hand(question):
            # No text blank lists every right formula or product: an essay the teacher marks, with
            # every part's answer in the comments.
            kind = next(f.findtext(f"{QTI}fieldentry") for f in item.iter(f"{QTI}qtimetadatafield"))
            if kind != "essay_question" or item.find(f".//{QTI}setvar") is not None:
                problems.append(f"{where}: a question marked by hand is not an unscored essay question")
            if _answers_in(text, question):
                problems.append(f"{where}: the comments lack {_answers_in(text, question)}")
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
            rounded = _rounded_entries(question)
            for blank, (blank_answer, target), alt in zip(blanks, targets, rounded, strict=True):
                labels = [m.text or "" for m in blank.iter(f"{QTI}mattext")][1:]  # the first names the blank
                if not labels:
                    problems.append(f"{where}: a blank accepts nothing ({target!r})")
                    continue
                if isinstance(blank_answer, ShapeAnswer | ExpressionAnswer | ChoiceAnswer):
                    expected = str(target)
                else:
                    expected = blank_answer.tolerance.format(float(target))
                    tolerance = blank_answer.tolerance
                    # Right: within tolerance of the exact entry, or of the entry as a student computes
                    # it from the earlier parts rounded as asked (error carried forward, issue 24).
                    wrong = [
                        t
                        for t in labels
                        if not tolerance.accepts(float(target), float(t))
                        and not tolerance.accepts(float(alt), float(t))
                    ]
                    if wrong:
                        problems.append(f"{where}: the blank for {target!r} accepts {wrong}")
                if expected not in labels:
                    problems.append(f"{where}: the blank for {target!r} refuses {expected!r} ({labels})")
    assert problems == []


_BLANK = re.compile(r"\{\d+:(NUMERICAL|SHORTANSWER_C|MULTICHOICE_H):(.*?)(?<!\\)\}")
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
    root = ET.fromstring(_moodle(bank).text)
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
        if _by_hand(question):
            grader = element.findtext("graderinfo/text") or ""
            if element.get("type") != "essay" or element.findall("answer"):
                problems.append(f"{where}: a question marked by hand is not an essay question")
            if _answers_in(grader, question):
                problems.append(f"{where}: the grader information lacks {_answers_in(grader, question)}")
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
                    # The first right alternative is the one Moodle shows: the value rounded as asked.
                    ranges = [tuple(float(x) for x in a.split(":")) for a in accepted]
                    if not any(abs(float(target) - c) <= h * (1 + 1e-12) + 1e-300 for c, h in ranges):
                        problems.append(f"{where}: {target!r} outside {accepted}")
                    shown = float(blank_answer.tolerance.format(float(target)))
                    if not math.isclose(ranges[0][0], shown, rel_tol=1e-12, abs_tol=1e-300):
                        problems.append(f"{where}: Moodle shows {ranges[0][0]}, not {shown}")
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
    """What the LMS accepts, quiz accepts: each listed spelling, put in the answer, grades correct
    (the spellings of a product the item states, h*d_k for d_model, among them)."""
    products = 0
    for question in _plan(bank).sheets[0].questions:
        answer = question.answer
        if not isinstance(answer, ShapeAnswer):
            continue
        for position, dim in enumerate(answer.dims):
            for text in lms.dimension_texts(answer, dim):
                products += "*" in text or "·" in text
                assert _graded_in_place(question, position, text) == "correct", (question.item_id, text)
    if bank == "week1":  # concat-shape-symbols states d_model = h·d_k
        assert products > 0


def _graded_in_place(question: Question, position: int, text: str) -> str:
    """How quiz grades the answer with the dimension at ``position`` written as ``text``."""
    assert isinstance(question.answer, ShapeAnswer)
    dims = [str(d) for d in question.answer.dims]
    dims[position] = text
    return grade(question, "[" + ", ".join(dims) + "]").status


PRODUCT_FORMS = {"h*d_k", "d_k*h", "h·d_k", "d_k·h", "h * d_k", "h*dk"}


def _with_products(plan: ClassPlan) -> list[Question]:
    return [q for q in _questions(plan) if isinstance(q.answer, ShapeAnswer) and q.answer.products]


def test_a_bank_shape_stated_with_a_product_is_marked_by_hand_in_moodle_and_canvas() -> None:
    """concat-shape-symbols ([B, T, d_model], d_model = h·d_k): quiz reads the product in endless right
    spellings (h*d_k, d_k*h, 1*h*d_k, h*dₖ, ...), more than a blank lists, so both exports leave it to
    a teacher, with the answer and the product in the grader's information."""
    plan = _plan("week1")
    questions = _questions(plan)
    assert _with_products(plan)
    for spelling in ("h*d_k", "d_k*h", "1*h*d_k", "h*dₖ", "h*d_k*1"):  # all right, some no blank listed
        assert _graded_in_place(_with_products(plan)[0], 2, spelling) == "correct", spelling
    root = ET.fromstring(_moodle("week1").text)
    elements = [q for q in root.findall("question") if q.get("type") != "category"]
    items = _canvas_items(_canvas("week1"))
    checked = 0
    for element, item, question in zip(elements, items, questions, strict=True):
        answer = question.answer
        if not (isinstance(answer, ShapeAnswer) and answer.products):
            continue
        assert element.get("type") == "essay"
        assert "{1:" not in (element.findtext("questiontext/text") or "")  # no blank
        grader = element.findtext("graderinfo/text") or ""
        assert "d_model = h*d_k" in grader
        assert f"<code>{escape(answer.format(), quote=False)}</code>" in grader
        kind = next(f.findtext(f"{QTI}fieldentry") for f in item.iter(f"{QTI}qtimetadatafield"))
        assert kind == "essay_question"
        assert item.find(f".//{QTI}response_lid") is None
        checked += 1
    assert checked


def test_a_number_a_product_stands_for_lists_the_product_and_only_what_quiz_reads() -> None:
    """[T, 512] with d_model = 512 = h·d_k, h = 8, d_k = 64: the 512 blank lists h*d_k as quiz
    accepts it there; [T, 512] with h left a symbol lists no product (quiz reads h*d_k as h·64),
    and with d_model left without a number, d_model too."""
    stated = ShapeAnswer(
        ("T", 512),
        symbols=(("T", None), ("d_model", 512), ("h", 8), ("d_k", 64)),
        products=(("d_model", "h*d_k"),),
    )
    texts = lms.dimension_texts(stated, 512)
    assert texts[:2] == ["512", "d_model"]
    assert set(texts) >= PRODUCT_FORMS
    assert len(texts) == lms.MAX_SPELLINGS
    for text in texts:
        assert grade_answer(stated, f"[T, {text}]").status == "correct", text
    assert lms.lists_products(stated)
    unknown_h = ShapeAnswer(
        ("T", 512), symbols=(("T", None), ("h", None), ("d_k", 64)), products=(("d_model", "h*d_k"),)
    )
    assert lms.dimension_texts(unknown_h, 512) == ["512"]
    assert grade_answer(unknown_h, "[T, h*d_k]").status != "correct"
    assert not lms.lists_products(unknown_h)
    # d_model without a number of its own is 512 through its product: quiz takes it, and so does the blank.
    through_product = ShapeAnswer(
        ("T", 512), symbols=(("T", None), ("d_model", None), ("h", 8), ("d_k", 64)), products=stated.products
    )
    texts = lms.dimension_texts(through_product, 512)
    assert texts[:3] == ["512", "h*d_k", "d_model"]
    assert all(grade_answer(through_product, f"[T, {text}]").status == "correct" for text in texts)


def _note_lines(warnings: list[str], lms_name: str) -> list[str]:
    return [w for w in warnings if w.startswith(lms_model.PRODUCT_BY_HAND.message(lms_name))]


def test_the_product_note_is_one_line_per_export_naming_the_items() -> None:
    plan = _plan("week1")
    items = sorted({q.item_id for q in _with_products(plan)})
    for warnings, lms_name in (
        (_moodle("week1").warnings, "Moodle"),
        (_canvas("week1").warnings, "Canvas"),
    ):
        (line,) = _note_lines(warnings, lms_name)
        assert f"({len(items)} item{'s' if len(items) != 1 else ''}: {', '.join(items)})" in line


def test_no_product_note_without_a_shape_stated_with_products() -> None:
    plan = _plan("week2")
    assert not _with_products(plan)
    assert _note_lines(_moodle("week2").warnings, "Moodle") == []
    assert _note_lines(_canvas("week2").warnings, "Canvas") == []


def _parts_plan() -> ClassPlan:
    """One question in parts whose (b) is the concatenated heads' shape, [T, d_model] with
    d_model = h·d_k: the parts exports build its blanks."""
    shape = ShapeAnswer(
        ("T", "d_model"),
        symbols=(("T", None), ("d_model", None), ("h", None), ("d_k", None)),
        products=(("d_model", "h*d_k"),),
    )
    parts = (
        Part("a", "How many heads share $d_{\\text{model}} = 512$ when $d_k = 64$?", IntegerAnswer(8)),
        Part("b", "What is the shape of the concatenated heads?", shape),
    )
    variant = Variant(
        prompt="Multi-head attention with $h$ heads of width $d_k$.", answer=PartsAnswer(parts), solution=()
    )
    question = Question("samples", "heads-in-parts", "hand-built", "attention", 1, variant_code(1), variant)
    return ClassPlan(
        "samples",
        "A question in parts",
        2026,
        ("heads-in-parts",),
        (Sheet(1, 1, variant_code(1), (question,)),),
    )


def test_a_question_in_parts_with_a_product_shape_is_marked_by_hand_and_noted() -> None:
    plan = _parts_plan()
    assert lms.lists_products(_shape_part(plan))
    built = moodle.build(plan)
    (essay,) = ET.fromstring(built.text).findall("question[@type='essay']")
    grader = essay.findtext("graderinfo/text") or ""
    assert "(a) 1 of 2 marks. Answer:" in grader
    assert "(b) 1 of 2 marks. Answer:" in grader
    assert "quiz answer samples heads-in-parts --seed 1" in grader
    assert len(_note_lines(built.warnings, "Moodle")) == 1
    package = qti.package(plan)
    (item,) = _canvas_items(package)
    assert item.find(f".//{QTI}response_lid") is None
    assert len(_note_lines(package.warnings, "Canvas")) == 1


def _shape_part(plan: ClassPlan) -> ShapeAnswer:
    (question,) = plan.sheets[0].questions
    assert isinstance(question.answer, PartsAnswer)
    shape = question.answer.parts[-1].answer
    assert isinstance(shape, ShapeAnswer)
    return shape


def test_a_name_is_listed_in_every_spelling_the_reader_takes() -> None:
    assert {"d_v", "dv", "d_{v}", "dᵥ"} <= set(lms.dimension_spellings("d_v"))
    assert {"d_model", "dmodel", "d_{model}"} <= set(lms.dimension_spellings("d_model"))
    assert lms.dimension_spellings("T") == ("T",)
