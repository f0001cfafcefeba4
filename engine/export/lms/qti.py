"""Canvas QTI 1.2 package: a zip of ``imsmanifest.xml``, the assessment and ``assessment_meta.xml``.

Each item is a question group (a ``<section>`` with ``selection_number`` 1) holding its seeded
variants, so every student draws one. A writer of the LMS model
(`attnquiz.engine.export.lms.model`): what a question asks is the model's; this module only writes
it as QTI for Canvas. Per form of question:

- number and count: ``numerical_question``, correct when the response is the answer or lies in
  ``[answer - h, answer + h]`` with ``h = Tolerance.half_width(answer)`` (both ends inclusive, as
  Canvas compares). Canvas numerical answers have no wrong alternatives, so the known mistakes
  and their feedback go into the incorrect-answer feedback. Canvas stores a bound below 1e-4 as
  0, so a variant whose range would need one asks for the answer in a power of ten instead
  ("in units of 10⁻⁷: for 9.5 × 10⁻⁷ enter 9.5"), with the range scaled alike.
- multiple select: ``multiple_answers_question``; Canvas applies its own partial credit
  (+1/|right| per right tick, -1/|right| per wrong tick, floored at 0), which is the engine's
  ``net`` scheme. Other schemes are exported with a warning that Canvas will score differently.
- single choice: ``multiple_choice_question``.
- concept question (explain): ``essay_question``, left for a teacher to mark. Canvas has no
  grader-only text, so the model answer and key points are the general answer comments (shown to
  the grader, and to the student after submitting, as practice shows them); the export says so once.
- vector, matrix, shape: ``fill_in_multiple_blanks_question``, one blank per entry. Canvas
  matches blanks as text, so each blank lists the spellings the tolerance accepts (see
  `attnquiz.engine.export.lms.question_html.spellings`; scientific notation for very small or large entries,
  which the question then asks for), and a shape's blank every spelling of its names that the
  reader takes (`attnquiz.engine.export.lms.question_html.dimension_texts`: ``h*d_k``, ``d_k*h``, ... too
  where
  the item states d_model = h·d_k, with a note that quiz reads more products than a blank lists);
  each blank is worth its share of the question (a part's weight shared among its blanks), which the
  package's response processing says; Canvas itself divides such a question's points equally among
  its blanks, and the export says so where the shares differ.
  A blank that would accept nothing stops the export with an error naming the item.
- question in parts: one fill-in-multiple-blanks question, the stem then each part's prompt and its
  blanks (a number's blank its spellings, a choice's the right letters).
- a formula answer (alone or as a part), or a shape stated with a product: no text blank lists
  every right answer, so the question is an ``essay_question`` marked by hand, the answers, the
  forms that are right and the named mistakes in the general answer comments
  (`attnquiz.engine.export.lms.hand_marked`); the export says so once.

Notes on what Canvas scores differently are gathered into one warning line per kind
(`attnquiz.engine.export.lms.question_html.gather`).

The worked solution is the general feedback; maths is TeX between ``\\(...\\)`` for Canvas's
MathJax. Identifiers derive from the bank, the seed and the selection, and the zip entries carry
a fixed date, so the same export gives the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import math
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from attnquiz.engine.answers.kinds import ChoiceAnswer, MatrixAnswer
from attnquiz.engine.bank import images
from attnquiz.engine.export.lms import hand_marked as lms_hand
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms.model import Blank, Group, LmsQuestion
from attnquiz.engine.markup.xml_text import escape, quoteattr
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, Progress
from attnquiz.engine.variant import Question

_QTI_NS = (
    'xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://www.imsglobal.org/xsd/ims_qtiasiv1p2 '
    'http://www.imsglobal.org/xsd/ims_qtiasiv1p2p1.xsd"'
)
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_CANVAS_SMALLEST = 1e-4  # Canvas stores smaller non-zero numeric bounds as 0 (text2qti issue 51)


@dataclass
class ItemParts:
    """The pieces of one ``<item>``: question type, presentation, response processing, feedback."""

    question_type: str
    presentation: list[str]
    conditions: list[str]
    feedback: dict[str, str] = field(default_factory=dict)
    answer_ids: list[str] = field(default_factory=list)
    power: int = 0  # a numeric answer asked in units of 10**power (see canvas_scale)
    scientific: bool = False  # some blank is asked in scientific notation


@dataclass
class Package:
    """A built QTI package: the zip's bytes, its file names, and what Canvas will do differently."""

    data: bytes
    files: list[str]
    warnings: list[str]


def _mattext(html: str, texttype: str = "text/html") -> str:
    return f'<material><mattext texttype="{texttype}">{escape(html)}</mattext></material>'


def _metadata(fields: dict[str, str]) -> str:
    entries = "".join(
        f"<qtimetadatafield><fieldlabel>{escape(k)}</fieldlabel><fieldentry>{escape(v)}</fieldentry>"
        "</qtimetadatafield>"
        for k, v in fields.items()
    )
    return f"<itemmetadata><qtimetadata>{entries}</qtimetadata></itemmetadata>"


SCALED = (
    "Canvas stores numbers below 1e-4 as 0, so variants with such answers ask for them in units of a "
    "power of ten (e.g. 9.5e-07 entered as 9.5 in units of 10⁻⁷)"
)
SCIENTIFIC = (
    "Canvas matches blanks as text: entries too small or large for a few decimals are asked for, and "
    "accepted, in scientific notation (e.g. 5.12e-7)"
)
AS_TEXT = (
    "Canvas has no numeric blanks, so each entry is matched as text against the spellings its tolerance "
    "accepts (such as 0.88 and .88 for 0.8808 to 2 places)"
)
CREDIT_BY_BLANK = (
    "Canvas gives credit blank by blank, while quiz marks the answer right only when every entry is"
)
EQUAL_BLANKS = (
    "Canvas divides a fill-in-multiple-blanks question's points equally among its blanks, while quiz counts "
    "each part by its weight, shared among the part's blanks: the package gives each blank that share "
    "(its SCORE), but Canvas scores these items as if every blank weighed the same"
)

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def canvas_scale(value: float, half_width: float) -> int:
    """The power of ten a Canvas numeric answer is asked in: 0 unless the range ``value ± half_width``
    has a non-zero bound Canvas would store as 0, else the exponent of ``value`` (9.5e-07 → -7)."""
    bounds = (value - half_width, value + half_width)
    if value == 0 or not any(0 < abs(bound) < _CANVAS_SMALLEST for bound in bounds):
        return 0
    return math.floor(math.log10(abs(value)))


def _numerical(model: LmsQuestion, warnings: lms.Notes) -> ItemParts:
    (group,) = model.groups
    (blank,) = group.blanks
    value = float(blank.target)
    half = blank.half_width()
    power = canvas_scale(value, half)
    warnings.append((lms_model.NUMBERS_IN_DIGITS.message("Canvas"), model.question.item_id))
    if power:
        warnings.append((SCALED, model.question.item_id))
    presentation = [
        '<response_str ident="response1" rcardinality="Single"><render_fib fibtype="Decimal">'
        '<response_label ident="answer1"/></render_fib></response_str>'
    ]
    # Canvas reads each condition as an exact answer with a margin (its upper bound less the
    # value): first the value rounded as asked (the answer Canvas shows), with the margin that stays
    # inside the item's tolerance, then the exact value with the item's own.
    conditions = []
    for shown, margin in lms.shown_first(value, half, blank.tolerance):
        shown, margin = shown / 10.0**power, margin / 10.0**power
        conditions.append(
            '<respcondition continue="No"><conditionvar><or>'
            f'<varequal respident="response1">{lms.number_text(shown)}</varequal>'
            f'<and><vargte respident="response1">{lms.number_text(shown - margin)}</vargte>'
            f'<varlte respident="response1">{lms.number_text(shown + margin)}</varlte></and>'
            '</or></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition>'
        )
    item = ItemParts("numerical_question", presentation, conditions, power=power)
    _add_mistakes(item, model.question, group)
    return item


def _add_mistakes(item: ItemParts, question: Question, group: Group) -> None:
    """The group's named mistakes, with their feedback, as the incorrect-answer feedback (Canvas's
    numbers and blanks have no wrong alternatives of their own)."""
    if not group.mistakes:
        return
    rows = "".join(
        f"<li><strong>{escape(m.format(group.answer))}</strong>: {lms.tex_html_inline(m.feedback)}</li>"
        for m in group.mistakes
    )
    item.feedback["general_incorrect_fb"] = f"<p>Common wrong answers:</p><ul>{rows}</ul>"


def _choice(question: Question, answer: ChoiceAnswer, ident: str, warnings: lms.Notes) -> ItemParts:
    if answer.multiple and answer.scoring != "net":
        warnings.append(
            (
                "Canvas scores multiple-answer questions its own way (+1/|right| per right tick, -1/|right| "
                f"per wrong tick, floored at 0), not by the items' {answer.scoring!r} scheme",
                question.item_id,
            )
        )
    ids = [f"{ident}_{letter}" for letter in answer.letters]
    labels = "".join(
        f"<response_label ident={quoteattr(i)}>{_mattext(lms.tex_html_inline(o.text))}</response_label>"
        for i, o in zip(ids, answer.options, strict=True)
    )
    cardinality = "Multiple" if answer.multiple else "Single"
    presentation = [
        f'<response_lid ident="response1" rcardinality="{cardinality}">'
        f'<render_choice shuffle="No">{labels}</render_choice></response_lid>'
    ]
    conditions: list[str] = []
    feedback: dict[str, str] = {}
    for i, option in zip(ids, answer.options, strict=True):
        if option.why:
            feedback[f"{i}_fb"] = lms.tex_html(option.why)
            conditions.append(
                f'<respcondition continue="Yes"><conditionvar><varequal respident="response1">{i}</varequal>'
                f'</conditionvar><displayfeedback feedbacktype="Response" linkrefid="{i}_fb"/>'
                "</respcondition>"
            )
    if answer.multiple:
        tests = "".join(
            f'<varequal respident="response1">{i}</varequal>'
            if o.correct
            else f'<not><varequal respident="response1">{i}</varequal></not>'
            for i, o in zip(ids, answer.options, strict=True)
        )
        test = f"<and>{tests}</and>"
    else:
        right = next(i for i, o in zip(ids, answer.options, strict=True) if o.correct)
        test = f'<varequal respident="response1">{right}</varequal>'
    conditions.append(
        f'<respcondition continue="No"><conditionvar>{test}</conditionvar>'
        '<setvar action="Set" varname="SCORE">100</setvar></respcondition>'
    )
    kind = "multiple_answers_question" if answer.multiple else "multiple_choice_question"
    return ItemParts(kind, presentation, conditions, feedback, ids)


def _accepted(question: Question, blank: Blank, name: str) -> list[str]:
    """What Canvas accepts in a blank: every text it lists (an error if it would accept nothing)."""
    accepted = blank.accepted()
    if not accepted:
        raise ExportError(
            f"item {question.item_id!r} (variant {question.code}): Canvas would get a blank that accepts "
            f"no answer (entry {name} = {blank.target!r})"
        )
    return accepted


def _blank_xml(ident: str, name: str, accepted: list[str], share: str) -> tuple[str, list[str]]:
    """One blank's ``<response_lid>`` (its accepted texts as the labels) and the conditions that
    give its ``share`` of the score for each."""
    labels = ""
    conditions: list[str] = []
    for k, text in enumerate(accepted):
        label = f"{ident}_{name}_{k}"
        labels += f"<response_label ident={quoteattr(label)}>{_mattext(text, 'text/plain')}</response_label>"
        conditions.append(
            f'<respcondition><conditionvar><varequal respident="response_{name}">{label}</varequal>'
            f'</conditionvar><setvar varname="SCORE" action="Add">{share}</setvar></respcondition>'
        )
    response = (
        f'<response_lid ident="response_{name}"><material><mattext>{name}</mattext></material>'
        f"<render_choice>{labels}</render_choice></response_lid>"
    )
    return response, conditions


def _note_limits(model: LmsQuestion, warnings: lms.Notes, *, scientific: bool) -> None:
    """What Canvas scores differently for a question of blanks (one marked by hand says its own)."""
    item_id = model.question.item_id
    for limit in model.limits:
        if limit is not lms_model.BLANK_BY_BLANK:  # that one in Canvas's words, below
            warnings.append((limit.message("Canvas"), item_id))
    if any(g.numbers for g in model.groups):
        warnings.append((AS_TEXT, item_id))
    if scientific:
        warnings.append((SCIENTIFIC, item_id))
    if len(model.blanks) > 1:
        warnings.append((CREDIT_BY_BLANK, item_id))
    weights = [b.weight for b in model.blanks]
    if max(weights, default=0) - min(weights, default=0) > 1e-9:
        warnings.append((EQUAL_BLANKS, item_id))


def _blanks(model: LmsQuestion, ident: str, warnings: lms.Notes) -> tuple[ItemParts, str]:
    """A fill-in-multiple-blanks item: the entries of one answer, or each part's blanks after its prompt.

    Returns the item and the HTML of its blanks, which follows the question text (for a question in
    parts, the HTML holds the stem and the parts' prompts too)."""
    question = model.question
    presentation: list[str] = []
    conditions: list[str] = []
    scientific = False
    html = ""
    count = 0
    for group in model.groups:
        names: list[str] = []
        for blank in group.blanks:
            count += 1
            name = f"e{count}"
            names.append(name)
            accepted = _accepted(question, blank, name)
            if model.form == "entries" and group.numbers:
                scientific = scientific or any("e" in text.lower() for text in accepted[:1])
            response, tests = _blank_xml(ident, name, accepted, f"{100 * blank.weight:.2f}")
            presentation.append(response)
            conditions += tests
        html += _group_html(model, group, names)
    _note_limits(model, warnings, scientific=scientific)
    item = ItemParts("fill_in_multiple_blanks_question", presentation, conditions, scientific=scientific)
    if model.form == "entries":
        _add_mistakes(item, question, model.groups[0])
    return item, html


def _group_html(model: LmsQuestion, group: Group, names: list[str]) -> str:
    """Where a group's blanks go: after the question text for one answer's entries (a matrix's as a
    table), else after the part's prompt and what to enter."""
    if model.form != "entries":
        intro = lms.part_intro(group.label, group.prompt, lms_model.asked(group.answer))
        return intro + "<p>" + " , ".join(f"[{n}]" for n in names) + "</p>"
    if isinstance(group.answer, MatrixAnswer):
        return lms.matrix_table([f"[{n}]" for n in names], *group.answer.shape)
    return "<p>[ " + " , ".join(f"[{n}]" for n in names) + " ]</p>"


MARKED_BY_HAND = (
    "Canvas does not mark essay questions: a teacher marks each concept answer by hand, and the model "
    "answer and key points, which Canvas cannot keep for graders only, are the general answer comments "
    "that students see after submitting"
)


CODE_BY_HAND = (
    "Canvas does not run code: a teacher marks each code answer by hand, and the reference solution and "
    "the named mistakes, which Canvas cannot keep for graders only, are the general answer comments that "
    "students see after submitting"
)


def _essay(question: Question, warnings: lms.Notes) -> ItemParts:
    """A concept question: one text box, no automatic score (the teacher grades it in SpeedGrader); a
    code question likewise, the reference solution in the general answer comments."""
    code = question.answer.kind == "code"
    warnings.append((CODE_BY_HAND if code else MARKED_BY_HAND, question.item_id))
    return _essay_item()


def _essay_item() -> ItemParts:
    """An ``essay_question``: one text box that nothing scores."""
    presentation = [
        '<response_str ident="response1" rcardinality="Single"><render_fib>'
        '<response_label ident="answer1" rshuffle="No"/></render_fib></response_str>'
    ]
    condition = '<respcondition continue="No"><conditionvar><other/></conditionvar></respcondition>'
    return ItemParts("essay_question", presentation, [condition])


def _by_hand(model: LmsQuestion, ident: str, warnings: lms.Notes) -> str:
    """A question no text blank marks rightly (a formula; a shape stated with a product) as an
    ``essay_question`` for the teacher, with each part's answer, the forms that are right and the
    named mistakes in the general answer comments (Canvas has no grader-only text; students see
    them after submitting, as practice shows a solution)."""
    question = model.question
    own = (lms_model.CHOICE_AMONG_BLANKS,) if model.has(lms_model.CHOICE_AMONG_BLANKS) else ()
    for limit in (*model.by_hand, *own):
        warnings.append((limit.message("Canvas"), question.item_id))
    warnings.append((COMMENTS_SEEN, question.item_id))
    item = _essay_item()
    item.feedback = {"general_fb": lms_hand.grader_html(model, own) + lms.solution_html(question)}
    return item_element(question, ident, item, lms_hand.question_html(model))


COMMENTS_SEEN = (
    "Canvas has no grader-only text: the answers and accepted forms of the questions marked by hand are "
    "the general answer comments, which students see after submitting"
)


def _asked(question: Question, item: ItemParts) -> str | None:
    """What to enter, where Canvas needs it said beyond `lms.instructions` (None: nothing more)."""
    asked = lms.instructions(question.answer)
    if item.power:
        unit = "10" + str(item.power).translate(_SUPERSCRIPT)
        return f"{asked} Enter it in units of {unit}: for 3.2 × {unit}, enter 3.2."
    if item.scientific:
        return f"{asked} Write very small or large entries in scientific notation, e.g. 5.12e-7."
    return None


@images.in_question_folder
def _item_xml(question: Question, ident: str, warnings: lms.Notes) -> str:
    model = lms_model.build(question)
    answer = question.answer
    blank_html = ""
    if model.form == "number":
        item = _numerical(model, warnings)
    elif model.form == "essay":
        item = _essay(question, warnings)
    elif model.by_hand or model.has(lms_model.CHOICE_AMONG_BLANKS):
        return _by_hand(model, ident, warnings)
    elif model.form == "choice" and isinstance(answer, ChoiceAnswer):
        item = _choice(question, answer, ident, warnings)
    else:
        item, blank_html = _blanks(model, ident, warnings)
    if model.form == "parts":
        text = lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt") + blank_html
        if question.student_note:
            text += f"<p><small>Note: {lms.plain_html(question.student_note)}</small></p>"
    else:
        text = lms.question_html(question, _asked(question, item)) + blank_html
    item.feedback = {"general_fb": lms.solution_html(question), **item.feedback}
    return item_element(question, ident, item, text)


def item_element(question: Question, ident: str, item: ItemParts, text: str) -> str:
    """The ``<item>`` element of one question: its question text (HTML), blanks or choices, scoring and
    feedback."""
    metadata = _metadata(
        {
            "question_type": item.question_type,
            "points_possible": "1.0",
            "original_answer_ids": ",".join(item.answer_ids),
            "assessment_question_identifierref": f"{ident}_ref",
        }
    )
    general = (
        '<respcondition continue="Yes"><conditionvar><other/></conditionvar>'
        '<displayfeedback feedbacktype="Response" linkrefid="general_fb"/></respcondition>'
    )
    incorrect = (
        '<respcondition continue="Yes"><conditionvar><other/></conditionvar>'
        '<displayfeedback feedbacktype="Response" linkrefid="general_incorrect_fb"/></respcondition>'
        if "general_incorrect_fb" in item.feedback
        else ""
    )
    feedback = "".join(
        f"<itemfeedback ident={quoteattr(k)}><flow_mat>{_mattext(v)}</flow_mat></itemfeedback>"
        for k, v in item.feedback.items()
    )
    return (
        f"      <item ident={quoteattr(ident)} title={quoteattr(lms.question_name(question))}>\n"
        f"        {metadata}\n"
        f"        <presentation>{_mattext(text)}{''.join(item.presentation)}</presentation>\n"
        '        <resprocessing><outcomes><decvar maxvalue="100" minvalue="0" varname="SCORE" '
        f'vartype="Decimal"/></outcomes>{general}{"".join(item.conditions)}{incorrect}</resprocessing>\n'
        f"        {feedback}\n"
        "      </item>"
    )


def _identifier(plan: ClassPlan) -> str:
    key = f"{plan.bank}|{plan.master_seed}|{','.join(plan.items)}|{len(plan.sheets)}"
    return "quiz" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def assessment_lines(plan: ClassPlan, warnings: lms.Notes, progress: Progress | None = None) -> Iterator[str]:
    """The ``questestinterop`` document line by line: one question group per item, each variant built
    as it is written."""
    aid = _identifier(plan)
    title = _title(plan)
    yield '<?xml version="1.0" encoding="UTF-8"?>'
    yield f"<questestinterop {_QTI_NS}>"
    yield f"  <assessment ident={quoteattr(aid)} title={quoteattr(title)}>"
    yield (
        "    <qtimetadata><qtimetadatafield><fieldlabel>cc_maxattempts</fieldlabel>"
        "<fieldentry>1</fieldentry></qtimetadatafield></qtimetadata>"
    )
    yield '    <section ident="root_section">'
    groups = plan.by_item()
    for g, (item_id, questions) in enumerate(groups, 1):
        yield f"    <section ident={quoteattr(f'{aid}_g{g}')} title={quoteattr(item_id)}>"
        yield (
            "      <selection_ordering><selection><selection_number>1</selection_number>"
            "<selection_extension><points_per_item>1</points_per_item></selection_extension>"
            "</selection></selection_ordering>"
        )
        for v, question in enumerate(lms_model.variants_to_write(questions), 1):
            yield _item_xml(question, f"{aid}_g{g}_v{v}", warnings)
        yield "    </section>"
        if progress is not None:
            progress(g, len(groups))
    yield from ["    </section>", "  </assessment>", "</questestinterop>"]


def assessment_xml(plan: ClassPlan, warnings: lms.Notes, progress: Progress | None = None) -> str:
    """The ``questestinterop`` document in memory (`write` streams it into the zip instead)."""
    return "\n".join(assessment_lines(plan, warnings, progress)) + "\n"


def _title(plan: ClassPlan) -> str:
    return plan.title if plan.original else f"{plan.title} (seed {plan.master_seed})"


def assessment_meta_xml(plan: ClassPlan) -> str:
    """Canvas's quiz settings for the assessment (unpublished, one attempt, answers shown after)."""
    aid = _identifier(plan)
    description = (
        f"Generated by quiz from bank {plan.bank}: {len(plan.items)} question groups, "
        f"{len(plan.sheets)} variant(s) each."
    )
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<quiz identifier={quoteattr(aid)} xmlns="http://canvas.instructure.com/xsd/cccv1p0" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xsi:schemaLocation="http://canvas.instructure.com/xsd/cccv1p0 '
            'https://canvas.instructure.com/xsd/cccv1p0.xsd">',
            f"  <title>{escape(_title(plan))}</title>",
            f"  <description>{escape(description)}</description>",
            "  <shuffle_answers>false</shuffle_answers>",
            "  <scoring_policy>keep_highest</scoring_policy>",
            "  <quiz_type>assignment</quiz_type>",
            f"  <points_possible>{float(len(plan.items)):.1f}</points_possible>",
            "  <show_correct_answers>true</show_correct_answers>",
            "  <allowed_attempts>1</allowed_attempts>",
            "  <one_question_at_a_time>false</one_question_at_a_time>",
            "  <available>false</available>",
            f"  <assignment identifier={quoteattr(aid + '_assignment')}>",
            f"    <title>{escape(_title(plan))}</title>",
            "    <workflow_state>unpublished</workflow_state>",
            f"    <quiz_identifierref>{aid}</quiz_identifierref>",
            f"    <points_possible>{float(len(plan.items)):.1f}</points_possible>",
            "    <grading_type>points</grading_type>",
            "    <submission_types>online_quiz</submission_types>",
            "  </assignment>",
            f"  <assignment_group_identifierref>{aid}_group</assignment_group_identifierref>",
            "</quiz>",
            "",
        ]
    )


FILES = "web_resources/figures"
"""Where the package keeps the files its questions show (figures as SVG); Canvas reads the course's
files from ``web_resources``, which a question's HTML names ``$IMS-CC-FILEBASE$``."""


def manifest_xml(plan: ClassPlan, files: Iterable[str] = ()) -> str:
    """``imsmanifest.xml``: the assessment and its Canvas settings as resources, every file listed
    (``files``: the names of the questions' files, kept in `FILES`, as one web-content resource)."""
    aid = _identifier(plan)
    names = sorted(files)
    shown = (
        [f'    <resource identifier="{aid}_files" type="webcontent" href="{FILES}/{escape(names[0])}">']
        + [f'      <file href="{FILES}/{escape(name)}"/>' for name in names]
        + ["    </resource>"]
        if names
        else []
    )
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<manifest identifier="{aid}_manifest" '
            'xmlns="http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1" '
            'xmlns:imsmd="http://www.imsglobal.org/xsd/imsmd_v1p2" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xsi:schemaLocation="http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1 '
            "http://www.imsglobal.org/xsd/imscp_v1p1.xsd http://www.imsglobal.org/xsd/imsmd_v1p2 "
            'http://www.imsglobal.org/xsd/imsmd_v1p2p2.xsd">',
            "  <metadata><schema>IMS Content</schema><schemaversion>1.1.3</schemaversion>",
            f"    <imsmd:lom><imsmd:general><imsmd:title><imsmd:string>{escape(_title(plan))}</imsmd:string>"
            "</imsmd:title></imsmd:general></imsmd:lom>",
            "  </metadata>",
            "  <organizations/>",
            "  <resources>",
            f'    <resource identifier="{aid}" type="imsqti_xmlv1p2">',
            f'      <file href="{aid}/{aid}.xml"/>',
            f'      <dependency identifierref="{aid}_meta"/>',
            "    </resource>",
            f'    <resource identifier="{aid}_meta" '
            'type="associatedcontent/imscc_xmlv1p1/learning-application-resource" '
            f'href="{aid}/assessment_meta.xml">',
            f'      <file href="{aid}/assessment_meta.xml"/>',
            "    </resource>",
            *shown,
            "  </resources>",
            "</manifest>",
            "",
        ]
    )


def write(plan: ClassPlan, out: BinaryIO, *, progress: Progress | None = None) -> list[str]:
    """Write the zip to ``out`` (manifest first), the assessment compressed as it is made; returns the
    warnings about what Canvas will score differently.

    The files the questions show (figures) are known only once the assessment is made, and the
    manifest, first in the zip, lists them: the assessment is made into a spooled temporary file
    (on disk beyond a few megabytes), then copied into the zip after the manifest.
    """
    return _write(plan, out, progress)[0]


class _FilesOnDisk:
    """The files a package's questions show, kept in a temporary folder as they are collected, by
    name: a class of thousands shows thousands of figures (a few kB each), which memory would hold
    all at once until the zip is written."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.names: set[str] = set()

    def __setitem__(self, name: str, data: bytes, /) -> None:
        if name not in self.names:  # a name is its file's digest: the same name, the same bytes
            (self.folder / name).write_bytes(data)
            self.names.add(name)

    def chunks(self, name: str) -> Iterator[bytes]:
        with (self.folder / name).open("rb") as file:
            yield from iter(lambda: file.read(_CHUNK), b"")


# What one write into a zip member holds: the compressor's output per write stays a few kB, so the
# zip reaches its file in small writes whatever the class size.
_CHUNK = 64 * 2**10


def _write(plan: ClassPlan, out: BinaryIO, progress: Progress | None) -> tuple[list[str], list[str]]:
    aid = _identifier(plan)
    warnings: lms.Notes = []
    with (
        tempfile.TemporaryDirectory(prefix="quiz-qti-") as folder,
        tempfile.SpooledTemporaryFile(max_size=8 * 2**20) as assessment,
    ):
        packed = _FilesOnDisk(folder)
        base = lms.FILE_BASE.set(f"$IMS-CC-FILEBASE$/{FILES.removeprefix('web_resources/')}/")
        collecting = lms.PACKED.set(packed)
        try:
            for line in assessment_lines(plan, warnings, progress):
                assessment.write((line + "\n").encode("utf-8"))
        finally:
            lms.PACKED.reset(collecting)
            lms.FILE_BASE.reset(base)
        assessment.seek(0)
        files: dict[str, Callable[[], Iterator[bytes]]] = {
            "imsmanifest.xml": lambda: iter([manifest_xml(plan, packed.names).encode("utf-8")]),
            f"{aid}/{aid}.xml": lambda: iter(lambda: assessment.read(_CHUNK), b""),
            f"{aid}/assessment_meta.xml": lambda: iter([assessment_meta_xml(plan).encode("utf-8")]),
        }
        for name in sorted(packed.names):
            files[f"{FILES}/{name}"] = lambda name=name: packed.chunks(name)  # type: ignore[misc]
        with zipfile.ZipFile(out, "w") as archive:
            for name, chunks in files.items():
                info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                with archive.open(info, "w") as member:
                    for chunk in chunks():
                        member.write(chunk)
    return lms.gather(warnings), list(files)


def package(plan: ClassPlan, *, progress: Progress | None = None) -> Package:
    """The zip in memory (an export streams it to disk with `write`)."""
    buffer = io.BytesIO()
    warnings, names = _write(plan, buffer, progress)
    return Package(buffer.getvalue(), names, warnings)


__all__ = [
    "Package",
    "assessment_lines",
    "assessment_meta_xml",
    "assessment_xml",
    "canvas_scale",
    "manifest_xml",
    "package",
    "write",
]
