"""How the Moodle and Canvas exports judge a student, read from the exported files: a concept question
is written once per item, part weights set the cloze blanks' weights and the Canvas points, and no
formula answer is ever a text blank that marks an equivalent formula wrong."""

from __future__ import annotations

import html
import io
import re
import shlex
import xml.etree.ElementTree as ET
import zipfile
from functools import cache

import pytest
import sympy
from typer.testing import CliRunner

from attnquiz.engine.answers import carry, symbolic
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    Option,
    Part,
    PartsAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet, plan_class
from attnquiz.engine.seeding import variant_code
from attnquiz.engine.variant import Question, Variant
from attnquiz.main import app

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@cache
def _plan(bank: str, variants: int) -> ClassPlan:
    return plan_class(banks.load(bank), students=variants, master_seed=2026)


def _canvas_root(package: qti.Package) -> ET.Element:
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n)
        return ET.fromstring(archive.read(name))


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_a_concept_question_is_exported_once_per_item_not_once_per_variant(bank: str) -> None:
    plan = _plan(bank, 5)
    concepts = [item for item, questions in plan.by_item() if isinstance(questions[0].answer, ExplainAnswer)]
    assert concepts, f"{bank} has concept questions"
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    essays = [q.findtext("name/text", "") for q in root if q.get("type") == "essay"]
    named = [name for name in essays if name.endswith("(concept question)")]
    assert sorted(named) == sorted(f"{item} (concept question)" for item in concepts)
    numbered = [q for q in root if q.get("type") == "numerical"]
    assert numbered
    assert len(numbered) % 5 == 0  # every other item keeps its five variants
    canvas = _canvas_root(qti.package(plan))
    groups = [s for s in canvas.iter(f"{QTI}section") if s.get("ident") != "root_section"]
    assert len(groups) == len(plan.items)
    for section in groups:
        expected = 1 if section.get("title") in concepts else 5
        assert len(section.findall(f"{QTI}item")) == expected, section.get("title")


WEIGHTED = r"""
bank: weighted
title: "Part weights"
items:
  - id: score-then-weight
    kind: formula
    source: "Day 13 §3, two-token problem"
    topic: scaled-dot-product
    params:
      s: {range: [2, 5]}
      e2: {choice: [1, 1.5, 2]}
    prompt: "A query and key 1 have $q \\cdot k_1 = {{s}}$ with $d_k = 4$; key 2's scaled score is ${{e2}}$."
    parts:
      - name: scaled
        prompt: "Compute the scaled score of key 1."
        answer: {value: "s / sqrt(4)"}
        tolerance: {decimals: 2}
        solution: ["${{s}} / 2 = {{scaled}}$."]
        weight: WEIGHT_A
      - prompt: "The softmax weight of key 1, using your (a)."
        answer: {value: "exp(scaled) / (exp(scaled) + exp(e2))"}
        tolerance: {decimals: 2}
        weight: WEIGHT_B
        solution: ["$\\exp({{scaled}}) / (\\exp({{scaled}}) + \\exp({{e2}}))$."]
"""


def _weighted_plan(weight_a: str, weight_b: str) -> ClassPlan:
    from attnquiz.engine.bank.loader import load_bank_text

    text = WEIGHTED.replace("WEIGHT_A", weight_a).replace("WEIGHT_B", weight_b)
    return plan_class(load_bank_text(text, "weighted.yaml"), students=2, master_seed=3)


def _cloze_weights(plan: ClassPlan) -> list[list[int]]:
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    texts = [q.findtext("questiontext/text", "") for q in root if q.get("type") == "cloze"]
    return [[int(w) for w in re.findall(r"\{(\d+):NUMERICAL:", text)] for text in texts]


def _canvas_shares(plan: ClassPlan) -> list[list[float]]:
    """Per item, the share of the score each blank's accepted texts add (one per blank, in order)."""
    out = []
    for item in _canvas_root(qti.package(plan)).iter(f"{QTI}item"):
        shares: dict[str, set[float]] = {}
        for condition in item.iter(f"{QTI}respcondition"):
            added = condition.find(f"{QTI}setvar[@action='Add']")
            tested = condition.find(f".//{QTI}varequal")
            if added is not None and tested is not None:
                shares.setdefault(tested.get("respident", ""), set()).add(float(added.text or ""))
        assert all(len(s) == 1 for s in shares.values())  # every spelling of a blank adds the same
        out.append([next(iter(s)) for s in shares.values()])
    return out


@pytest.mark.parametrize(
    ("weight_a", "weight_b", "cloze", "canvas"),
    [
        ("1", "1", [1, 1], [50.0, 50.0]),
        ("1", "2", [1, 2], [33.33, 66.67]),
        ("3", "1", [3, 1], [75.0, 25.0]),
        ("0.5", "1.5", [1, 3], [25.0, 75.0]),
    ],
)
def test_part_weights_set_the_cloze_blank_weights_and_the_canvas_shares(
    weight_a: str, weight_b: str, cloze: list[int], canvas: list[float]
) -> None:
    plan = _weighted_plan(weight_a, weight_b)
    assert _cloze_weights(plan) == [cloze, cloze]
    assert _canvas_shares(plan) == [canvas, canvas]
    moodle_notes = moodle.build(plan).warnings
    canvas_notes = qti.package(plan).warnings
    assert any(n.startswith(moodle.MARK_PER_BLANK) for n in moodle_notes)
    unequal = any(n.startswith(qti.EQUAL_BLANKS) for n in canvas_notes)
    assert unequal == (weight_a != weight_b)  # Canvas splits equally: said where that differs


def test_a_weight_ratio_moodle_cannot_write_is_rounded_and_said() -> None:
    plan = _weighted_plan("1", "99.99")
    assert _cloze_weights(plan) == [[1, 100], [1, 100]]
    assert any(n.startswith(moodle.WEIGHTS_ROUNDED) for n in moodle.build(plan).warnings)


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_a_part_counts_by_its_weight_not_by_its_blanks_in_the_bank_chains(bank: str) -> None:
    """A chain whose last part is a vector (layernorm-chain: (a), (b), then a vector (c)) gives each
    part the same share of the cloze question's marks, as quiz does, however many blanks it has."""
    plan = _plan(bank, 1)
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    questions = [q for _, qs in plan.by_item() for q in lms_model.variants_to_write(qs)]
    elements = [q for q in root if q.get("type") != "category"]
    checked = 0
    for question, element in zip(questions, elements, strict=True):
        answer = question.answer
        if not isinstance(answer, PartsAnswer) or element.get("type") == "essay":
            continue  # an essay (a part no blank marks rightly) has no blanks to weigh
        text = element.findtext("questiontext/text", "")
        weights = [int(w) for w in re.findall(r"\{(\d+):[A-Z_]+:", text)]
        sizes = [len(lms_model.targets(p.answer)) for p in answer.parts]
        assert len(weights) == sum(sizes), question.item_id
        per_part, start = [], 0
        for size in sizes:
            per_part.append(sum(weights[start : start + size]))
            start += size
        total = sum(per_part)
        for part, got in zip(answer.parts, per_part, strict=True):
            assert got / total == pytest.approx(part.weight / sum(p.weight for p in answer.parts))
        checked += 1
    assert checked


def _formula_questions(bank: str) -> list[tuple[Question, list[ExpressionAnswer]]]:
    plan = _plan(bank, 3)
    out = []
    for _, questions in plan.by_item():
        for question in lms_model.variants_to_write(questions):
            answer = question.answer
            answers = [p.answer for p in answer.parts] if isinstance(answer, PartsAnswer) else [answer]
            formulas = [a for a in answers if isinstance(a, ExpressionAnswer)]
            if formulas:
                out.append((question, formulas))
    return out


def _right_forms(answer: ExpressionAnswer) -> list[str]:
    """The canonical form, a factored form and a reordered form of the answer (sympy, from the
    reader's own tree), each as a student types it."""
    expr = symbolic.to_sympy(answer.formula.tree)
    factored = sympy.factor(expr)
    terms = expr.as_ordered_terms()
    reordered = sympy.Add(*terms[::-1], evaluate=False) if len(terms) > 1 else expr
    if len(terms) == 1:
        reordered = sympy.Mul(*sympy.Mul.make_args(expr)[::-1], evaluate=False)
    forms = [answer.value, str(factored), str(reordered)]
    return [f.replace("**", "^") for f in forms]


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_no_lms_marks_an_equivalent_formula_wrong(bank: str) -> None:
    """For every formula answer of both banks, the forms quiz grades right (canonical, factored,
    reordered) meet no text match in either export: the question is an essay the teacher marks, with
    the answer, the rule "any algebraically equal formula" and the quiz command in the grader's
    information. (A text blank listed 1-16 spellings and scored d(12d+13) as 0.)"""
    found = _formula_questions(bank)
    assert found
    plan = _plan(bank, 3)
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    by_name = {q.findtext("name/text", ""): q for q in root if q.get("type") != "category"}
    canvas = {i.get("title"): i for i in _canvas_root(qti.package(plan)).iter(f"{QTI}item")}
    for question, formulas in found:
        for answer in formulas:
            for form in _right_forms(answer):
                assert grade_answer(answer, form).status == "correct", (question.item_id, form)
        element = by_name[lms.question_name(question)]
        assert element.get("type") == "essay", question.item_id
        assert element.findall("answer") == []
        assert not re.search(r"\{\d+:", element.findtext("questiontext/text", ""))  # no cloze blank
        grader = element.findtext("graderinfo/text", "")
        assert "any formula algebraically equal to it" in grader
        for answer in formulas:
            assert f"<code>{html.escape(answer.value, quote=False)}</code>" in grader
        assert f"quiz answer {question.bank} {question.item_id} --seed {question.seed}" in grader
        item = canvas[lms.question_name(question)]
        fields = {
            f.findtext(f"{QTI}fieldlabel"): f.findtext(f"{QTI}fieldentry")
            for f in item.iter(f"{QTI}qtimetadatafield")
        }
        assert fields["question_type"] == "essay_question"
        assert item.find(f".//{QTI}response_lid") is None
        assert item.find(f".//{QTI}setvar") is None  # nothing scores it: the teacher does


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_the_export_says_once_which_formula_items_are_marked_by_hand_and_points_to_stack(bank: str) -> None:
    plan = _plan(bank, 3)
    items = list(dict.fromkeys(q.item_id for q, _ in _formula_questions(bank)))
    for warnings, name in ((moodle.build(plan).warnings, "Moodle"), (qti.package(plan).warnings, "Canvas")):
        lines = [w for w in warnings if w.startswith(lms_model.FORMULA_BY_HAND.message(name))]
        assert len(lines) == 1, warnings
        assert "--format stack" in lines[0]
        assert f"({len(items)} item{'s' if len(items) != 1 else ''}: {', '.join(items)})" in lines[0]
        assert not any("compares a formula answer as text" in w for w in warnings)


def test_the_command_in_the_grader_information_marks_a_factored_formula_right() -> None:
    question, (answer,) = _formula_questions("week1")[0]
    root = ET.fromstring(moodle.build(_plan("week1", 3)).text.encode("utf-8"))
    element = next(q for q in root if q.findtext("name/text") == lms.question_name(question))
    command = re.search(r"<code>(quiz answer [^<]*)</code>", element.findtext("graderinfo/text", ""))
    assert command is not None
    words = shlex.split(html.unescape(command.group(1)))
    factored = _right_forms(answer)[1]
    result = CliRunner().invoke(app, [*words[1:-1], factored])  # the placeholder replaced
    assert result.exit_code == 0, result.output
    assert "correct" in result.output.lower()


def _choice_parts_plan() -> ClassPlan:
    """A question in parts whose (b) is a multiple-select choice (quiz reads "C, A", "ca", "(A), (C)")."""
    choice = ChoiceAnswer(
        (Option("Heads are concatenated", True), Option("Heads add", False), Option("W_O mixes them", True)),
        multiple=True,
    )
    parts = (
        Part("a", "How many heads when $d_k = 64$ and $d = 512$?", IntegerAnswer(8)),
        Part("b", "Which hold?", choice),
    )
    variant = Variant(prompt="Multi-head attention.", answer=PartsAnswer(parts), solution=())
    question = Question("samples", "heads-choice", "hand-built", "attention", 1, variant_code(1), variant)
    return ClassPlan(
        "samples", "Parts", 2026, ("heads-choice",), (Sheet(1, 1, variant_code(1), (question,)),)
    )


def test_a_choice_part_is_a_selection_in_moodle_and_marked_by_hand_in_canvas() -> None:
    plan = _choice_parts_plan()
    (question,) = plan.sheets[0].questions
    for typed in ("A, C", "C, A", "ca", "(A), (C)"):  # all right in quiz: no text blank lists them all
        assert grade_parts_text(question, "8", typed) == "correct", typed
    built = moodle.build(plan)
    (cloze,) = ET.fromstring(built.text.encode("utf-8")).findall("question[@type='cloze']")
    text = cloze.findtext("questiontext/text", "")
    assert re.search(r"\{\d+:MULTIRESPONSE:=A\. ", text)  # a selection: Moodle reads no text
    assert not any(w.startswith(lms_model.CHOICE_AMONG_BLANKS.message("Moodle")) for w in built.warnings)
    package = qti.package(plan)
    (item,) = _canvas_root(package).iter(f"{QTI}item")
    kinds = [f.findtext(f"{QTI}fieldentry") for f in item.iter(f"{QTI}qtimetadatafield")]
    assert kinds[0] == "essay_question"
    assert item.find(f".//{QTI}response_lid") is None
    comments = "".join(m.text or "" for m in item.iter(f"{QTI}mattext"))
    assert "a choice part is right with its letters in any order" in comments
    notes = [w for w in package.warnings if w.startswith(lms_model.CHOICE_AMONG_BLANKS.message("Canvas"))]
    assert notes == [f"{lms_model.CHOICE_AMONG_BLANKS.message('Canvas')} (1 item: heads-choice)"]


def grade_parts_text(question: Question, *responses: str) -> str:
    answer = question.answer
    assert isinstance(answer, PartsAnswer)
    return grade_parts(answer, list(responses)).status


def test_an_lms_question_asks_for_numbers_in_digits_and_the_export_says_why_once() -> None:
    """Moodle and Canvas read a number only as digits; quiz reads 3/4 or 768^2 too. So the question
    says what the LMS reads, and the export says once what a calculation would earn there."""
    plan = _plan("week2", 1)
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    numerical = [q for q in root if q.get("type") == "numerical"]
    assert numerical
    for element in numerical:
        assert "in digits, not as a" in element.findtext("questiontext/text", "")
    for warnings, said in (
        (moodle.build(plan).warnings, moodle.LEADING_NUMBER),
        (qti.package(plan).warnings, lms_model.NUMBERS_IN_DIGITS.message("Canvas")),
    ):
        notes = [w for w in warnings if w.startswith(said)]
        assert len(notes) == 1


_NUMERICAL = re.compile(r"\{\d+:NUMERICAL:(.*?)(?<!\\)\}")


def _typed_entries(answer: object, value: object) -> list[str]:
    """A part's value as the rounding student types it, entry by entry."""
    assert isinstance(answer, NumericAnswer | IntegerAnswer | VectorAnswer | MatrixAnswer)
    if isinstance(value, tuple):
        flat = [v for row in value for v in (row if isinstance(row, tuple) else (row,))]
    else:
        flat = [value]
    return [str(v) if isinstance(answer, IntegerAnswer) else answer.tolerance.format(float(v)) for v in flat]


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_a_student_who_rounds_each_part_and_reuses_it_is_marked_right_by_moodle_and_canvas(bank: str) -> None:
    """The parts say "to 2 decimal places" and then "use your (b)": quiz accepts a later part computed
    from the rounded earlier one (issue 24), and so must the LMS. Over 20 variants of every chain,
    each number such a student types lies in a right NUMERICAL alternative of its Moodle blank and is
    a text Canvas's blank accepts."""
    plan = _plan(bank, 20)
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    by_name = {q.findtext("name/text", ""): q for q in root if q.get("type") == "cloze"}
    canvas = {i.get("title"): i for i in _canvas_root(qti.package(plan)).iter(f"{QTI}item")}
    checked = differing = 0
    for _, questions in plan.by_item():
        for question in questions:
            answer = question.answer
            if not isinstance(answer, PartsAnswer) or not any(p.uses for p in answer.parts):
                continue
            if lms_model.build(question).by_hand:
                continue
            typed: list[str] = []
            for link in carry.rounded_chain(answer):
                differing += link.differs
                typed += _typed_entries(link.part.answer, carry.written(link.target))
            cloze = by_name[lms.question_name(question)].findtext("questiontext/text", "")
            blanks = _NUMERICAL.findall(cloze)
            assert len(blanks) == len(typed), question.item_id
            for text, body in zip(typed, blanks, strict=True):
                right = [a[1:].split("#")[0] for a in re.split(r"(?<!\\)~", body) if a.startswith("=")]
                assert any(
                    abs(float(text) - float(c)) <= float(h) * (1 + 1e-12)
                    for c, h in (r.split(":") for r in right)
                ), (question.item_id, question.code, text, right)
            lids = canvas[lms.question_name(question)].findall(f".//{QTI}response_lid")
            for text, lid in zip(typed, lids, strict=True):
                labels = [m.text or "" for m in lid.iter(f"{QTI}mattext")][1:]
                assert text in labels, (question.item_id, question.code, text, labels)
            checked += 1
    assert checked
    assert differing  # some chains do round differently: the test reaches the case that matters


@pytest.mark.parametrize(
    ("value", "places", "listed", "refused"),
    [
        (1.0849538, 2, ["1.08", "1.09"], ["1.07", "1.10"]),  # both neighbours within 0.51 of a unit
        (0.8808, 2, ["0.88", ".88"], ["0.89", "0.87"]),  # 0.89 is 0.0092 away: beyond the tolerance
        (2.5, 0, ["2", "3"], ["1", "4"]),
    ],
)
def test_a_canvas_number_blank_lists_the_neighbours_its_tolerance_accepts(
    value: float, places: int, listed: list[str], refused: list[str]
) -> None:
    """Canvas matches text: a number within tolerance that is not a rounding of the exact value (1.09
    for 1.08495 to 2 places, as a student who rounded an intermediate result writes) is listed too."""
    texts = lms.spellings(value, Tolerance.decimals(places))
    assert set(listed) <= set(texts)
    assert not set(refused) & set(texts)
    assert all(Tolerance.decimals(places).accepts(value, float(t)) for t in texts)
