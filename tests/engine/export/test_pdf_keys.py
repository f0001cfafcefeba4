"""Every answer of every student is in the PDF key, read back from the PDF's text, for whole banks.

A key that loses answers is worse than none: the brief key once pushed a student's last answers off
the page (a block that could not break across columns), silently, for every student.
"""

from __future__ import annotations

import io
import re

import pytest
from pypdf import PdfReader

from attnquiz.engine.answers.carry import key_text
from attnquiz.engine.answers.kinds import Answer, ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.formula import tex as formula_tex
from attnquiz.engine.plan.class_plan import ClassPlan, KeyStyle, plan_class
from attnquiz.engine.variant import Question

_SPACE = re.compile(r"\s+")


def _squeezed(text: str) -> str:
    """Text with no white space: PDF extraction breaks lines and spaces where the layout does."""
    # Typst sets a minus as − and an apostrophe as ’ (smart quotes): the bank's text has - and '.
    return _SPACE.sub("", text).replace("\u2212", "-").replace("\u2019", "'")


def _sections(plan: ClassPlan, text: str) -> list[str]:
    """Each student's part of the key: from their first heading to the next student's first heading."""
    starts = [
        text.index(_squeezed(f"Student {sheet.student} · variant {sheet.code}")) for sheet in plan.sheets
    ]
    assert starts == sorted(starts), "students are out of order in the key"
    sections = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    # A student's block that runs into the next column or page repeats its heading there, possibly in
    # the middle of an answer: only the first heading is kept, so that answer reads as one text again.
    headings = [_squeezed(f"Student {sheet.student} · variant {sheet.code}") for sheet in plan.sheets]
    return [h + section[len(h) :].replace(h, "") for h, section in zip(headings, sections, strict=True)]


_BODY_BOTTOM = 22 * 72 / 25.4  # the pages' bottom margin (22 mm): below it only the footer may stand


def visible_text(document: bytes) -> str:
    """The text a reader sees: what is drawn inside each page's body, not what ran off it.

    A PDF keeps text laid out beyond the page's edge (or under its footer) in its content, and
    plain text extraction returns it; a person never sees it. Such text is dropped here.
    """
    pieces: list[str] = []
    for page in PdfReader(io.BytesIO(document)).pages:
        top, right = float(page.mediabox.top), float(page.mediabox.right)

        def keep(text: str, cm: list[float], tm: list[float], font: object, size: object) -> None:
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            if _BODY_BOTTOM <= y <= top and 0 <= x <= right:  # noqa: B023 (used at once, in this loop)
                pieces.append(text)

        page.extract_text(visitor_text=keep)
    return "".join(pieces)


_ITALIC = str.maketrans(
    {chr(c): chr(0x1D44E + c - ord("a")) for c in range(ord("a"), ord("z") + 1)}
    | {chr(c): chr(0x1D434 + c - ord("A")) for c in range(ord("A"), ord("Z") + 1)}
    | {"h": "\u210e"}  # the one italic letter Unicode keeps outside the block (Planck's h)
)
_TEX_LAYOUT = re.compile(r"\\(left|right|frac|mathit)|\\,|[{}^_ ]")
_TEX_TEXT = re.compile(r"\\text\{([^}]*)\}")


def typeset_text(answer: Answer) -> str:
    """The text PDF extraction reads from an answer as a key shows it: a formula typeset (italic
    letters, an upright multi-letter subscript, no TeX commands), any other kind as written."""
    if not formula_tex.is_typeset(answer):
        return key_text(answer)  # a later part also as it follows from the rounded earlier ones

    def formula(match: re.Match[str]) -> str:
        # Typst writes a letter's power before its subscript: d_{k}^{2} reads back as d, 2, k.
        body = re.sub(r"_(\{[^{}]*\}|\{\\text\{[^}]*\}\})(\^\{[^}]*\})", r"\2_\1", match.group(1))
        out: list[str] = []
        at = 0
        for text in _TEX_TEXT.finditer(body):
            out += [_TEX_LAYOUT.sub("", body[at : text.start()]).translate(_ITALIC), text.group(1)]
            at = text.end()
        out.append(_TEX_LAYOUT.sub("", body[at:]).translate(_ITALIC))
        return "".join(out)

    return re.sub(r"\$([^$]*)\$", formula, formula_tex.answer_markup(answer).replace("\\|", "|"))


def _key_answer(question: Question) -> str:
    """What a key shows as a question's answer: the answer, or a concept question's first key point
    (its longest stretch of plain text, which PDF extraction reads back as written)."""
    answer = question.answer
    if not isinstance(answer, ExplainAnswer):
        return typeset_text(answer)
    pieces = re.split(r"\$[^$]*\$|[*_`]", answer.points[0])
    return max(pieces, key=len)


def missing_answers(plan: ClassPlan, key_pdf: bytes) -> list[str]:
    """The questions whose item id and answer are not in their student's part of the key, in order."""
    text = _squeezed(visible_text(key_pdf))
    missing = []
    for sheet, section in zip(plan.sheets, _sections(plan, text), strict=True):
        at = 0
        entries = [_squeezed(f"{n}.{q.item_id}") for n, q in enumerate(sheet.questions, 1)]
        for number, (question, entry) in enumerate(zip(sheet.questions, entries, strict=True), 1):
            start = section.find(entry, at)
            # The answer sits between this entry and the next one (a repeated heading may come between).
            end = (
                section.find(entries[number], start) if number < len(entries) and start >= 0 else len(section)
            )
            answer = _squeezed(_key_answer(question))
            if start < 0 or answer not in section[start : end if end >= 0 else len(section)]:
                missing.append(f"student {sheet.student} question {number} ({question.item_id}: {answer})")
            else:
                at = start + len(entry)
    return missing


@pytest.mark.parametrize(
    ("bank", "style", "students"),
    [("week1", "brief", 30), ("week2", "brief", 30), ("week1", "full", 4), ("week2", "full", 4)],
)
def test_the_key_holds_every_answer_of_every_student(bank: str, style: KeyStyle, students: int) -> None:
    plan = plan_class(banks.load(bank), students=students, master_seed=2026)
    assert missing_answers(plan, pdf.key(plan, plan.sheets, style=style)) == []
