"""A question an LMS leaves to a teacher: its text, and what the teacher marks it by.

A platform that matches blanks as text (a Moodle cloze, Canvas's blanks) cannot mark a formula,
equal by algebra in endless forms, nor a shape dimension the question states as a product, in
endless spellings: a text blank would mark right answers wrong (`LmsQuestion.by_hand` says when).
Such a question is written as an essay instead, for a teacher to mark; this module writes, once
for every writer, the HTML of the question (the stem, then each part and what to write) and of
the grader's information: each part's answer and weight, the forms that are right, the named
mistakes with their feedback, how error is carried forward, and the `quiz answer` command that
marks a student's response exactly as quiz does.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from html import escape

from attnquiz.engine.answers.kinds import (
    ExpressionAnswer,
    NumericAnswer,
    PartsAnswer,
    ShapeAnswer,
    VectorAnswer,
)
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms.model import (
    CHOICE_AMONG_BLANKS,
    FORMULA_BY_HAND,
    PRODUCT_BY_HAND,
    Group,
    Limit,
    LmsQuestion,
    asked,
)
from attnquiz.engine.markup import tex as markup

LINES_PER_PART = 3
"""Lines of the response box per part (a formula or a shape is one line; room to correct it)."""


_REASONS = {
    FORMULA_BY_HAND.key: "a formula is right in any algebraically equal form, which no text blank can list",
    PRODUCT_BY_HAND.key: (
        "a dimension stated as a product is right in any order and spelling of its factors, which no text "
        "blank can list"
    ),
}
"""Why a question is marked by hand, as the grader's information says it."""
_REASONS[CHOICE_AMONG_BLANKS.key] = (
    "a choice part is right with its letters in any order and spelling, which no text blank can list"
)


def question_html(model: LmsQuestion) -> str:
    """The question text: the stem (with its figures), then each part's prompt and what to write."""
    question = model.question
    if model.form == "entries":
        return lms.question_html(question, _what_to_write(model.groups[0]))
    html = lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt")
    for group in model.groups:
        html += lms.part_intro(group.label, group.prompt, _what_to_write(group))
    if len(model.groups) > 1:
        labels = ", ".join(f"({g.label})" for g in model.groups)
        html += f"<p><em>Write your answers to {labels} on lines of their own, each with its label.</em></p>"
    if question.student_note:
        html += f"<p><small>Note: {lms.plain_html(question.student_note)}</small></p>"
    return html


def _what_to_write(group: Group) -> str:
    if isinstance(group.answer, ExpressionAnswer):
        names = ", ".join(group.answer.symbols)
        return f"Give a formula in {names} (any equivalent form is right; use * for products, ^ for powers)."
    return asked(group.answer)


def response_lines(model: LmsQuestion) -> int:
    """How many lines the response box is meant to hold."""
    return LINES_PER_PART * max(1, len(model.groups))


def grader_html(model: LmsQuestion, reasons: Sequence[Limit] = ()) -> str:
    """What a teacher marks by: per part its answer and weight, the forms that are right, the named
    mistakes and their feedback; then how error carries forward and the command that marks a
    response as quiz does. ``reasons``: the platform's own limits beside `LmsQuestion.by_hand`."""
    question = model.question
    total = sum(g.weight for g in model.groups)
    why = "; ".join(_REASONS[limit.key] for limit in (*model.by_hand, *reasons))
    html = f"<p><strong>Marked by hand:</strong> {escape(why, quote=False)}.</p>"
    for group in model.groups:
        heading = f"({group.label}) " if group.label else ""
        if len(model.groups) > 1:
            heading += f"{group.weight:g} of {total:g} marks. "
        html += f"<p><strong>{escape(heading, quote=False)}Answer:</strong> {_answer_html(group)}</p>"
        accepted = _accepted_html(group)
        if accepted:
            html += f"<p>{accepted}</p>"
        if group.mistakes:
            rows = "".join(
                f"<li><code>{escape(m.format(group.answer), quote=False)}</code> ({escape(m.tag)}, "
                f"{m.score:g} of its marks): {lms.tex_html_inline(m.feedback)}</li>"
                for m in group.mistakes
            )
            html += f"<p>Named mistakes:</p><ul>{rows}</ul>"
    note = question.answer.key_note() if isinstance(question.answer, PartsAnswer) else ""
    if note:
        html += f"<p>{escape(note, quote=False)}</p>"
    html += f"<p>To mark a response exactly as quiz does: <code>{escape(check_command(model))}</code></p>"
    if question.instructor_note:
        html += f"<p><small>Note for instructors: {lms.plain_html(question.instructor_note)}</small></p>"
    return html


def _answer_html(group: Group) -> str:
    answer = group.answer
    written = f"<code>{escape(answer.format(), quote=False)}</code>"
    if isinstance(answer, ExpressionAnswer):
        # Typeset with its spoken form, as every formula of the export (`lms.tex_formula`). TeX
        # outside the Markdown subset stays bare TeX: the <code> before it already reads it out.
        try:
            typeset = lms.tex_html_inline(f"${answer.tex()}$")
        except markup.MarkupError:
            typeset = f"\\({escape(answer.tex(), quote=False)}\\)"
        return f"{written}, that is {typeset}"
    if isinstance(answer, NumericAnswer | VectorAnswer):
        return f"{written} ({escape(answer.tolerance.describe(), quote=False)})"
    return written


def _accepted_html(group: Group) -> str:
    answer = group.answer
    if isinstance(answer, ExpressionAnswer):
        forms = ", ".join(f"<code>{escape(t, quote=False)}</code>" for t in group.blanks[0].texts[:6])
        return (
            "Right: any formula algebraically equal to it, however it is written (factored, expanded, terms "
            f"in any order, implicit products), e.g. {forms}."
        )
    if isinstance(answer, ShapeAnswer) and answer.products:
        stated = ", ".join(f"{name} = {product}" for name, product in answer.products)
        return (
            f"Right: each dimension as a number, a name or a product equal to it ({escape(stated)}), in any "
            "order and spelling of its factors."
        )
    return ""


def check_command(model: LmsQuestion) -> str:
    """``quiz answer BANK ITEM --seed N "<response>"``, one response per part in order: marks a
    student's response as quiz does (carrying error forward, as quiz grade does)."""
    question = model.question
    where = "--original" if question.is_original else f"--seed {question.seed}"
    responses = " ".join(f'"<({g.label})>"' if g.label else '"<response>"' for g in model.groups)
    return f"quiz answer {shlex.quote(question.bank)} {shlex.quote(question.item_id)} {where} {responses}"


__all__ = ["LINES_PER_PART", "check_command", "grader_html", "question_html", "response_lines"]
