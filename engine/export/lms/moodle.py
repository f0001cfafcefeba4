"""Moodle XML: one question category per item holding its seeded variants, so a quiz can draw one at random.

A writer of the LMS model (`attnquiz.engine.export.lms.model`): what a question asks (its blanks,
their accepted values and named mistakes, its weights, what Moodle cannot express) is the model's;
this module only writes it as Moodle XML. Per form of question:

- number and count: ``numerical``. Moodle's ``<tolerance>`` is absolute ("nominal"), so it is the
  item's tolerance as a half-width around the answer, `Tolerance.half_width`: ``decimals: n`` is
  ``0.51·10⁻ⁿ`` (the engine's own slack: a correctly rounded answer is never refused),
  ``sigfigs: n`` is ``0.51`` units of the n-th significant digit of the answer, ``rtol``/``atol``
  is ``max(rtol·|answer|, atol)`` worked out for this variant's answer, and a count is exact (0).
  The answer rounded as the question asks comes first (Moodle shows the first right answer as the
  correct one), with the part of the tolerance that stays inside the item's, then the exact value
  with the whole (`attnquiz.engine.export.lms.question_html.shown_first`); a NUMERICAL blank does the same.
  Moodle reads the number a response starts with and takes what follows for a unit, which no
  setting can make cost the marks without costing a plain number them too: the export says so
  (`LEADING_NUMBER`).
  Each known mistake is a further answer at its own value and the same kind of tolerance, with
  fraction 0 and the mistake's feedback; Moodle takes the first answer that matches, as the
  grader checks the correct answer first and then the mistakes in order.
- vector, matrix, shape: ``cloze`` (multianswer), one NUMERICAL blank per entry (SHORTANSWER_C
  for a symbolic dimension, or a number a name or product stands for: its texts are
  `attnquiz.engine.export.lms.question_html.dimension_texts`, ``h*d_k`` among them where the item states
  d_model = h·d_k, and the export says once that quiz reads more products than a blank lists),
  each blank weighted by its share of the question (`cloze_weights`: a part's weight shared among
  its blanks, as quiz counts it). A mistake adds, to each blank where its value differs, a wrong
  alternative with its feedback (plain text: cloze feedback cannot hold TeX).
- concept question (explain): ``essay``, answered in the HTML editor in a box about as tall as the
  worksheet's ruled space; the model answer and key points are the grader information (what the
  teacher marks by) and the general feedback (what the student sees after the attempt, as in
  practice). Moodle leaves an essay for a teacher to mark, as quiz does; the export says so once.
- single choice: ``multichoice`` with ``single=true``; multiple select: ``single=false`` with
  per-option fractions from Moodle's list whose clamped sum reproduces
  `attnquiz.engine.grading.choices.choice_score` for every selection. Where no such fractions exist (the
  ``all-or-nothing`` scheme with several right options, ``each-answer``, more than 10 right
  options) the export stops with an error naming the item. Options are not shuffled, because
  the worked solution refers to them by letter.

- question in parts: one cloze question, the stem then each part's prompt and its blanks, as above
  (a choice part a MULTICHOICE or MULTIRESPONSE blank).
- a formula answer (alone or as a part), or a shape stated with a product: no text blank can list
  every right answer (Moodle cannot decide that two formulas are equal), so the question is an
  ``essay`` marked by hand, with each part's answer, the forms that are right, the named mistakes
  and the `quiz answer` command that marks a response as the grader information
  (`attnquiz.engine.export.lms.hand_marked`); the export says so once, and points to STACK.

Prompts are HTML with TeX between ``\\(...\\)`` for Moodle's MathJax filter; the worked
solution is the general feedback; the variant code and the seed are in each question's name.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from attnquiz.engine.answers.kinds import ChoiceAnswer, CodeAnswer, ExplainAnswer, MatrixAnswer
from attnquiz.engine.bank import images
from attnquiz.engine.export.lms import hand_marked as lms_hand
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import moodle_file
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms.model import Blank, Group, LmsQuestion, Wrong
from attnquiz.engine.export.lms.moodle_file import text_element as _text
from attnquiz.engine.markup import plain
from attnquiz.engine.markup.xml_text import escape
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, Progress, ruled_lines
from attnquiz.engine.variant import Question

# Moodle's grade fractions (question/engine/bank.php), as percentages in the text Moodle writes.
MOODLE_FRACTIONS: tuple[str, ...] = (
    "100", "90", "83.33333", "80", "75", "70", "66.66667", "60", "50", "40", "33.33333", "30",
    "25", "20", "16.66667", "14.28571", "12.5", "11.11111", "10", "5", "0",
)  # fmt: skip
_MATCH = 1e-5  # how close a fraction must be to one of the list (Moodle's own import check)
_SIGNED_FRACTIONS = tuple(
    (float(text), text) for text in (*MOODLE_FRACTIONS, *(f"-{t}" for t in MOODLE_FRACTIONS if t != "0"))
)

ChoiceScore = Callable[[ChoiceAnswer, frozenset[str]], float]


@dataclass(frozen=True, slots=True)
class MoodleFile:
    """A built Moodle XML file, and what Moodle will score differently from quiz."""

    text: str
    warnings: list[str]


def fraction_text(fraction: float, where: str) -> str:
    """A score (``-1`` to ``1``) as one of Moodle's percentages, or an error naming ``where``."""
    percent = fraction * 100
    for value, text in _SIGNED_FRACTIONS:
        if abs(value - percent) <= _MATCH * 100:
            return text
    raise ExportError(
        f"{where}: a score of {percent:.6g} % is not one of Moodle's grade fractions "
        f"({', '.join(MOODLE_FRACTIONS)} and their negatives)"
    )


def _selections(answer: ChoiceAnswer) -> list[frozenset[str]]:
    """The responses a scheme is checked on: one letter for single choice, else every selection."""
    if not answer.multiple:
        return [frozenset({letter}) for letter in answer.letters]
    return [*lms.subsets(answer.letters), answer.correct_letters]


def _multichoice_fractions(
    answer: ChoiceAnswer, selections: list[frozenset[str]], expected: list[float]
) -> list[str] | None:
    """Per-option fractions whose clamped sum gives ``expected`` on every selection, if any do."""
    right = answer.correct_letters
    candidates: list[list[float]] = []
    if not answer.multiple:
        candidates.append([1.0 if letter in right else 0.0 for letter in answer.letters])
    candidates.append([(1.0 if letter in right else -1.0) / len(right) for letter in answer.letters])
    candidates.append([1.0 / len(right) if letter in right else -1.0 for letter in answer.letters])
    for weights in candidates:
        try:
            texts = [fraction_text(w, "") for w in weights]
        except ExportError:
            continue
        snapped = dict(zip(answer.letters, (float(t) / 100 for t in texts), strict=True))
        if all(
            abs(min(max(sum(snapped[x] for x in selection), 0.0), 1.0) - want) <= _MATCH
            for selection, want in zip(selections, expected, strict=True)
        ):
            return texts
    return None


def _true_false_matches(
    answer: ChoiceAnswer, selections: list[frozenset[str]], expected: list[float]
) -> bool:
    """Whether one true/false decision per option, each worth 1/N, gives ``expected`` everywhere."""
    n = len(answer.options)
    return answer.multiple and all(
        abs(
            sum(
                (letter in selection) == option.correct
                for letter, option in zip(answer.letters, answer.options, strict=True)
            )
            / n
            - want
        )
        <= _MATCH
        for selection, want in zip(selections, expected, strict=True)
    )


def choice_fractions(answer: ChoiceAnswer, where: str, score: ChoiceScore | None = None) -> list[str] | None:
    """How Moodle can reproduce the engine's score of a choice item on every selection.

    Returns per-option fractions for a ``multichoice`` question, where Moodle adds the fractions
    of the ticked options and clamps the sum to [0, 1]: the first candidate that reproduces
    ``score`` (by default `attnquiz.engine.grading.choices.choice_score`) everywhere (the net rule:
    ±1/|right|;
    one right option: +1 and -1 for a wrong tick). Returns None when one true/false decision per
    option does (the ``each-answer`` scheme, written as a cloze question). Raises otherwise.
    """
    if score is None:
        from attnquiz.engine.grading.choices import choice_score

        score = choice_score
    selections = _selections(answer)
    expected = [score(answer, selection) for selection in selections]
    fractions = _multichoice_fractions(answer, selections, expected)
    if fractions is not None:
        return fractions
    if _true_false_matches(answer, selections, expected):
        return None
    kind = "multiple-select" if answer.multiple else "single-choice"
    raise ExportError(
        f"{where}: Moodle cannot reproduce the {answer.scoring!r} scoring of this {kind} question "
        f"({len(answer.correct_letters)} right of {len(answer.options)}) with its grade fractions; "
        "use `scoring: net` for this item or leave it out of the Moodle export"
    )


def _mistake_fraction(wrong: Wrong, where: str) -> str:
    return fraction_text(wrong.credit, f"{where}: mistake {wrong.tag!r}")


def _header(question: Question, qtype: str, text: str | None = None) -> list[str]:
    """The opening lines of a question; ``text``: its question text's HTML (`lms.question_html` by
    default: a cloze question writes its own, with its blanks, and is not made to render this one too)."""
    name = lms.question_name(question)
    html = lms.question_html(question) if text is None else text
    return [
        f'  <question type="{qtype}">',
        f"    <name>{_text(name, html=False)}</name>",
        f'    <questiontext format="html">{_text(html)}</questiontext>',
        f'    <generalfeedback format="html">{_text(lms.solution_html(question))}</generalfeedback>',
        "    <defaultgrade>1</defaultgrade>",
        "    <penalty>0</penalty>",
        "    <hidden>0</hidden>",
    ]


def _numerical(model: LmsQuestion, where: str) -> list[str]:
    question = model.question
    (blank,) = model.blanks
    lines = _header(question, "numerical")
    # The value rounded as asked first: Moodle shows the first right answer as "the correct answer".
    for value, half in lms.shown_first(float(blank.target), blank.half_width(), blank.tolerance):
        value_text = _text(lms.number_text(value), html=False)
        lines.append(
            f'    <answer fraction="100" format="moodle_auto_format">{value_text}'
            f"<tolerance>{lms.tolerance_text(half)}</tolerance>"
            f'<feedback format="html"><text></text></feedback></answer>'
        )
    for wrong in blank.wrong:
        value = float(wrong.value)
        feedback = lms.tex_html(wrong.feedback)
        lines.append(
            f'    <answer fraction="{_mistake_fraction(wrong, where)}" format="moodle_auto_format">'
            f"{_text(lms.number_text(value), html=False)}"
            f"<tolerance>{lms.tolerance_text(blank.half_width(value))}</tolerance>"
            f'<feedback format="html">{_text(feedback)}</feedback></answer>'
        )
    lines += [
        "    <unitgradingtype>0</unitgradingtype>",
        "    <unitpenalty>0.1</unitpenalty>",
        "    <showunits>3</showunits>",
        "    <unitsleft>0</unitsleft>",
    ]
    return lines + lms.question_end(question)


def _choice(question: Question, answer: ChoiceAnswer, where: str, score: ChoiceScore | None) -> list[str]:
    fractions = choice_fractions(answer, where, score)
    if fractions is None:
        return _true_false(question, answer)
    lines = _header(question, "multichoice")
    lines += [
        f"    <single>{'true' if not answer.multiple else 'false'}</single>",
        "    <shuffleanswers>0</shuffleanswers>",
        "    <answernumbering>ABCD</answernumbering>",
        "    <showstandardinstruction>0</showstandardinstruction>",
        '    <correctfeedback format="html"><text>Your answer is correct.</text></correctfeedback>',
        '    <partiallycorrectfeedback format="html"><text>Your answer is partially correct.</text>'
        "</partiallycorrectfeedback>",
        '    <incorrectfeedback format="html"><text>Your answer is incorrect.</text></incorrectfeedback>',
        "    <shownumcorrect/>",
    ]
    for option, fraction in zip(answer.options, fractions, strict=True):
        feedback = _text(lms.tex_html(option.why)) if option.why else "<text></text>"
        lines.append(
            f'    <answer fraction="{fraction}" format="html">{_text(lms.tex_html_inline(option.text))}'
            f'<feedback format="html">{feedback}</feedback></answer>'
        )
    return lines + lms.question_end(question)


def _true_false(question: Question, answer: ChoiceAnswer) -> list[str]:
    """An each-answer item as a cloze: one true/false choice per option, each worth the same."""
    rows: list[str] = []
    for letter, option in zip(answer.letters, answer.options, strict=True):
        why = f"#{_cloze_feedback(option.why)}" if option.why else ""
        right, wrong = ("True", "False") if option.correct else ("False", "True")
        blank = f"{{1:MULTICHOICE_H:={right}{why}~{wrong}{why}}}"
        rows.append(f"<li><strong>{letter}.</strong> {lms.tex_html_inline(option.text)} {blank}</li>")
    html = lms.question_html(question, "Decide for each statement: true or false?")
    return _header(question, "cloze", html + "<ul>" + "".join(rows) + "</ul>") + lms.question_end(question)


# Characters that end or split a cloze alternative, escaped as Moodle's multianswer parser expects.
_CLOZE_SPECIAL = str.maketrans({"}": "\\}", "#": "\\#", "~": "\\~"})
# In feedback, which Moodle shows as HTML, the same characters and the backslash (which would
# escape the `~` or `}` after it, so a feedback ending in `\` swallowed the next alternative)
# are written as character references: they show as themselves and end nothing.
# `[` too: no filter or plugin finds a [[...]] of its own in it.
_FEEDBACK_SPECIAL = str.maketrans({"}": "&#125;", "~": "&#126;", "\\": "&#92;", "{": "&#123;", "[": "&#91;"})


@lru_cache(maxsize=4096)
def _cloze_feedback(text: str) -> str:
    """Feedback for a cloze alternative: plain Unicode text (cloze feedback cannot typeset TeX),
    HTML-escaped (bank text is never markup) and with nothing that ends the alternative."""
    shown = plain.to_terminal(text).replace("\n", " ")
    return lms.not_math(escape(shown, {'"': "&quot;"}).translate(_FEEDBACK_SPECIAL), shown)


def _cloze_text(text: str) -> str:
    """An answer of a SHORTANSWER blank: cloze specials escaped, `*` (Moodle's wildcard) too."""
    return text.translate(_CLOZE_SPECIAL).replace("*", "\\*")


def _cloze_blank(blank: Blank, where: str, weight: int = 1) -> str:
    """One embedded answer of ``weight``: the right value (or every text it accepts), then the named
    mistakes.

    A blank matched as text (`Blank.as_text`: a formula, a symbolic dimension, or a number that
    names and products stand for) is a SHORTANSWER_C blank; a number is NUMERICAL, with its
    tolerance; a choice is MULTICHOICE, or MULTIRESPONSE for multiple select.
    """
    if blank.choice is not None:
        answer = blank.choice
        kind = "MULTIRESPONSE" if answer.multiple else "MULTICHOICE"
        options = "~".join(
            ("=" if o.correct else "") + _cloze_text(f"{letter}. {plain.to_terminal(o.text)}")
            for letter, o in zip(answer.letters, answer.options, strict=True)
        )
        return f"{{{weight}:{kind}:{options}}}"
    wrong = [(w, _mistake_fraction(w, where), _cloze_feedback(w.feedback)) for w in blank.wrong]
    if blank.as_text:
        right = list(blank.texts or [str(blank.target)])
        right += [str(v) for v in blank.also if str(v) not in right]
        alternatives = [f"={_cloze_text(text)}" for text in right]
        alternatives += [f"%{fraction}%{_cloze_text(str(w.value))}#{fb}" for w, fraction, fb in wrong]
        return f"{{{weight}:SHORTANSWER_C:" + "~".join(alternatives) + "}"
    # Several right values: the exact one (after it rounded as asked, the one Moodle shows as the
    # right answer), and one from the rounded earlier parts (`Blank.also`).
    target = float(blank.target)
    alternatives = [
        f"={lms.number_text(value)}:{lms.tolerance_text(half)}"
        for value, half in lms.shown_first(target, blank.half_width(), blank.tolerance)
    ]
    alternatives += [f"={_cloze_number(blank, value)}" for value in blank.also]
    alternatives += [f"%{fraction}%{_cloze_number(blank, w.value)}#{fb}" for w, fraction, fb in wrong]
    return f"{{{weight}:NUMERICAL:" + "~".join(alternatives) + "}"


def _cloze_number(blank: Blank, value: lms_model.Target) -> str:
    """``value:tolerance``, the only form a cloze NUMERICAL alternative takes."""
    number = float(value)
    return f"{lms.number_text(number)}:{lms.tolerance_text(blank.half_width(number))}"


def _group_html(group: Group, where: str, weights: list[int]) -> str:
    """A group's blanks, each of its weight: a matrix's entries as a table, a vector's or shape's in
    brackets, one value alone."""
    blanks = [_cloze_blank(b, where, w) for b, w in zip(group.blanks, weights, strict=True)]
    if isinstance(group.answer, MatrixAnswer):
        style = "border-left: 1px solid; border-right: 1px solid"
        return lms.matrix_table(blanks, *group.answer.shape, f' class="quiz-matrix" style="{style}"')
    if not group.entries:
        return "<p>" + blanks[0] + "</p>"
    return "<p>[ " + " , ".join(blanks) + " ]</p>"


MAX_CLOZE_WEIGHT = 100
"""The largest whole-number weight a cloze blank is given (a ratio needing more is rounded, and said)."""


def cloze_weights(blanks: Sequence[Blank]) -> tuple[list[int], bool]:
    """The smallest whole-number weights in the ratio of the blanks' shares (Moodle's cloze weights
    are integers), and whether the ratio is exact: (weights, exact). A part of weight 2 with one
    blank beside a part of weight 1 with two gives 4, 1, 1; shares with no such ratio up to
    `MAX_CLOZE_WEIGHT` are rounded (exact False)."""
    if not blanks:
        return [], True
    shares = [Fraction(b.weight).limit_denominator(10_000) for b in blanks]
    scale = math.lcm(*(s.denominator for s in shares))
    whole = [int(s * scale) for s in shares]
    common = math.gcd(*whole)
    whole = [w // common for w in whole]
    total = sum(b.weight for b in blanks)
    exact = all(abs(w / sum(whole) - b.weight / total) <= 1e-9 for w, b in zip(whole, blanks, strict=True))
    if max(whole) <= MAX_CLOZE_WEIGHT and exact:
        return whole, True
    smallest = min(b.weight for b in blanks)
    return [max(1, min(MAX_CLOZE_WEIGHT, round(b.weight / smallest))) for b in blanks], False


BLANK_BY_BLANK = (
    "Moodle cloze questions give credit blank by blank, while quiz marks a vector, matrix or shape right "
    "only when every entry is"
)
MARK_PER_BLANK = (
    "Moodle marks a cloze question out of the sum of its blanks' weights (whole numbers, set so that each "
    "part counts by its weight, shared among its blanks, as in quiz); a quiz that draws one random "
    "question per item's category marks each out of 1, as quiz does, or set these questions' marks to 1 "
    "in the quiz"
)
WEIGHTS_ROUNDED = (
    f"Moodle cloze weights are whole numbers: these items' part weights, shared among their blanks, have "
    f"no whole-number ratio up to {MAX_CLOZE_WEIGHT}, so their parts count nearly, not exactly, as in quiz"
)
LEADING_NUMBER = (
    "Moodle reads a number as the one a response starts with and ignores what follows: its numerical "
    "questions and NUMERICAL blanks take trailing text for a unit, and no unit setting can make an unknown "
    "one cost the marks without costing them to a plain number too (with units graded, Moodle also "
    "penalises a number given without one). So 2.75.5, 2.75abc, 2.75/2 and 2.75*3 earn the marks of 2.75 "
    "once the attempt is submitted (in an interactive quiz, Check first calls them invalid and asks for a "
    "number without a unit), and a calculation is marked as the number it starts with (3/4 as 3, 8*64 as "
    "8). The questions ask for digits; quiz and STACK (quiz export --format stack) read the whole response"
)
_MESSAGES = {lms_model.BLANK_BY_BLANK.key: BLANK_BY_BLANK, lms_model.NUMBERS_IN_DIGITS.key: LEADING_NUMBER}
"""Moodle's own words for some limits of the model (the others' are the model's, naming Moodle)."""


def _note_limits(model: LmsQuestion, warnings: lms.Notes, *, exact: bool) -> None:
    for limit in model.limits:
        if limit is lms_model.CHOICE_AMONG_BLANKS:
            continue  # a cloze has choices among its blanks (MULTICHOICE, MULTIRESPONSE)
        warnings.append((_MESSAGES.get(limit.key) or limit.message("Moodle"), model.question.item_id))
    if len(model.blanks) > 1:
        warnings.append((MARK_PER_BLANK, model.question.item_id))
    if not exact:
        warnings.append((WEIGHTS_ROUNDED, model.question.item_id))


def _cloze(model: LmsQuestion, where: str, warnings: lms.Notes) -> list[str]:
    """A cloze question: the entries of one answer after the question text, or, in parts, the stem and
    then each part's prompt and blanks."""
    question = model.question
    weights, exact = cloze_weights(model.blanks)
    _note_limits(model, warnings, exact=exact)
    by_group: list[list[int]] = []
    for group in model.groups:
        by_group.append(weights[: len(group.blanks)])
        weights = weights[len(group.blanks) :]
    if model.form == "entries":
        html = lms.question_html(question) + _group_html(model.groups[0], where, by_group[0])
    else:
        html = lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt")
        for group, group_weights in zip(model.groups, by_group, strict=True):
            html += lms.part_intro(group.label, group.prompt, lms_model.asked(group.answer))
            html += _group_html(group, where, group_weights)
        if question.student_note:
            html += f"<p><small>Note: {lms.plain_html(question.student_note)}</small></p>"
    # Cloze questions carry their answers inside the question text.
    return _header(question, "cloze", html) + lms.question_end(question)


MARKED_BY_HAND = (
    "Moodle does not mark essay questions: a teacher marks each concept answer by hand (the model answer "
    "and key points are the grader information), and an attempt's grade stays incomplete until then"
)


def _essay(question: Question, answer: ExplainAnswer, warnings: lms.Notes) -> list[str]:
    """A concept question as an ``essay``: typed in the editor, marked by hand with the key points."""
    warnings.append((MARKED_BY_HAND, question.item_id))
    wanted = ruled_lines(answer) + 2  # a typed line holds more than a handwritten one; the editor is roomier
    grader = lms.key_points_html(answer)
    if question.instructor_note:
        grader += f"<p><small>Note for instructors: {lms.plain_html(question.instructor_note)}</small></p>"
    return _essay_lines(question, _header(question, "essay"), wanted, grader)


def _code_essay(question: Question, answer: CodeAnswer, warnings: lms.Notes) -> list[str]:
    """A code question as an ``essay``: the code typed in the editor, marked by hand against the
    reference solution and the named mistakes (the grader information)."""
    warnings.append((lms.CODE_BY_HAND, question.item_id))
    return _essay_lines(question, _header(question, "essay"), 25, lms.code_grader_html(question, answer))


def _by_hand(model: LmsQuestion, warnings: lms.Notes) -> list[str]:
    """A question no cloze blank marks rightly (a formula; a shape stated with a product) as an
    ``essay``, marked by hand: the answers, the forms that are right and the named mistakes are the
    grader information (`attnquiz.engine.export.lms.hand_marked`)."""
    question = model.question
    for limit in model.by_hand:  # marked by hand: nothing is read as a number
        warnings.append((limit.message("Moodle"), question.item_id))
    lines = _header(question, "essay", lms_hand.question_html(model))
    return _essay_lines(question, lines, lms_hand.response_lines(model), lms_hand.grader_html(model))


def _essay_lines(question: Question, lines: list[str], wanted: int, grader: str) -> list[str]:
    """An essay's lines after its header: the editor about ``wanted`` lines tall, ``grader`` as the
    grader information."""
    lines += lms.essay_settings(wanted, f'<graderinfo format="html">{_text(grader)}</graderinfo>')
    return lines + lms.question_end(question)


@images.in_question_folder
def question_xml(
    question: Question, score: ChoiceScore | None = None, warnings: lms.Notes | None = None
) -> list[str]:
    """The ``<question>`` element of one variant, as lines (notes on scoring go to ``warnings``)."""
    return _with_images(_with_files(question, _question_xml(question, score, warnings)))


_TEXT_ELEMENT = re.compile(r"<text>.*?</text>", re.DOTALL)


def _with_images(lines: list[str]) -> list[str]:
    """The image files of the bank's texts inside the element that shows them, as Moodle expects: a
    ``<file name=… path="/" encoding="base64">`` right after the ``<text>`` that refers to it as
    ``@@PLUGINFILE@@/name`` (each text its own files, so every one also works on its own)."""

    def attach(match: re.Match[str]) -> str:
        files = lms.image_files(match.group(0))
        return match.group(0) + "".join(
            f'<file name="{escape(name)}" path="/" encoding="base64">{base64.b64encode(data).decode()}</file>'
            for name, data in files.items()
        )

    return [_TEXT_ELEMENT.sub(attach, line) if "quiz-image" in line else line for line in lines]


def _with_files(question: Question, lines: list[str]) -> list[str]:
    """The question's figures as files inside the text that shows them, as Moodle expects: a
    ``<file name=… path="/" encoding="base64">`` after the ``<text>`` that refers to it as
    ``@@PLUGINFILE@@/name`` (the question text for figures with the prompt, the general feedback
    for figures with the solution)."""
    attached = {
        "questiontext": lms.figure_files(question, "prompt"),
        "generalfeedback": lms.figure_files(question, "solution"),
    }
    if not any(attached.values()):
        return lines
    out: list[str] = []
    for line in lines:
        for tag, files in attached.items():
            closing = f"</{tag}>"
            if files and line.lstrip().startswith(f"<{tag} ") and line.endswith(closing):
                embedded = "".join(
                    f'<file name="{escape(name)}" path="/" encoding="base64">'
                    f"{base64.b64encode(data).decode('ascii')}</file>"
                    for name, data in dict(files).items()
                )
                line = line[: -len(closing)] + embedded + closing
        out.append(line)
    return out


def _question_xml(
    question: Question, score: ChoiceScore | None = None, warnings: lms.Notes | None = None
) -> list[str]:
    model = lms_model.build(question)
    where = f"item {question.item_id!r} (variant {question.code})"
    notes = warnings if warnings is not None else []
    if model.form == "number":
        notes.append((LEADING_NUMBER, question.item_id))
        return _numerical(model, where)
    if model.form == "choice":
        assert isinstance(question.answer, ChoiceAnswer)
        return _choice(question, question.answer, where, score)
    if model.form == "essay" and isinstance(question.answer, CodeAnswer):
        return _code_essay(question, question.answer, notes)
    if model.form == "essay":
        assert isinstance(question.answer, ExplainAnswer)
        return _essay(question, question.answer, notes)
    if model.by_hand:
        return _by_hand(model, notes)
    return _cloze(model, where, notes)


def lines(
    plan: ClassPlan,
    warnings: lms.Notes,
    *,
    score: ChoiceScore | None = None,
    progress: Progress | None = None,
) -> Iterator[str]:
    """The Moodle XML file line by line: a category per item (``$course$/<bank>/<item>``), then its
    variants, each built as it is written (notes on scoring go to ``warnings``)."""
    return moodle_file.lines(
        plan, lambda question: question_xml(question, score, warnings), progress=progress
    )


def write(
    plan: ClassPlan,
    out: moodle_file.Sink,
    *,
    score: ChoiceScore | None = None,
    progress: Progress | None = None,
) -> list[str]:
    """Write the Moodle XML file to ``out`` as it is made (UTF-8); returns the warnings."""
    warnings: lms.Notes = []
    moodle_file.write(lines(plan, warnings, score=score, progress=progress), out)
    return lms.gather(warnings)


def build(
    plan: ClassPlan, *, score: ChoiceScore | None = None, progress: Progress | None = None
) -> MoodleFile:
    """The whole Moodle XML file in memory (an export streams it to disk with `write` instead)."""
    warnings: lms.Notes = []
    text = "\n".join(lines(plan, warnings, score=score, progress=progress)) + "\n"
    return MoodleFile(text, lms.gather(warnings))


__all__ = [
    "LEADING_NUMBER",
    "MOODLE_FRACTIONS",
    "MoodleFile",
    "build",
    "choice_fractions",
    "fraction_text",
    "lines",
    "question_xml",
    "write",
]
