"""Bank text is data in every export: Moodle cloze feedback and the Markdown export never let HTML,
links or the syntax's own separators through, whatever an author (or a shared bank) wrote."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from markdown_it import MarkdownIt

from attnquiz.engine.answers import ChoiceAnswer, Mistake, Option, ShapeAnswer, Tolerance, VectorAnswer
from attnquiz.engine.export import markdown, moodle
from attnquiz.engine.export.worksheet import ClassPlan, Sheet
from attnquiz.engine.seeding import variant_code
from attnquiz.engine.variant import Question, Variant

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a trailing backslash \\",
    "closes } the blank",
    "splits ~ the alternatives # here",
    "[click](javascript:alert(1))",
    "<javascript:alert(1)>",
    "&#106;avascript:alert(1) &lt;b&gt;",
    "[ref]: javascript:alert(1)",
]


def _question(item: str, variant: Variant) -> Question:
    return Question("hostile", item, "a shared bank", "attention", 1, variant_code(1), variant)


def _plan(text: str) -> ClassPlan:
    vector = Variant(
        prompt=f"Give the weights. {text}",
        answer=VectorAnswer((0.8808, 0.1192), Tolerance.decimals(3)),
        solution=[f"Step. {text}"],
        mistakes=[
            Mistake("first", (0.5, 0.5), f"Feedback {text}"),
            Mistake("second", (0.6, 0.4), "The next alternative."),
        ],
    )
    shape = Variant(
        prompt="Which shape?",
        answer=ShapeAnswer(("T", 64)),
        solution=["Think."],
        mistakes=[Mistake("keys", ("T", 32), f"Shape feedback {text}")],
    )
    choice = Variant(
        prompt=f"Which? {text}",
        answer=ChoiceAnswer(
            (Option(f"Yes {text}", True, f"Why {text}"), Option("No", False, f"Why not {text}")),
            multiple=True,
            scoring="each-answer",
        ),
        solution=["A."],
    )
    questions = (_question("weights", vector), _question("shape", shape), _question("which", choice))
    sheet = Sheet(1, 1, variant_code(1), questions)
    return ClassPlan("hostile", "Hostile bank", 1, tuple(q.item_id for q in questions), (sheet,))


_BLANK = re.compile(r"\{\d+:(NUMERICAL|SHORTANSWER_C|MULTICHOICE_H):(.*?)(?<!\\)\}")


@pytest.mark.parametrize("text", HOSTILE)
def test_moodle_cloze_feedback_is_escaped_and_every_alternative_survives(text: str) -> None:
    root = ET.fromstring(moodle.build(_plan(text)).text)
    clozes = [q for q in root.findall("question") if q.get("type") == "cloze"]
    assert len(clozes) == 3  # the vector, the shape and the each-answer choice
    for question in clozes:
        html = question.findtext("questiontext/text") or ""
        assert "<script" not in html
        assert "<img" not in html
        blanks = _BLANK.findall(html)
        assert blanks
        for kind, body in blanks:
            alternatives = re.split(r"(?<!\\)~", body)
            # Each alternative is an answer and its feedback, never a fragment of the one before.
            start = r"^=?(True|False)(#|$)" if kind.startswith("MULTICHOICE") else r"^(=|%-?\d+(\.\d+)?%)"
            assert all(re.match(start, a) for a in alternatives), alternatives
            if kind == "NUMERICAL" and (question.findtext("name/text") or "").startswith("weights"):
                # the answer rounded as asked (the one Moodle shows), the exact one, both mistakes
                assert len(alternatives) == 4
                assert all(re.match(r"^(=|%\d+%)-?[\d.]+:[\d.e-]+(#|$)", a) for a in alternatives), (
                    alternatives
                )


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_export_shows_bank_text_as_text(text: str) -> None:
    plan = _plan(text)
    for document in (markdown.worksheets(plan, plan.sheets), markdown.key(plan, plan.sheets)):
        rendered = MarkdownIt("commonmark").render(document)
        assert "<script" not in rendered
        assert "<img" not in rendered
        assert "javascript:" not in " ".join(re.findall(r'href="([^"]*)"', rendered))
        assert "<a " not in rendered
