"""Bank text is data in every export: Moodle cloze feedback and the Markdown export never let HTML,
links or the syntax's own separators through, whatever an author (or a shared bank) wrote."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html import unescape
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from attnquiz.engine.answers.kinds import ChoiceAnswer, Mistake, Option, ShapeAnswer, VectorAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet
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


def _question(item: str, variant: Variant, note: str = "") -> Question:
    code = variant_code(1)
    return Question("hostile", item, "a shared bank", "attention", 1, code, variant, note, note)


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
    noted = _question("weights", vector, f"Note {text}")
    questions = (noted, _question("shape", shape), _question("which", choice))
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


MARKDOWN_ACTIVE = ["[a](javascript:alert(1))", "<https://evil.example>", "![x](y.png)"]


@pytest.mark.parametrize("text", [*HOSTILE, *MARKDOWN_ACTIVE])
def test_markdown_export_shows_bank_text_as_text(text: str) -> None:
    plan = _plan(text)
    for document in (markdown.worksheets(plan, plan.sheets), markdown.key(plan, plan.sheets)):
        rendered = MarkdownIt("commonmark").render(document)
        assert "<script" not in rendered
        assert "<img" not in rendered
        assert "javascript:" not in " ".join(re.findall(r'href="([^"]*)"', rendered))
        assert "<a " not in rendered


# The active syntax of each LMS, in bank text: Moodle's cloze blanks (parsed anywhere in a cloze
# question's text, maths included) and its brace filters (multilang2, generico), Canvas's
# fill-in-the-blank placeholders ([e1]), STACK's blocks, and literal TeX delimiters that would hand
# text the bank never checked to the platform's MathJax.
LMS_ACTIVE = [
    "{1:SHORTANSWER:=x}",
    "{2:NUMERICAL:=1:0.1}",
    "{1:MULTICHOICE:=a~b}",
    "{#1}",
    "{mlang xx}hidden{mlang}",
    '{GENERICO:type="x"}',
    "[e1] [e2]",
    "[[[javascript]]alert(1)[[/javascript]]",
    "\\$\\$\\href{javascript:alert(1)}{x}\\$\\$",
    "\\\\(x\\\\) and \\\\[y\\\\]",
]
_PARSED_BY_PLATFORM = re.compile(r"\{\d*:[A-Z_]+:|\{#\d+\}|\{mlang|\{GENERICO|\[e\d+\]|\[\[|\{@")
_TYPESET = re.compile(r"\$\$|\\\(|\\\[")
_NOT_MATH = re.compile(rf'<span class="{lms.NOT_MATH_CLASS}">[^<]*</span>')


def _syntax(html: str) -> list[str]:
    """The active sequences of a text: what the platform's parsers read in the stored HTML, and the
    TeX delimiters MathJax reads in the decoded page (outside the spans it skips)."""
    typeset = _TYPESET.findall(unescape(_NOT_MATH.sub("", html)))
    return sorted(_PARSED_BY_PLATFORM.findall(html) + typeset)


def _qti_texts(plan: ClassPlan) -> list[str]:
    return [
        unescape(m) for m in re.findall(r"<mattext[^>]*>(.*?)</mattext>", qti.assessment_xml(plan, []), re.S)
    ]


def _moodle_texts(plan: ClassPlan) -> list[str]:
    root = ET.fromstring(moodle.build(plan).text)
    return [t.text or "" for t in root.iter("text")]


@pytest.mark.parametrize("text", LMS_ACTIVE)
@pytest.mark.parametrize("texts", [_moodle_texts, _qti_texts], ids=["moodle", "qti"])
def test_lms_exports_keep_bank_text_out_of_the_platforms_syntax(
    text: str, texts: Callable[[ClassPlan], list[str]]
) -> None:
    # Whatever the bank says, the platform finds exactly the syntax it finds in a plain bank's export.
    hostile = [_syntax(t) for t in texts(_plan(text))]
    plain = [_syntax(t) for t in texts(_plan("plain words"))]
    assert hostile == plain


class _Elements(HTMLParser):
    """Every element of a page with its attribute names, and every attribute value."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, tuple[str, ...]]] = []
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, tuple(sorted(name for name, _ in attrs))))
        self.values += [value or "" for _, value in attrs]


def _elements(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


@pytest.mark.parametrize("text", HOSTILE + LMS_ACTIVE)
def test_html_export_builds_the_same_elements_whatever_the_bank_says(text: str) -> None:
    hostile, plain = _plan(text), _plan("plain words")
    for build in (html.worksheets, html.key):
        seen = _elements(build(hostile, hostile.sheets))
        assert sorted(seen.elements) == sorted(_elements(build(plain, plain.sheets)).elements)
        assert not any(v.strip().lower().startswith("javascript:") for v in seen.values)
