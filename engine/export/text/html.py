"""Self-contained HTML worksheets and keys: MathML maths, print CSS, no JavaScript, no network.

One file holds the whole class; each student is a ``<section class="sheet">`` that starts a new
printed page. The maths is MathML Core (see `attnquiz.engine.export.text.mathml`), which current browsers
typeset natively, so the file prints from a browser exactly as it shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from html import escape

from attnquiz.engine.answers.kinds import Answer, ChoiceAnswer, ExplainAnswer, Mistake, PartsAnswer
from attnquiz.engine.bank import images
from attnquiz.engine.export.text import mathml
from attnquiz.engine.export.text.text_document import TextDocument, as_text
from attnquiz.engine.formula import tex as formula_tex
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.plan.class_plan import (
    ClassPlan,
    KeyStyle,
    Paper,
    Sheet,
    answer_space,
    key_points_heading,
    part_label,
    parts_instructions,
    ruled_lines,
    sheet_instructions,
    working_space,
)
from attnquiz.engine.variant import Question

_PAGE_SIZES = {"a4": "A4", "us-letter": "letter"}
_TRAILING = ".,;:!?)"

_CSS = """
:root { color-scheme: light; }
body { font-family: "Latin Modern Roman", "New Computer Modern", "CMU Serif", Georgia, "Times New Roman",
  serif;
  font-size: 11pt; line-height: 1.45; color: #111; background: #fff; margin: 0; }
main { max-width: 170mm; margin: 0 auto; padding: 12mm 0; }
math { font-family: "Latin Modern Math", "New Computer Modern Math", "STIX Two Math", "Cambria Math",
  "DejaVu Math TeX Gyre", math; }
math[display="block"] { margin: 0.6em 0; }
.nobr { white-space: nowrap; }
code, .code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
.sheet { break-after: page; page-break-after: always; }
.sheet:last-child { break-after: auto; page-break-after: auto; }
.head { display: flex; justify-content: space-between; align-items: flex-start; gap: 1em;
  border-bottom: 1.2px solid #111; padding-bottom: 0.5em; margin-bottom: 0.8em; }
.head h1 { font-size: 13pt; margin: 0; }
.head .sub { color: #555; }
.head .who { text-align: right; }
.name { margin-top: 0.4em; }
.name span { display: inline-block; width: 9cm; border-bottom: 0.6px solid #111; }
.question { break-inside: avoid; page-break-inside: avoid; margin-top: 1.3em; }
.question h2 { font-size: 11pt; margin: 0 0 0.2em; }
.question h2 .source, .entry .source { font-weight: normal; font-size: 9pt; color: #666; margin-left: 0.5em; }
.question p { margin: 0.3em 0; }
.options { list-style: none; padding-left: 0; margin: 0.4em 0; }
.options li { display: flex; gap: 0.5em; align-items: baseline; margin: 0.35em 0; }
.options .tick { display: inline-block; width: 0.8em; height: 0.8em; border: 0.7px solid #111; flex: none;
  transform: translateY(0.1em); }
.options .bubble { border-radius: 50%; }
.options .letter { font-weight: bold; flex: none; }
.instructions { font-style: italic; font-size: 9.5pt; color: #555; }
.note { font-size: 9pt; color: #666; }
.answer-box { border: 0.6px solid #999; border-radius: 2px; margin-top: 0.5em; padding: 3px 5px;
  font-size: 8pt; color: #595959; break-inside: avoid; page-break-inside: avoid; }
.answer-box .working { border-bottom: 0.5px dashed #aaa; margin-bottom: 3px; }
.ruled { margin-top: 0.5em; font-size: 8pt; color: #595959; break-inside: avoid; page-break-inside: avoid; }
.ruled .rule { height: 0.78cm; border-bottom: 0.6px solid #999; }
.by-hand { font-style: italic; }
.entry { break-inside: avoid; page-break-inside: avoid; margin-top: 1em; }
.entry .line { display: flex; justify-content: space-between; gap: 1em; }
.entry ol { margin: 0.3em 0; }
.mistakes { font-size: 9.5pt; }
.brief { columns: 2; column-gap: 8mm; }
.brief .student { break-inside: avoid; page-break-inside: avoid; margin-bottom: 1em; }
.brief .line { display: flex; justify-content: space-between; }
.brief .points { font-size: 9.5pt; padding-left: 1.2em; }
.quiz-figure { margin: 0.6em 0; break-inside: avoid; page-break-inside: avoid; }
.quiz-figure svg { max-width: 100%; height: auto; }
.quiz-figure figcaption { font-size: 9pt; color: #555; }
.figure-description { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
.figure-data { margin-top: 0.3em; }
.figure-table { border-collapse: collapse; margin: 0.4em 0; font-size: 9.5pt; color: #111; }
.figure-table caption { text-align: left; font-weight: bold; }
.figure-table th, .figure-table td { border: 0.6px solid #999; padding: 1px 6px; text-align: right; }
@media print { .figure-data:not([open]) { display: none; } }
.md-table { border-collapse: collapse; margin: 0.5em 0; font-size: 10pt; }
.md-table th, .md-table td { border: 0.6px solid #999; padding: 2px 8px; }
.md-table thead th { border-bottom: 1.2px solid #111; background: #f3f3f3; }
.md-left { text-align: left; }
.md-center { text-align: center; }
.md-right { text-align: right; }
.md-code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 9pt; line-height: 1.35;
  background: #f6f6f6; border: 0.6px solid #ccc; border-radius: 2px; padding: 5px 8px; margin: 0.5em 0;
  white-space: pre; overflow-x: auto; break-inside: avoid; page-break-inside: avoid; }
.md-code code { font-size: 1em; }
.md-image { margin: 0.5em 0; break-inside: avoid; page-break-inside: avoid; }
.md-image img { max-width: 100%; max-height: 90mm; }
@media screen { .sheet { border-bottom: 1px dashed #bbb; padding-bottom: 2em; margin-bottom: 2em; } }
@media print { main { max-width: none; padding: 0; } }
"""


def _inlines(nodes: Iterable[md.Inline]) -> str:
    out: list[str] = []
    glued = ""
    for node in nodes:
        if isinstance(node, md.Plain):
            text = node.text
            if glued:
                # Punctuation right after a formula stays on its line (no ". " alone at a line start).
                stripped = text.lstrip(_TRAILING)
                mark, text = text[: len(text) - len(stripped)], stripped
                out[-1] = f'<span class="nobr">{glued}{escape(mark, quote=False)}</span>' if mark else glued
                glued = ""
            out.append(escape(text, quote=False))
        elif isinstance(node, md.Strong):
            out.append(f"<strong>{_inlines(node.children)}</strong>")
        elif isinstance(node, md.Emph):
            out.append(f"<em>{_inlines(node.children)}</em>")
        elif isinstance(node, md.Code):
            out.append(f"<code>{escape(node.text, quote=False)}</code>")
        else:
            glued = mathml.formula(node.math)
            out.append(glued)
            continue
        glued = ""
    return "".join(out)


def content(source: str) -> str:
    """Markdown with TeX maths as HTML with MathML: paragraphs, lists, tables, code and images."""
    out: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            out.append(f"<p>{_inlines(block.inlines)}</p>")
        elif isinstance(block, md.ListBlock):
            tag = "ol" if block.ordered else "ul"
            items = "".join(f"<li>{_inlines(item)}</li>" for item in block.items)
            out.append(f"<{tag}>{items}</{tag}>")
        else:
            out.append(block_html(block))
    return "\n".join(out)


def inline_content(source: str) -> str:
    """Markdown with TeX maths as HTML for a list item or a table cell (no paragraph tags; a
    table, code block or image keeps its own block element)."""
    pieces: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            pieces.append(_inlines(block.inlines))
        elif isinstance(block, md.ListBlock):
            pieces.extend(_inlines(item) for item in block.items)
        else:
            pieces.append(block_html(block))
    return " ".join(pieces)


_ALIGN_CLASS = {
    "left": ' class="md-left"',
    "center": ' class="md-center"',
    "right": ' class="md-right"',
    "": "",
}


def table_html(
    block: md.Table,
    inlines: Callable[[tuple[md.Inline, ...]], str],
    cell_attributes: Callable[[str], str],
    table_attributes: str,
) -> str:
    """A Markdown table as an HTML table: cells written by ``inlines``, each cell's attributes (its
    alignment, as a class or an inline style) by ``cell_attributes`` of the column's alignment."""
    head = "".join(
        f"<th{cell_attributes(how)}>{inlines(cell)}</th>"
        for cell, how in zip(block.header, block.align, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{cell_attributes(how)}>{inlines(cell)}</td>"
            for cell, how in zip(row, block.align, strict=True)
        )
        + "</tr>"
        for row in block.rows
    )
    return f"<table{table_attributes}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def block_html(block: md.Table | md.CodeBlock | md.Image) -> str:
    """A table, a code block or an image as HTML (an image as a data URI: the file stays one file)."""
    if isinstance(block, md.Table):
        return table_html(block, _inlines, lambda how: _ALIGN_CLASS[how], ' class="md-table"')
    if isinstance(block, md.CodeBlock):
        language = re.sub(r"[^A-Za-z0-9_+-]", "", block.language)
        attribute = f' class="language-{language}"' if language else ""
        # Focusable: a reader with no mouse can scroll a code block wider than the page (WCAG 2.1.1).
        code = escape(block.text, quote=False)
        return f'<pre class="md-code" tabindex="0"><code{attribute}>{code}</code></pre>'
    try:
        image = images.resolve(block.src)
    except images.ImageError as exc:
        return (
            f'<p class="md-image-missing">[image: {escape(block.alt or block.src)}] ({escape(str(exc))})</p>'
        )
    sized = f' style="width: {block.width}"' if md.IMAGE_WIDTH.match(block.width) else ""
    return (
        f'<figure class="md-image"><img src="{image.data_uri()}" alt="{escape(block.alt)}"{sized}></figure>'
    )


def figures(question: Question, where: str) -> list[str]:
    """The variant's figures that belong ``where`` ("prompt" or "solution") as inline SVG figures."""
    drawn = [f for f in question.variant.figures if f.where == where]
    if not drawn:
        return []
    from attnquiz.engine.export.figures.svg import html_figure

    return [html_figure(f, inline_content(_figure_markdown(f.caption))) for f in drawn]


def _figure_markdown(text: str) -> str:
    """Figure text (plain text with ``$TeX$``) as Markdown: the plain runs escaped, the maths kept."""
    from attnquiz.engine.figures import segments
    from attnquiz.engine.markup.tex import escape_markdown

    return "".join(escape_markdown(s) if isinstance(s, str) else _dollars(s) for s in segments(text))


def _dollars(formula: markup.Math) -> str:
    return f"$${formula.source}$$" if formula.display else f"${formula.source}$"


def _document(
    title: str,
    paper: Paper,
    sheet: Callable[[int, Sheet], Iterable[str]],
    head: Sequence[str] = (),
    tail: Sequence[str] = (),
) -> TextDocument:
    """The HTML file whose body is the blocks of ``sheet`` for each sheet (and ``head``/``tail``
    blocks around them), joined by line breaks."""
    css = _CSS + f"@page {{ size: {_PAGE_SIZES[paper]}; margin: 16mm 18mm 18mm; }}\n"
    prefix = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="quiz">\n'
        f"<title>{escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n<main>\n"
    )
    return TextDocument(prefix, "\n", sheet, head, tail, suffix="\n</main>\n</body>\n</html>\n")


def _options(answer: ChoiceAnswer) -> str:
    """A choice question's options: round bubbles for a single choice, boxes to tick for several."""
    mark = "tick" if answer.multiple else "tick bubble"
    options = "".join(
        f'<li><span class="{mark}"></span><span class="letter">{letter}.</span>'
        f"<span>{inline_content(option.text)}</span></li>"
        for letter, option in zip(answer.letters, answer.options, strict=True)
    )
    return f'<ul class="options">{options}</ul>'


def _instructions(source: str) -> str:
    return f'<p class="instructions">{inline_content(source)}</p>'


def _question_in_parts(number: int, question: Question) -> str:
    """A question in parts: the stem once, how the parts are marked, then each part (with its
    weight) and its own answer box."""
    assert isinstance(question.answer, PartsAnswer)
    out = [
        f'<section class="question"><h2>Question {number}'
        f'<span class="source">{escape(question.source)}</span></h2>',
        content(question.variant.stem),
        *figures(question, "prompt"),
        _instructions(parts_instructions(question.answer)),
    ]
    for part in question.variant.parts:
        out.append(content(f"{part_label(part)} {part.prompt}"))
        out.append(_instructions(sheet_instructions(part.answer)))
        if isinstance(part.answer, ChoiceAnswer):
            out.append(_options(part.answer))
        else:
            working = f'<div class="working" style="height: {working_space(part.answer)}">Working</div>'
            answer_line = f'<div style="height: {answer_space(part.answer)}">Answer ({part.label})</div>'
            out.append(f'<div class="answer-box">{working}{answer_line}</div>')
    if question.student_note:
        out.append(f'<p class="note">Note: {escape(question.student_note)}</p>')
    out.append("</section>")
    return "\n".join(out)


@images.in_question_folder
def _question(number: int, question: Question) -> str:
    if question.variant.parts:
        return _question_in_parts(number, question)
    answer = question.answer
    parts = [
        f'<section class="question"><h2>Question {number}'
        f'<span class="source">{escape(question.source)}</span></h2>',
        content(question.variant.prompt),
        *figures(question, "prompt"),
        _instructions(sheet_instructions(answer)),  # before the options: what to do, then the choices
    ]
    if isinstance(answer, ChoiceAnswer):
        parts.append(_options(answer))
    if question.student_note:  # a worksheet is for students: never the instructors' note
        parts.append(f'<p class="note">Note: {escape(question.student_note)}</p>')
    if isinstance(answer, ExplainAnswer):
        rules = '<div class="rule"></div>' * ruled_lines(answer)
        parts.append(f'<div class="ruled">Answer{rules}</div>')
    elif not isinstance(answer, ChoiceAnswer):
        working = f'<div class="working" style="height: {working_space(answer)}">Working</div>'
        answer_line = f'<div style="height: {answer_space(answer)}">Answer</div>'
        parts.append(f'<div class="answer-box">{working}{answer_line}</div>')
    parts.append("</section>")
    return "\n".join(parts)


def _who(plan: ClassPlan, sheet: Sheet) -> str:
    if plan.original:
        return ""
    return (
        f'Student <strong class="student">{sheet.student}</strong><br>'
        f'Variant <span class="code">{escape(sheet.code)}</span>'
    )


def worksheets(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4") -> str:
    """The worksheets of ``sheets`` as one HTML file (a page break before each student)."""
    return as_text(worksheet_document(plan, paper), sheets)


def worksheet_document(plan: ClassPlan, paper: Paper = "a4") -> TextDocument:
    """The worksheets as a document made sheet by sheet (see `attnquiz.engine.export.text.text_document`)."""
    subtitle = "Past-paper questions" if plan.original else "Practice worksheet"

    def sheet_blocks(_: int, sheet: Sheet) -> Iterator[str]:
        yield (
            f'<section class="sheet" data-student="{sheet.student}" data-code="{escape(sheet.code)}">\n'
            f'<header class="head"><div><h1>{escape(plan.title)}</h1>'
            f'<div class="sub">{subtitle}</div>'
            '<div class="name">Name: <span>&nbsp;</span></div></div>'
            f'<div class="who">{_who(plan, sheet)}</div></header>'
        )
        yield from (_question(n, q) for n, q in enumerate(sheet.questions, 1))
        yield "</section>"

    return _document(f"{plan.title}: worksheets", paper, sheet_blocks)


@images.in_question_folder
def _concept_entry(number: int, question: Question, answer: ExplainAnswer) -> str:
    """A concept question in the full key: the model answer and the key points to mark by."""
    points = "".join(f"<li>{inline_content(point)}</li>" for point in answer.points)
    parts = [
        f'<div class="entry concept"><div class="line"><span><strong>{number}.</strong> '
        f'{escape(question.item_id)}<span class="source">({escape(question.source)})</span></span>'
        '<span class="by-hand">Marked by hand</span></div>',
        f'<div class="model"><em>Model answer:</em>{content(answer.value)}</div>',
        f'<div class="points"><em>{escape(key_points_heading(answer))}:</em><ol>{points}</ol></div>',
    ]
    steps = "".join(f"<li>{inline_content(step)}</li>" for step in question.variant.solution)
    if steps:
        parts.append(f"<ol>{steps}</ol>")
    parts.extend(figures(question, "solution"))
    if question.instructor_note:
        parts.append(f'<p class="note">Note for instructors: {escape(question.instructor_note)}</p>')
    parts.append("</div>")
    return "\n".join(parts)


def answer_html(answer: Answer) -> str:
    """An answer as a key shows it: a formula typeset (MathML) and simplified, any other kind as text."""
    if formula_tex.is_typeset(answer):
        return inline_content(formula_tex.answer_markup(answer))
    return escape(answer.format())


def _mistake_html(mistake: Mistake, answer: Answer) -> str:
    if formula_tex.is_typeset(answer):
        return inline_content(formula_tex.mistake_markup(mistake, answer))
    return escape(mistake.format(answer))


def _brief_line(number: int, question: Question) -> str:
    """A question's line in the brief key: item and answer, or a concept question's key points below it."""
    answer = question.answer
    item = f"<span><strong>{number}.</strong> {escape(question.item_id)}</span>"
    if isinstance(answer, ExplainAnswer):
        points = " ".join(
            f"<strong>{n}.</strong> {inline_content(point)}" for n, point in enumerate(answer.points, 1)
        )
        return (
            f'<div class="line">{item}<em class="by-hand">by hand</em></div>'
            f'<div class="points">{points}</div>'
        )
    return f'<div class="line">{item}<strong>{answer_html(answer)}</strong></div>'


@images.in_question_folder
def _key_entry(number: int, question: Question) -> str:
    answer = question.answer
    if isinstance(answer, ExplainAnswer):
        return _concept_entry(number, question, answer)
    parts = [
        f'<div class="entry"><div class="line"><span><strong>{number}.</strong> {escape(question.item_id)}'
        f'<span class="source">({escape(question.source)})</span></span>'
        f"<span>Answer: <strong>{answer_html(answer)}</strong></span></div>"
    ]
    steps = "".join(f"<li>{inline_content(step)}</li>" for step in question.variant.solution)
    if steps:
        parts.append(f"<ol>{steps}</ol>")
    parts.extend(figures(question, "solution"))
    if question.instructor_note:  # the key is the instructor's: their note belongs here
        parts.append(f'<p class="note">Note for instructors: {escape(question.instructor_note)}</p>')
    if isinstance(answer, PartsAnswer) and answer.key_note():
        parts.append(f'<p class="note">{escape(answer.key_note())}</p>')
    listed = question.variant.listed_mistakes()
    if listed:
        items = "".join(
            f"<li>{escape(where)}<strong>{_mistake_html(m, of)}</strong> ({escape(m.tag)}): "
            f"{inline_content(m.feedback)}</li>"
            for where, of, m in listed
        )
        parts.append(f'<div class="mistakes"><em>Wrong answers to recognise:</em><ul>{items}</ul></div>')
    parts.append("</div>")
    return "\n".join(parts)


def key(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4", style: KeyStyle = "full") -> str:
    """The answer key of ``sheets`` as one HTML file: per student and variant code, answers and solutions."""
    return as_text(key_document(plan, paper, style), sheets)


def key_document(plan: ClassPlan, paper: Paper = "a4", style: KeyStyle = "full") -> TextDocument:
    """The answer key as a document made sheet by sheet (see `attnquiz.engine.export.text.text_document`)."""
    seed = "past-paper questions" if plan.original else f"master seed {plan.master_seed}"
    intro = f"{plan.title}: answer key ({seed})"

    def sheet_blocks(_: int, sheet: Sheet) -> Iterator[str]:
        heading = f'Student {sheet.student} · variant <span class="code">{escape(sheet.code)}</span>'
        if style == "brief":
            lines = "".join(_brief_line(n, q) for n, q in enumerate(sheet.questions, 1))
            yield f'<div class="student"><strong>{heading}</strong>{lines}</div>'
            return
        yield (
            f'<section class="sheet" data-student="{sheet.student}" data-code="{escape(sheet.code)}">'
            f'<p class="note">{escape(intro)}</p><header class="head"><h1>{heading}</h1></header>'
        )
        yield from (_key_entry(n, q) for n, q in enumerate(sheet.questions, 1))
        yield "</section>"

    if style != "brief":
        return _document(f"{plan.title}: answer key", paper, sheet_blocks)
    return _document(
        f"{plan.title}: answer key",
        paper,
        sheet_blocks,
        head=[f'<h1 style="font-size: 13pt">{escape(intro)}</h1><div class="brief">'],
        tail=["</div>"],
    )


__all__ = ["content", "inline_content", "key", "key_document", "worksheet_document", "worksheets"]
