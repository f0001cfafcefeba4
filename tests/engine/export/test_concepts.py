"""Concept questions in every export: ruled space on paper, the model answer and key points in the keys,
an essay question in Moodle and Canvas (marked by hand, the key points for the grader), escaped text."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile
from functools import cache
from pathlib import Path

from pypdf import PdfReader

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.plan.class_plan import ClassPlan, plan_class, ruled_lines

from .golden import check_golden
from .test_moodle import check_moodle

BANK = Path(__file__).resolve().parents[2] / "data" / "concept" / "concepts.yaml"
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CM = 72 / 2.54  # PDF points per centimetre
RULE_GAP_CM = 0.78  # the ruled lines' spacing on a worksheet


@cache
def _bank() -> Bank:
    return banks.load(str(BANK))


def _plan(students: int = 2, items: tuple[str, ...] = ()) -> ClassPlan:
    return plan_class(_bank(), students=students, master_seed=5, items=items)


def _concept(item: str) -> ExplainAnswer:
    answer = _bank().get(item).question(0).answer
    assert isinstance(answer, ExplainAnswer)
    return answer


CONCEPTS = ("why-scale", "fixed-context")


def test_ruled_space_grows_with_the_model_answer_within_bounds() -> None:
    short = ExplainAnswer("Yes.", ("a", "b"))
    long = ExplainAnswer(" ".join(["word"] * 400), ("a", "b"))
    assert ruled_lines(short) == 4
    assert ruled_lines(long) == 14
    lengths = [ruled_lines(ExplainAnswer(" ".join(["w"] * n), ("a", "b"))) for n in range(1, 200, 7)]
    assert lengths == sorted(lengths)
    assert 4 < ruled_lines(_concept("why-scale")) < 14


# ---------------------------------------------------------------------------------------------
# Moodle and Canvas
# ---------------------------------------------------------------------------------------------


def test_moodle_writes_an_essay_with_the_key_points_as_grader_information() -> None:
    plan = _plan(1, CONCEPTS)
    built = moodle.build(plan)
    check_golden("concepts-moodle.xml", built.text)
    root = ET.fromstring(built.text.encode("utf-8"))
    essays = [q for q in root.findall("question") if q.get("type") != "category"]
    assert [q.get("type") for q in essays] == ["essay", "essay"]
    for element, item in zip(essays, CONCEPTS, strict=True):
        answer = _concept(item)
        assert element.findtext("responseformat") == "editor"
        assert element.findtext("responserequired") == "1"
        lines = int(element.findtext("responsefieldlines") or "0")
        assert lines in lms.RESPONSE_LINES
        assert lines >= ruled_lines(answer)
        assert element.findtext("attachments") == "0"
        assert element.find("graderinfo[@format='html']") is not None
        grader = element.findtext("graderinfo/text") or ""
        feedback = element.findtext("generalfeedback/text") or ""
        for text in (grader, feedback):
            assert text.startswith("<p><strong>Model answer:</strong></p>")
            assert lms.tex_html(answer.value) in text
            for point in answer.points:
                assert f"<li>{lms.tex_html_inline(point)}</li>" in text
        assert element.findtext("defaultgrade") == "1"
    # The prompt is escaped as HTML (bank text is never markup) with its maths as TeX for MathJax.
    prompt = essays[0].findtext("questiontext/text") or ""
    assert "&amp; why a &lt; b matters" in prompt
    assert r"\(\sqrt&#123;d_k}\)" in prompt  # MathJax reads \sqrt{d_k} in the decoded page
    assert "<em>without</em>" in prompt
    assert built.warnings == [f"{moodle.MARKED_BY_HAND} (2 items: why-scale, fixed-context)"]


def _assessment(package: qti.Package) -> tuple[str, ET.Element]:
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        name = next(
            n for n in archive.namelist() if n.count("/") == 1 and "meta" not in n and n.endswith(".xml")
        )
        text = archive.read(name).decode("utf-8")
    return text, ET.fromstring(text)


def test_canvas_gets_an_essay_question_with_the_model_answer_as_general_comments() -> None:
    plan = _plan(2, CONCEPTS)
    package = qti.package(plan)
    text, root = _assessment(package)
    check_golden("concepts-qti.xml", text)
    items = root.findall(f".//{QTI}item")
    assert len(items) == 2  # one of each: its two variants are the same question (no numbers)
    for item in items:
        fields = {
            f.findtext(f"{QTI}fieldlabel"): f.findtext(f"{QTI}fieldentry")
            for f in item.iter(f"{QTI}qtimetadatafield")
        }
        assert fields["question_type"] == "essay_question"
        assert fields["points_possible"] == "1.0"
        assert item.find(f"{QTI}presentation/{QTI}response_str/{QTI}render_fib") is not None
        assert item.find(f".//{QTI}setvar") is None  # nothing scores it: the teacher does
        answer = _concept("why-scale" if "why-scale" in (item.get("title") or "") else "fixed-context")
        comments = item.findtext(
            f"{QTI}itemfeedback[@ident='general_fb']/{QTI}flow_mat/{QTI}material/{QTI}mattext"
        )
        assert comments is not None
        for point in answer.points:
            assert f"<li>{lms.tex_html_inline(point)}</li>" in comments
        question = item.findtext(f"{QTI}presentation/{QTI}material/{QTI}mattext") or ""
        assert "<script" not in question
    first = items[0].findtext(f"{QTI}presentation/{QTI}material/{QTI}mattext") or ""
    assert "&amp; why a &lt; b matters" in first  # HTML-escaped in the HTML the mattext holds
    assert package.warnings == [f"{qti.MARKED_BY_HAND} (2 items: why-scale, fixed-context)"]


def test_a_class_with_numbers_and_concepts_warns_once_per_kind_of_note() -> None:
    plan = _plan(3)
    check_moodle(moodle.build(plan).text, plan)
    warnings = moodle.build(plan).warnings + qti.package(plan).warnings
    kinds = [w.rsplit(" (", 1)[0] for w in warnings]
    assert len(kinds) == len(set(kinds))
    assert sum(w.startswith(moodle.MARKED_BY_HAND) for w in warnings) == 1


# ---------------------------------------------------------------------------------------------
# Worksheets and keys
# ---------------------------------------------------------------------------------------------


def _placed(document: bytes) -> list[tuple[int, float, str]]:
    """(page, y, text) of each piece of text the PDF draws, top of the page first."""
    out: list[tuple[int, float, str]] = []
    for number, page in enumerate(PdfReader(io.BytesIO(document)).pages):

        def keep(text: str, cm: list[float], tm: list[float], font: object, size: object) -> None:
            if text.strip():
                out.append((number, tm[4] * cm[1] + tm[5] * cm[3] + cm[5], text))  # noqa: B023

        page.extract_text(visitor_text=keep)
    return out


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_the_pdf_worksheet_leaves_ruled_space_sized_for_the_answer() -> None:
    plan = _plan(1)
    placed = _placed(pdf.worksheets(plan, plan.sheets))
    text = _squeezed("".join(t for _, _, t in placed))
    assert _squeezed("Why does scaled dot-product attention divide the scores by") in text
    assert _squeezed("Say what goes wrong without it & why a < b matters here.") in text
    assert _squeezed("Answer in your own words, in a few sentences; a good answer makes 4 points.") in text
    assert _squeezed("a good answer makes 2 points.") in text
    # Below the concept question's instructions, nothing is written for the ruled lines' height.
    asked = next((p, y) for p, y, t in placed if "good answer makes 4" in t)
    below = sorted((p, -y, t) for p, y, t in placed if (p, -y) > (asked[0], -asked[1]))
    assert below[0][2].strip() == "Answer"  # the label of the ruled space
    page, y = below[1][0], -below[1][1]  # then the next question
    needed = ruled_lines(_concept("why-scale")) * RULE_GAP_CM * CM
    assert page > asked[0] or asked[1] - y >= needed
    # The key points are for the key, never on the students' sheet.
    assert _squeezed("A saturated softmax has vanishing gradients") not in text


def test_the_full_key_gives_the_model_answer_and_the_key_points() -> None:
    plan = _plan(2)
    text = _squeezed(" ".join(t for _, _, t in _placed(pdf.key(plan, plan.sheets, style="full"))))
    for phrase, count in (
        ("Marked by hand", 4),  # two concept questions a student
        ("Model answer:", 4),
        ("The softmax then saturates: one weight is near 1", 2),
        ("Key points (a mark each, 4 in all):", 2),
        ("Large scores saturate the softmax (nearly one-hot weights)", 2),
        ("Key points (a mark each, 2 in all):", 2),
        ("Long sentences lose information, early words most", 2),
    ):
        assert text.count(_squeezed(phrase)) == count, phrase


def test_the_brief_key_and_the_grid_say_by_hand_and_give_the_key_points() -> None:
    plan = _plan(3)
    brief = _squeezed(" ".join(t for _, _, t in _placed(pdf.key(plan, plan.sheets, style="brief"))))
    assert brief.count(_squeezed("why-scale (by hand)")) == 3
    assert brief.count(_squeezed("A saturated softmax has vanishing gradients")) == 3
    grid = _squeezed(" ".join(t for _, _, t in _placed(pdf.key(plan, plan.sheets, style="grid"))))
    assert (
        grid.count(_squeezed("by hand: key points at the end")) == 3 * 2
    )  # each student, each concept question
    assert grid.count(_squeezed("Question 2, why-scale: 4 key points, a mark each")) == 1
    assert grid.count(_squeezed("A saturated softmax has vanishing gradients")) == 1  # listed once


def test_markdown_worksheets_and_keys_match_the_golden_files() -> None:
    plan = _plan(1)
    sheets = markdown.worksheets(plan, plan.sheets)
    check_golden("concepts-worksheets.md", sheets)
    check_golden("concepts-key.md", markdown.key(plan, plan.sheets))
    check_golden("concepts-key-brief.md", markdown.key(plan, plan.sheets, "brief"))
    # Ruled lines are escaped underscores ended by hard breaks: never a horizontal rule.
    writing = [line for line in sheets.splitlines() if line.startswith("\\_")]
    assert len(writing) == ruled_lines(_concept("why-scale")) + ruled_lines(_concept("fixed-context"))
    assert not any(re.fullmatch(r"[_ ]{3,}", line) for line in sheets.splitlines())


def test_html_worksheet_rules_lines_and_the_key_lists_the_points() -> None:
    plan = _plan(1)
    sheets = html.worksheets(plan, plan.sheets)
    for item in CONCEPTS:
        rules = '<div class="rule"></div>' * ruled_lines(_concept(item))
        assert f'<div class="ruled">Answer{rules}</div>' in sheets
    assert "&amp; why a &lt; b matters" in sheets
    assert "<checks>" not in sheets
    assert "&lt;checks&gt;" in sheets
    assert "vanishing gradients" not in sheets  # the key points are not on the students' sheet
    key = html.key(plan, plan.sheets)
    assert key.count('<span class="by-hand">Marked by hand</span>') == 2
    points = "".join(f"<li>{html.inline_content(p)}</li>" for p in _concept("why-scale").points)
    assert f"<ol>{points}</ol>" in key
    brief = html.key(plan, plan.sheets, style="brief")
    assert brief.count('<em class="by-hand">by hand</em>') == 2
