"""Every formula of the Moodle and Canvas (QTI) exports carries its spoken form (issue 31, item 2).

The exports keep TeX for the platform's MathJax and put beside each formula a visually hidden span
with the words a screen reader says (`attnquiz.engine.markup.speech`). These tests parse every
HTML text of both exports of both banks and find, for every TeX formula, its spoken form: the
speech of that very formula, hidden by the platforms' classes, the TeX hidden from assistive
technology. No TeX is left outside that wrapper, where a screen reader would spell it out.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from functools import cache
from html import unescape
from html.parser import HTMLParser

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import moodle, qti
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.markup.speech import speech
from attnquiz.engine.plan.class_plan import ClassPlan, plan_class

TEX = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
CASES = [(bank, seed) for bank in ("week1", "week2") for seed in (None, 2026)]


@dataclass
class Formula:
    tex: str = ""
    spoken: str = ""
    hidden_tex: bool = False
    spoken_class: str = ""
    plain_text_ignored: bool = False


@dataclass
class Reader(HTMLParser):
    formulas: list[Formula] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)  # text outside any formula
    stack: list[str] = field(default_factory=list)  # the role of each open span
    code: int = 0  # open <code> elements: code is shown as written, never typeset

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.code += tag == "code"
        if tag != "span":
            return
        found = dict(attrs)
        role = ""
        if found.get("class") == "quiz-math":
            role = "math"
            self.formulas.append(Formula())
        elif self.stack and self.stack[-1] == "math" and found.get("aria-hidden") == "true":
            role = "tex"
            self.formulas[-1].hidden_tex = True
        elif self.stack and self.stack[-1] == "math":
            role = "spoken"
            self.formulas[-1].spoken_class = found.get("class") or ""
        elif self.stack and self.stack[-1] == "spoken":  # the words, kept out of Moodle's plain text
            role = "spoken"
            self.formulas[-1].plain_text_ignored = found.get("class") == lms.PLAIN_TEXT_IGNORED
        self.stack.append(role)

    def handle_endtag(self, tag: str) -> None:
        self.code -= tag == "code"
        if tag == "span" and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        where = self.stack[-1] if self.stack else ""
        if where == "tex":
            self.formulas[-1].tex += data
        elif where == "spoken":
            self.formulas[-1].spoken += data
        elif not self.code:
            self.loose.append(data)


def said(tex: str) -> str:
    """The spoken form of a MathJax formula (``\\(x\\)`` or ``\\[x\\]``) as the exports' source wrote it."""
    match = TEX.fullmatch(tex)
    assert match is not None, tex
    inline, display = match.groups()
    (formula,) = markup.parse(f"${inline}$" if inline is not None else f"$${display}$$")
    assert isinstance(formula, markup.Math)
    return speech(formula)


def check(texts: list[str]) -> int:
    """Every formula in ``texts`` has its spoken form; the number of formulas."""
    count = 0
    for text in texts:
        reader = Reader()
        reader.feed(text)
        reader.close()
        loose = "".join(reader.loose)
        assert not TEX.search(loose), TEX.search(loose)
        for formula in reader.formulas:
            assert formula.hidden_tex
            assert TEX.fullmatch(formula.tex), formula.tex
            assert formula.spoken == said(formula.tex) != ""
            assert set(formula.spoken_class.split()) >= {"sr-only", "visually-hidden", "screenreader-only"}
            assert formula.plain_text_ignored
        count += len(reader.formulas)
    return count


@cache
def plan(bank: str, seed: int | None) -> ClassPlan:
    return plan_class(banks.load(bank), students=1, master_seed=seed)


@pytest.mark.parametrize(("bank", "seed"), CASES)
def test_every_moodle_formula_has_its_spoken_form(bank: str, seed: int | None) -> None:
    root = ET.fromstring(moodle.build(plan(bank, seed)).text.encode("utf-8"))
    texts = [node.text or "" for node in root.iter("text")]
    assert check(texts) > 50  # question texts, feedback and solutions are full of formulas


@pytest.mark.parametrize(("bank", "seed"), CASES)
def test_every_qti_formula_has_its_spoken_form(bank: str, seed: int | None) -> None:
    texts: list[str] = []
    with zipfile.ZipFile(io.BytesIO(qti.package(plan(bank, seed)).data)) as package:
        for name in package.namelist():
            if name.endswith(".xml"):
                root = ET.fromstring(package.read(name))
                texts += [node.text or "" for node in root.iter() if node.tag.endswith("mattext")]
    assert check(texts) > 50


@pytest.mark.parametrize(
    ("tex", "spoken"),
    [
        (r"\sqrt{d_k}", "square root of d sub k end root"),
        (r"a < b", "a is less than b"),
        (r"\frac{1}{2}", None),
    ],
)
def test_a_formula_is_tex_for_mathjax_beside_its_words(tex: str, spoken: str | None) -> None:
    (formula,) = markup.parse(f"${tex}$")
    assert isinstance(formula, markup.Math)
    written = lms.tex_formula(formula)
    assert check([written]) == 1
    if spoken is not None:
        reader = Reader()
        reader.feed(written)
        assert reader.formulas[0].spoken == spoken
    assert "<" not in written.split('aria-hidden="true">')[1].split("</span>")[0]  # the TeX stays escaped


def test_code_keeps_no_tex_delimiter() -> None:
    html = lms.tex_html("```\nprint('\\\\(x\\\\)')\n```")
    assert check([html]) == 0
    assert "\\(" not in html  # written as a character reference


# Moodle's html2text drops a span so classed (and only so written) before it strips the other tags.
_MOODLE_IGNORED = re.compile(r'<span class="_html2text_ignore">.+?</span>', re.I)


def _moodle_summary(html: str) -> str:
    """Moodle's plain text of a question, as its html2text makes it: ignored spans out, tags out,
    character references decoded (a bank's ``{`` is written ``&#123;``, which Moodle's text shows
    as ``{``)."""
    return unescape(re.sub(r"<[^>]+>", "", _MOODLE_IGNORED.sub("", html)))


def test_moodles_question_summary_reads_the_tex_without_the_spoken_form() -> None:
    """Moodle's reports show a question as plain text: the TeX, never the TeX and its words run
    together ("\\(\\sqrt{d_k}\\)square root of d sub k"); a screen reader still reads the words."""
    html = lms.tex_html("Scale by $\\sqrt{d_k}$.")
    assert _moodle_summary(html) == "Scale by \\(\\sqrt{d_k}\\)."
    assert "square root of d sub k" in html
    root = ET.fromstring(moodle.build(plan("week1", None)).text)
    formulas = [
        found
        for t in root.iter("text")
        for found in re.findall(r'<span class="quiz-math">.*?</span></span></span>', t.text or "")
    ]
    assert len(formulas) > 50
    for formula_html in formulas:
        summary = _moodle_summary(formula_html)
        assert TEX.fullmatch(summary), summary
