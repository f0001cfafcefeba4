"""STACK questions in Moodle XML: quiz's marking (tolerances, formulas by equivalence, named mistakes,
error carried forward) decided by STACK's own Maxima answer tests inside Moodle.

This module is the writer: it turns what the LMS model (`attnquiz.engine.export.lms.model`) says a
question asks into STACK's XML; the inputs are `attnquiz.engine.export.lms.stack_inputs`'s, the nodes
`attnquiz.engine.export.lms.stack_nodes`'s, the trees `attnquiz.engine.export.lms.stack_prt`'s, the
question tests `attnquiz.engine.export.lms.stack_tests`'s.

Each variant is one fixed STACK question (no random variables: the numbers are quiz's, from the
reference numerics), in a category per item as the Moodle export makes. A question has one input
per answer (one per part of a question in parts) and one potential response tree (PRT) per input,
weighted as the part is, whose nodes are:

- the right answer, by the answer kind's test: numbers by ``NumAbsolute`` with the item's own
  half-width (`Tolerance.half_width`: ``decimals n`` is 0.51·10⁻ⁿ, ``sigfigs n`` the same at the
  n-th significant digit, ``rtol``/``atol`` worked out for the answer) less the 1e-9 STACK adds to
  it (`attnquiz.engine.export.lms.stack_nodes.STACK_NUM_TOL`), ``NumRelative`` for a relative tolerance
  or a half-width too small for that, and quiz's own comparison as a truth value where the target
  is computed in Maxima (a carried one). STACK's ``NumDecPlaces`` and ``NumSigFigs`` also check
  how many digits the student *wrote*, so they refuse 1.928 for "1.93 to 2 places", which quiz
  accepts: they are not used. Counts, shapes, choices and formulas by ``AlgEquiv`` (a formula in
  the item's symbols only: the input's validator refuses any other name, as quiz's reader does);
- each named mistake, in the grader's order, at the same tolerance: its score, quiz's feedback,
  and an answer note naming the mistake (``prt2-no-scaling``), so Moodle's response analysis
  counts each misconception across the class;
- for a part that uses earlier parts, the student's own values carried forward: the feedback
  variables recompute the part's target from the earlier inputs as typed and from the student's
  unrounded earlier values (`attnquiz.engine.export.lms.stack_carry`); an answer consistent with
  either, from right earlier values (rounded as asked), scores 1, one consistent with an earlier
  slip the item's ``carried_score``.

A bank name that Maxima or STACK reads as its own (`attnquiz.engine.export.lms.stack_maxima.RESERVED`)
is written with ``_v`` after it, and the question says so; the input shows the right answer rounded
as the question asks.

Every question carries STACK question tests (Moodle runs them): the right answer (and, for a
formula, a factored and a reordered form) scores 1, each mistake reaches its own branch, and for a
question in parts a wrong (a) with the consistent (b) earns (b)'s carried score.

Concept questions are essays, as in the Moodle export (once per item). The XML follows STACK's own
exports element for element (the tests compare it with STACK's samples and with what its
``import_from_xml`` reads).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    IntegerAnswer,
    NumericAnswer,
    PartsAnswer,
)
from attnquiz.engine.bank import images
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import moodle_file
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.export.lms.model import LmsQuestion
from attnquiz.engine.export.lms.stack_inputs import (
    RENAMED,
    Input,
    Unit,
    asked,
    input_for,
    renamed,
    unit_names,
    units,
    validator_definition,
)
from attnquiz.engine.export.lms.stack_nodes import Branch, Node, castext, score_text, var
from attnquiz.engine.export.lms.stack_prt import LONG, Chain, Prt, unit_prt
from attnquiz.engine.export.lms.stack_tests import QTest, question_tests
from attnquiz.engine.markup.xml_text import escape
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, Progress, ruled_lines
from attnquiz.engine.variant import Question


@dataclass
class StackQuestion:
    """Everything one ``<question type="stack">`` holds."""

    name: str
    text: str
    general: str
    variables: str
    note: str
    inputs: list[Input] = field(default_factory=list)
    prts: list[Prt] = field(default_factory=list)
    tests: list[QTest] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Notes on what STACK does differently from quiz (said once per export)
# ---------------------------------------------------------------------------------------------

SYNTAX = (
    "STACK reads answers in its own syntax: numbers without thousands separators or decimal commas "
    "(589824, not 589,824; a small one as 5.12e-7, 5.12E-7, 0.000000512 or 5.12*10^-7), one box per "
    "entry for vectors, matrices and shapes, and names as declared (d_k or dk); anything else is "
    "invalid, which costs nothing"
)
MARKED_BY_HAND = (
    "Moodle does not mark essay questions: a teacher marks each concept answer by hand (the model answer "
    "and key points are the grader information), and an attempt's grade stays incomplete until then"
)
NUMBER_SLIPS = (
    "STACK names only the listed mistakes: quiz's remarks on an answer rounded too coarsely or off by a "
    "power of ten are not given (the answer is wrong in both)"
)


# ---------------------------------------------------------------------------------------------
# The question
# ---------------------------------------------------------------------------------------------


def _options_html(answer: ChoiceAnswer) -> str:
    return "".join(
        f"<p><strong>{letter}.</strong> {lms.tex_html_inline(o.text)}</p>"
        for letter, o in zip(answer.letters, answer.options, strict=True)
    )


def _unit_html(unit: Unit, with_feedback: bool) -> str:
    html = lms.tex_html(f"**({unit.label})** {unit.prompt}") if unit.label else ""
    if isinstance(unit.answer, ChoiceAnswer):
        html += _options_html(unit.answer)
    html += f"<p><em>{escape(asked(unit.answer))}</em></p>"
    html = castext(html)
    html += f"<p>[[input:{unit.input}]] [[validation:{unit.input}]]</p>"
    if with_feedback:
        html += f"<div>[[feedback:{unit.prt}]]</div>"
    return html


_SCORED = ""
"""The note "item" that says a scored question was written (`SYNTAX` is then said once)."""


def stack_question(model: LmsQuestion, notes: lms.Notes) -> StackQuestion:
    """The STACK question of one scored variant, from what the LMS model says it asks."""
    question = model.question
    notes.append(("", _SCORED))
    all_units = units(model)
    chain = Chain(all_units, model.carried_score)
    variables: list[str] = []
    inputs: list[Input] = []
    prts: list[Prt] = []
    for unit in all_units:
        if renamed(unit.answer):
            notes.append((RENAMED, question.item_id))
        names = unit_names(unit.answer)
        validator = var("valid", unit.index)
        if names is not None:
            variables.append(validator_definition(validator, names))
        made = input_for(unit, names, validator)
        if len(made.tans) > LONG:  # STACK refuses a teacher's answer of more than 255 characters
            variables.append(f"{var('ta', unit.index)}:{made.tans}")
            made = replace(made, tans=var("ta", unit.index))
        inputs.append(made)
        prts.append(unit_prt(unit, chain, notes, question.item_id))
    if isinstance(question.answer, PartsAnswer):
        stem = castext(lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt"))
        text = stem + "".join(_unit_html(u, True) for u in all_units)
        if question.student_note:
            text += castext(f"<p><small>Note: {lms.plain_html(question.student_note)}</small></p>")
    else:
        text = castext(lms.question_html(question, "")).replace("<p><em></em></p>", "")
        text += _unit_html(all_units[0], True)
    if any(isinstance(u.answer, NumericAnswer | IntegerAnswer) for u in all_units):
        notes.append((NUMBER_SLIPS, question.item_id))
    tests = []
    for number, test in enumerate(question_tests(question, all_units, chain), 1):
        typed_in = []
        for name, value in test.inputs:
            if len(value) > LONG:  # likewise a test input: it is a question variable instead
                held = f"{var('in', number)}_{name}"
                variables.append(f"{held}:{value}")
                value = held
            typed_in.append((name, value))
        tests.append(replace(test, inputs=tuple(typed_in)))
    return StackQuestion(
        name=lms.question_name(question),
        text=text,
        general=castext(lms.solution_html(question)),
        variables=";\n".join(variables),
        note=f"{question.item_id} {question.code}",
        inputs=inputs,
        prts=prts,
        tests=tests,
    )


# ---------------------------------------------------------------------------------------------
# XML
# ---------------------------------------------------------------------------------------------


def _text(text: str, *, html: bool = True) -> str:
    if not text:
        return "<text></text>"
    return moodle_file.text_element(text, html=html)


def _element(tag: str, value: str | int | float) -> str:
    return f"<{tag}>{escape(str(value))}</{tag}>"


_PRT_MESSAGES = {
    "prtcorrect": "Correct answer, well done.",
    "prtpartiallycorrect": "Your answer is partially correct.",
    "prtincorrect": "Incorrect answer.",
}


def _branch_xml(side: str, branch: Branch) -> list[str]:
    return [
        f"        <{side}scoremode>=</{side}scoremode>",
        f"        {_element(side + 'score', branch.score)}",
        f"        <{side}penalty></{side}penalty>",
        f"        {_element(side + 'nextnode', branch.next_node)}",
        f"        {_element(side + 'answernote', branch.note)}",
        f'        <{side}feedback format="html">{_text(branch.feedback)}</{side}feedback>',
    ]


def _node_xml(node: Node) -> list[str]:
    return [
        "      <node>",
        f"        {_element('name', node.name)}",
        f"        {_element('description', node.description)}",
        f"        {_element('answertest', node.test)}",
        f"        {_element('sans', node.sans)}",
        f"        {_element('tans', node.tans)}",
        f"        {_element('testoptions', node.options)}",
        f"        <quiet>{int(node.quiet)}</quiet>",
        *_branch_xml("true", node.true),
        *_branch_xml("false", node.false),
        "      </node>",
    ]


def _input_xml(item: Input) -> list[str]:
    return [
        "    <input>",
        f"      {_element('name', item.name)}",
        f"      {_element('type', item.kind)}",
        f"      {_element('tans', item.tans)}",
        f"      {_element('boxsize', item.boxsize)}",
        "      <strictsyntax>1</strictsyntax>",
        f"      {_element('insertstars', item.insertstars)}",
        f"      {_element('syntaxhint', item.syntaxhint)}",
        "      <syntaxattribute>0</syntaxattribute>",
        "      <forbidwords></forbidwords>",
        f"      {_element('allowwords', item.allowwords)}",
        f"      {_element('forbidfloat', item.forbidfloat)}",
        "      <requirelowestterms>0</requirelowestterms>",
        "      <checkanswertype>0</checkanswertype>",
        "      <mustverify>0</mustverify>",
        "      <showvalidation>1</showvalidation>",
        f"      {_element('options', item.options)}",
        "    </input>",
    ]


def _prt_xml(prt: Prt) -> list[str]:
    return [
        "    <prt>",
        f"      {_element('name', prt.name)}",
        f"      {_element('value', f'{prt.value:.7f}')}",
        "      <autosimplify>1</autosimplify>",
        "      <feedbackstyle>1</feedbackstyle>",
        f"      <feedbackvariables>{_text(prt.feedbackvariables, html=False)}</feedbackvariables>",
        *(line for node in prt.nodes for line in _node_xml(node)),
        "    </prt>",
    ]


def _qtest_xml(number: int, test: QTest) -> list[str]:
    lines = [
        "    <qtest>",
        f"      {_element('testcase', number)}",
        f"      {_element('description', test.description)}",
    ]
    for name, value in test.inputs:
        lines += [
            "      <testinput>",
            f"        {_element('name', name)}",
            f"        {_element('value', value)}",
            "      </testinput>",
        ]
    for prt, score, answer_note in test.expected:
        lines += [
            "      <expected>",
            f"        {_element('name', prt)}",
            f"        {_element('expectedscore', score_text(score))}",
            f"        {_element('expectedpenalty', score_text(0))}",
            f"        {_element('expectedanswernote', answer_note)}",
            "      </expected>",
        ]
    return [*lines, "    </qtest>"]


def _files(html: str, figures: list[tuple[str, bytes]]) -> str:
    """The files a text shows, embedded after it as Moodle expects (``@@PLUGINFILE@@/name``)."""
    files = dict(figures)
    files.update(lms.image_files(html))
    return "".join(
        f'<file name="{escape(name)}" path="/" encoding="base64">{base64.b64encode(data).decode("ascii")}'
        "</file>"
        for name, data in files.items()
    )


def _with_files(
    tag: str, html: str, figures: list[tuple[str, bytes]], attributes: str = ' format="html"'
) -> str:
    return f"<{tag}{attributes}>{_text(html)}{_files(html, figures)}</{tag}>"


def stack_xml(question: Question, built: StackQuestion) -> list[str]:
    """The ``<question type="stack">`` element, as lines, in the order STACK itself exports."""
    lines = [
        '  <question type="stack">',
        f"    <name>{_text(built.name, html=False)}</name>",
        "    " + _with_files("questiontext", built.text, lms.figure_files(question, "prompt")),
        "    " + _with_files("generalfeedback", built.general, lms.figure_files(question, "solution")),
        "    <defaultgrade>1</defaultgrade>",
        "    <penalty>0</penalty>",
        "    <hidden>0</hidden>",
        "    <idnumber></idnumber>",
        "    <stackversion><text></text></stackversion>",
        f"    <questionvariables>{_text(built.variables, html=False)}</questionvariables>",
        '    <specificfeedback format="html"><text></text></specificfeedback>',
        f'    <questionnote format="moodle_auto_format">{_text(built.note, html=False)}</questionnote>',
        '    <questiondescription format="moodle_auto_format"><text></text></questiondescription>',
        "    <questionsimplify>1</questionsimplify>",
        "    <assumepositive>0</assumepositive>",
        "    <assumereal>0</assumereal>",
        "    <isbroken>0</isbroken>",
        *(f'    <{tag} format="html">{_text(message)}</{tag}>' for tag, message in _PRT_MESSAGES.items()),
        "    <decimals>.</decimals>",
        "    <scientificnotation>*10</scientificnotation>",
        "    <multiplicationsign>dot</multiplicationsign>",
        "    <sqrtsign>1</sqrtsign>",
        "    <complexno>i</complexno>",
        "    <inversetrig>cos-1</inversetrig>",
        "    <logicsymbol>lang</logicsymbol>",
        "    <matrixparens>[</matrixparens>",
        "    <variantsselectionseed></variantsselectionseed>",
    ]
    for item in built.inputs:
        lines += _input_xml(item)
    for prt in built.prts:
        lines += _prt_xml(prt)
    for number, test in enumerate(built.tests, 1):
        lines += _qtest_xml(number, test)
    lines += lms.question_end(question)
    return lines


def essay_xml(question: Question, answer: ExplainAnswer | CodeAnswer, notes: lms.Notes) -> list[str]:
    """A concept question as a Moodle ``essay`` (marked by hand with the model answer and key points);
    a code question too (marked by hand against the reference solution and the named mistakes)."""
    if isinstance(answer, CodeAnswer):
        notes.append((lms.CODE_BY_HAND, question.item_id))
        wanted = 25
        grader = lms.code_grader_html(question, answer)
    else:
        notes.append((MARKED_BY_HAND, question.item_id))
        wanted = ruled_lines(answer) + 2
        grader = lms.key_points_html(answer)
    if question.instructor_note:
        grader += f"<p><small>Note for instructors: {lms.plain_html(question.instructor_note)}</small></p>"
    text = lms.question_html(question)
    general = lms.solution_html(question)
    return [
        '  <question type="essay">',
        f"    <name>{_text(lms.question_name(question), html=False)}</name>",
        "    " + _with_files("questiontext", text, lms.figure_files(question, "prompt")),
        "    " + _with_files("generalfeedback", general, lms.figure_files(question, "solution")),
        "    <defaultgrade>1</defaultgrade>",
        "    <penalty>0</penalty>",
        "    <hidden>0</hidden>",
        *lms.essay_settings(wanted, _with_files("graderinfo", grader, [])),
        *lms.question_end(question),
    ]


@images.in_question_folder
def question_xml(question: Question, notes: lms.Notes) -> list[str]:
    """The element of one variant: a STACK question, or an essay for a concept question."""
    model = lms_model.build(question)
    answer = question.answer
    if isinstance(answer, ExplainAnswer | CodeAnswer):
        return essay_xml(question, answer, notes)
    try:
        return stack_xml(question, stack_question(model, notes))
    except mx.MaximaError as exc:
        raise ExportError(f"item {question.item_id!r} (variant {question.code}): {exc}") from None


def lines(plan: ClassPlan, notes: lms.Notes, *, progress: Progress | None = None) -> Iterator[str]:
    """The file line by line: a category per item (``$course$/<bank>/<item>``), then its variants."""
    return moodle_file.lines(
        plan, lambda question: question_xml(question, notes), made_for=" for STACK", progress=progress
    )


def write(plan: ClassPlan, out: moodle_file.Sink, *, progress: Progress | None = None) -> list[str]:
    """Write the file to ``out`` as it is made (UTF-8, in batches of about 32 kB); the notes."""
    notes: lms.Notes = []
    moodle_file.write(lines(plan, notes, progress=progress), out)
    return _said(notes)


def build(plan: ClassPlan, *, progress: Progress | None = None) -> tuple[str, list[str]]:
    """The whole file in memory, and its notes (an export streams it with `write` instead)."""
    notes: lms.Notes = []
    text = "\n".join(lines(plan, notes, progress=progress)) + "\n"
    return text, _said(notes)


def _said(notes: lms.Notes) -> list[str]:
    """The export's notes, one line each: how STACK reads answers (whenever some question is
    scored), then the notes gathered per item."""
    scored = any(item == _SCORED for _, item in notes)
    gathered = lms.gather([(m, i) for m, i in notes if i != _SCORED])
    return ([SYNTAX] if scored else []) + gathered


__all__ = [
    "MARKED_BY_HAND",
    "NUMBER_SLIPS",
    "SYNTAX",
    "StackQuestion",
    "build",
    "essay_xml",
    "lines",
    "question_xml",
    "stack_question",
    "stack_xml",
    "write",
]
