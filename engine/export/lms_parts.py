"""Questions in parts and formula answers in Moodle XML and Canvas QTI: one question, a blank per part.

Neither LMS can carry an error forward or compare formulas algebraically, so the exports do the
best each has and say, once per export, what differs:

- Moodle: a cloze question with the stem once, then each part's prompt followed by its blank(s):
  NUMERICAL blanks (with the part's tolerance) for numbers, a SHORTANSWER blank for a formula
  (accepting the spellings `formula_spellings` lists), blank per entry for vectors, matrices and
  shapes, MULTICHOICE / MULTIRESPONSE for a choice. Each blank is marked on its own answer.
- Canvas: a fill-in-multiple-blanks question with the same layout. Canvas compares these blanks
  as text, so a number's blank lists its accepted spellings (`lms.spellings`), as for vectors.

The helpers of `moodle` and `qti` are used as they are (the same blank builders, feedback escaping
and headers), so a part's blank is exactly the blank a one-answer item of its kind gets.
"""

from __future__ import annotations

import re
from html import escape
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from attnquiz.engine import markup
from attnquiz.engine.answers import (
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    Formula,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.export import lms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from attnquiz.engine.variant import Question

NO_CARRY_FORWARD = (
    "{lms} cannot carry an error forward: each part of a question in parts is marked on its own answer, "
    "so a student who slips in (a) loses the later parts that quiz would mark right given their (a)"
)
FORMULA_AS_TEXT = (
    "{lms} compares a formula answer as text, not algebraically: the blank accepts the formula as quiz "
    "writes it and a few common spellings, and marks any other equivalent form wrong"
)


def units(question: Question) -> list[tuple[str, str, SingleAnswer, Sequence[Mistake]]]:
    """(label, prompt, answer, mistakes) for each blank group: every part, or the question itself."""
    answer = question.answer
    if isinstance(answer, PartsAnswer):
        return [(p.label, p.prompt, p.answer, p.mistakes) for p in answer.parts]
    if isinstance(answer, ExplainAnswer):
        raise TypeError(f"{question.item_id} is a concept question: an essay, not blanks")
    return [("", "", answer, question.variant.mistakes)]


def formula_spellings(formula: Formula | str, symbols: Sequence[str] = ()) -> list[str]:
    """Texts a text blank accepts for a formula: as quiz writes it, without spaces, with implicit
    products (12d^2 + 13d) and with ``**`` for powers; each name also without its underscore."""
    text = formula.text if isinstance(formula, Formula) else formula
    forms = [text, text.replace(" ", "")]
    implicit = re.sub(r"(?<=\d)\*(?=[A-Za-z(])", "", text)
    forms += [
        implicit,
        implicit.replace(" ", ""),
        text.replace("^", "**"),
        text.replace("^", "**").replace(" ", ""),
    ]
    for name in symbols:
        if "_" in name:
            forms += [f.replace(name, name.replace("_", "")) for f in list(forms)]
    return list(dict.fromkeys(forms))


def _part_intro(label: str, prompt: str, asked: str) -> str:
    html = lms.tex_html(f"**({label})** {prompt}") if label else ""
    return html + f"<p><em>{escape(asked, quote=False)}</em></p>"


def asked(answer: SingleAnswer) -> str:
    """What to enter in a blank, phrased for an LMS form."""
    if isinstance(answer, ExpressionAnswer):
        names = ", ".join(answer.symbols)
        return f"Give a formula in {names}, e.g. 3*d^2 + d (use * for products, ^ for powers)."
    return lms.instructions(answer)


# ---------------------------------------------------------------------------------------------
# Moodle
# ---------------------------------------------------------------------------------------------


def moodle_question(question: Question, where: str, warnings: lms.Notes) -> list[str]:
    """A cloze ``<question>`` for a question in parts or a formula answer (lines)."""
    from attnquiz.engine.export import moodle

    if isinstance(question.answer, PartsAnswer) and len(question.answer.parts) > 1:
        warnings.append((NO_CARRY_FORWARD.format(lms="Moodle"), question.item_id))
    html = lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt")
    for label, prompt, answer, mistakes in units(question):
        html += _part_intro(label, prompt, asked(answer))
        html += _moodle_blanks(question, answer, mistakes, where, warnings)
    if html.count("{1:") > 1:
        warnings.append((moodle.MARK_PER_BLANK, question.item_id))
    if question.student_note:
        html += f"<p><small>Note: {escape(question.student_note, quote=False)}</small></p>"
    lines = moodle._header(question, "cloze")
    lines[2] = f'    <questiontext format="html">{moodle._text(html)}</questiontext>'
    return lines + moodle._tags(question)


def _moodle_blanks(
    question: Question, answer: SingleAnswer, mistakes: Sequence[Mistake], where: str, warnings: lms.Notes
) -> str:
    from attnquiz.engine.export import moodle

    def wrong(value: Any, mistake: Mistake) -> tuple[Any, str, str]:
        return value, moodle._mistake_fraction(mistake, where), moodle._cloze_feedback(mistake.feedback)

    tolerance = answer.tolerance
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        alternatives = [wrong(m.value, m) for m in mistakes if isinstance(m.value, int | float)]
        return "<p>" + moodle._cloze_blank(answer.value, tolerance, alternatives) + "</p>"
    if isinstance(answer, ExpressionAnswer):
        warnings.append((FORMULA_AS_TEXT.format(lms="Moodle"), question.item_id))
        alternatives = [wrong(m.value.text, m) for m in mistakes if isinstance(m.value, Formula)]
        texts = formula_spellings(answer.formula, answer.symbols)
        return "<p>" + moodle._cloze_blank(answer.value, tolerance, alternatives, texts) + "</p>"
    if isinstance(answer, ChoiceAnswer):
        kind = "MULTIRESPONSE" if answer.multiple else "MULTICHOICE"
        options = "~".join(
            ("=" if o.correct else "") + moodle._cloze_text(f"{letter}. {markup.to_terminal(o.text)}")
            for letter, o in zip(answer.letters, answer.options, strict=True)
        )
        return "<p>{1:" + kind + ":" + options + "}</p>"
    targets = moodle._cloze_targets(answer)
    if len(targets) > 1:
        warnings.append((moodle.BLANK_BY_BLANK, question.item_id))
    lms.note_products(answer, question.item_id, "Moodle", warnings)
    per_blank: list[list[tuple[Any, str, str]]] = [[] for _ in targets]
    for mistake in mistakes:
        values = moodle._flatten(mistake.value)
        if values is None or len(values) != len(targets):
            continue
        for j, (target, value) in enumerate(zip(targets, values, strict=True)):
            if isinstance(value, str) and not isinstance(target, str):
                continue
            if moodle._entry_equal(tolerance, target, value):
                continue
            if any(moodle._entry_equal(tolerance, earlier, value) for earlier, _, _ in per_blank[j]):
                continue
            per_blank[j].append(wrong(value, mistake))
    blanks = [
        moodle._cloze_blank(t, tolerance, w, moodle._blank_texts(answer, t))
        for t, w in zip(targets, per_blank, strict=True)
    ]
    if isinstance(answer, MatrixAnswer):
        rows, cols = answer.shape
        cells = "".join(
            "<tr>" + "".join(f"<td>{blanks[r * cols + c]}</td>" for c in range(cols)) + "</tr>"
            for r in range(rows)
        )
        style = "border-left: 1px solid; border-right: 1px solid"
        return f'<table class="quiz-matrix" style="{style}">{cells}</table>'
    return "<p>[ " + " , ".join(blanks) + " ]</p>"


# ---------------------------------------------------------------------------------------------
# Canvas
# ---------------------------------------------------------------------------------------------


def canvas_item(question: Question, ident: str, warnings: lms.Notes) -> str:
    """A fill-in-multiple-blanks ``<item>`` for a question in parts or a formula answer."""
    from attnquiz.engine.export import qti

    if isinstance(question.answer, PartsAnswer) and len(question.answer.parts) > 1:
        warnings.append((NO_CARRY_FORWARD.format(lms="Canvas"), question.item_id))
    groups: list[tuple[str, str, SingleAnswer, list[list[str]]]] = []
    total = 0
    for label, prompt, answer, _ in units(question):
        accepted = _canvas_accepted(question, answer, warnings)
        groups.append((label, prompt, answer, accepted))
        total += len(accepted)
    share = f"{100 / total:.2f}"
    html = lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt")
    presentation: list[str] = []
    conditions: list[str] = []
    count = 0
    for label, prompt, answer, accepted in groups:
        names: list[str] = []
        for texts in accepted:
            count += 1
            name = f"e{count}"
            names.append(name)
            labels = ""
            for k, text in enumerate(texts):
                response = f"{ident}_{name}_{k}"
                shown = qti._mattext(text, "text/plain")
                labels += f"<response_label ident={quoteattr(response)}>{shown}</response_label>"
                test = f'<varequal respident="response_{name}">{response}</varequal>'
                conditions.append(
                    f"<respcondition><conditionvar>{test}"
                    f'</conditionvar><setvar varname="SCORE" action="Add">{share}</setvar></respcondition>'
                )
            presentation.append(
                f'<response_lid ident="response_{name}"><material><mattext>{name}</mattext></material>'
                f"<render_choice>{labels}</render_choice></response_lid>"
            )
        html += (
            _part_intro(label, prompt, asked(answer)) + "<p>" + " , ".join(f"[{n}]" for n in names) + "</p>"
        )
    if total > 1:
        warnings.append((qti.CREDIT_BY_BLANK, question.item_id))
    if question.student_note:
        html += f"<p><small>Note: {escape(question.student_note, quote=False)}</small></p>"
    item = qti._Item("fill_in_multiple_blanks_question", presentation, conditions)
    item.feedback = {"general_fb": lms.solution_html(question)}
    return qti.item_element(question, ident, item, html)


def _canvas_accepted(question: Question, answer: SingleAnswer, warnings: lms.Notes) -> list[list[str]]:
    """For each blank of one answer, the texts Canvas accepts in it."""
    from attnquiz.engine.export import qti

    if isinstance(answer, ExpressionAnswer):
        warnings.append((FORMULA_AS_TEXT.format(lms="Canvas"), question.item_id))
        return [formula_spellings(answer.formula, answer.symbols)]
    if isinstance(answer, ChoiceAnswer):
        right = sorted(answer.correct_letters)
        return [list(dict.fromkeys([", ".join(right), ",".join(right), "".join(right), " ".join(right)]))]
    if isinstance(answer, ShapeAnswer):
        lms.note_products(answer, question.item_id, "Canvas", warnings)
        return [lms.dimension_texts(answer, d if isinstance(d, str) else int(d)) for d in answer.dims]
    warnings.append((qti.AS_TEXT, question.item_id))
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        targets: list[float] = [answer.value]
    elif isinstance(answer, VectorAnswer):
        targets = list(answer.values)
    else:
        targets = list(lms.entries(answer))
    return [lms.spellings(t, answer.tolerance) for t in targets]


__all__ = [
    "FORMULA_AS_TEXT",
    "NO_CARRY_FORWARD",
    "canvas_item",
    "formula_spellings",
    "moodle_question",
    "units",
]
