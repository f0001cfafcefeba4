"""Typst source for worksheets and answer keys, with maths typeset from `markup`'s formula tree.

The documents are plain Typst with no packages, set in the fonts the `typst` wheel embeds (New
Computer Modern for text and maths), so a PDF compiles the same on every machine with no TeX
installation and no network. A whole class is one document: one compile per file is what makes
30 sheets take a fraction of a second. Nothing in the source depends on the clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from attnquiz.engine.answers.carry import key_text
from attnquiz.engine.answers.kinds import Answer, ChoiceAnswer, ExplainAnswer, Mistake, PartsAnswer
from attnquiz.engine.bank import images
from attnquiz.engine.formula import tex as formula_tex
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.markup.tex import Accent, Frac, Group, Matrix, Node, Scripts, Sqrt, Sym
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

# ---------------------------------------------------------------------------------------------
# Maths
# ---------------------------------------------------------------------------------------------

_MATH_ESCAPE = str.maketrans({ch: "\\" + ch for ch in '\\/,;^_&$#"()[]{}@~'})
_MATH_SPACES = {" ": "thin", "  ": "quad", "    ": "wide"}
_ACCENTS = {"hat": "hat", "bar": "overline", "tilde": "tilde", "vec": "arrow"}


@lru_cache(maxsize=16384)
def math(formula: markup.Math) -> str:
    """One formula as a Typst equation, inline or displayed, with its spoken form as its
    alternative text (`math_speech`: what a screen reader says of the tagged PDF's /Formula, and
    what PDF/UA asks of every formula)."""
    from attnquiz.engine.markup.speech import speech

    body = _node(formula.tree, formula.display)
    alt = _string(speech(formula) or formula.source.strip() or "formula")
    block = "true" if formula.display else "false"
    # A call in markup: the text after it is escaped (`escape`), so nothing can continue the call.
    return f"#math.equation(block: {block}, alt: {alt}, $ {body} $.body)"


def _string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + escaped + '"'


def _node(node: Node, display: bool) -> str:
    if isinstance(node, Sym):
        return _sym(node)
    if isinstance(node, Group):
        if len(node.items) == 1 and isinstance(node.items[0], Sym) and node.items[0].text == ",":
            return 'class("normal", \\,)'  # TeX's {,}: a comma with no space after it
        parts = [p for p in (_node(item, display) for item in node.items) if p]
        return " ".join(parts) if parts else '""'
    if isinstance(node, Scripts):
        args = [_arg(node.base, display)]
        if node.sub is not None:
            args.append("b: " + _arg(node.sub, display))
        if node.sup is not None:
            args.append("t: " + _arg(node.sup, display))
        return f"attach({', '.join(args)})"
    if isinstance(node, Frac):
        return f"frac({_arg(node.num, display)}, {_arg(node.den, display)})"
    if isinstance(node, Sqrt):
        if node.index is None:
            return f"sqrt({_arg(node.body, display)})"
        return f"root({_arg(node.index, display)}, {_arg(node.body, display)})"
    if isinstance(node, Accent):
        return f"{_ACCENTS[node.name]}({_arg(node.body, display)})"
    return _matrix(node, display)


def _arg(node: Node, display: bool) -> str:
    """A node as one function argument (never empty, which Typst refuses)."""
    return _node(node, display) or '""'


def _sym(node: Sym) -> str:
    text = node.text
    if node.kind == "text":
        return _string(text)
    if node.kind == "func":
        return f"op({_string(text)})"
    if node.kind in {"ident", "number"}:
        if node.kind == "ident" and len(text) > 1:
            return f"italic({_string(text)})"
        return text.translate(_MATH_ESCAPE)
    if text in _MATH_SPACES:
        return _MATH_SPACES[text]
    if text == "ᵀ":
        return "top"
    if text == "Σ":
        return "sum"  # \sum is read as the letter Σ; Typst's sum is the large operator
    return text.translate(_MATH_ESCAPE)


def _matrix(node: Matrix, display: bool) -> str:
    rows = "; ".join(", ".join(_arg(cell, True) for cell in row) for row in node.rows)
    delim = _string(node.left) if node.left else "#none"
    body = f"mat(delim: {delim}, {rows})"
    # Inline, Typst would shrink the entries to script size; TeX keeps them at text size.
    return body if display else f"display({body})"


# ---------------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------------

# `(` too: right after `#strong[...]`, `#raw(...)` or a formula's `#math.equation(...)` it would read
# as more arguments, and a `;` there would end the call and vanish.
_TEXT_ESCAPE = str.maketrans({ch: "\\" + ch for ch in "\\#$*_`<>@[]()~/=+-.;"})


def escape(text: str) -> str:
    """Plain text as Typst markup that shows exactly that text."""
    # A word joiner between hyphens stops the font from setting `--` as an en dash (--original).
    text = text.replace("\n", " ").replace("--", "-\u2060-")
    return text.translate(_TEXT_ESCAPE)


def _inlines(nodes: Iterable[md.Inline]) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, md.Plain):
            out.append(escape(node.text))
        elif isinstance(node, md.Strong):
            out.append(f"#strong[{_inlines(node.children)}]")
        elif isinstance(node, md.Emph):
            out.append(f"#emph[{_inlines(node.children)}]")
        elif isinstance(node, md.Code):
            out.append(f"#raw({_string(node.text)})")
        else:
            out.append(math(node.math))
    return "".join(out)


def content(source: str) -> str:
    """Markdown with TeX maths as Typst markup, one paragraph, list, table, code block or image per block."""
    return _content(source, images.current_folder())


@lru_cache(maxsize=8192)
def _content(source: str, folder: str) -> str:
    del folder  # part of the cache key: an image path means another file in another bank's folder
    out: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            out.append(_inlines(block.inlines))
        elif isinstance(block, md.ListBlock):
            marker = "+ " if block.ordered else "- "
            out.append("\n".join(marker + _inlines(item) for item in block.items))
        else:
            out.append(block_typst(block))
    return "\n\n".join(out)


IMAGE_FOLDER = "quiz-images"
"""The folder of the compiler's root where the images a source shows are given to Typst."""
_IMAGE_BYTES: dict[str, bytes] = {}
"""Every image a source of this process has shown, by its file name (the content's digest): the
compiler gets the ones its source names (`image_files`)."""
_IMAGE_PATH = re.compile(f'"/{IMAGE_FOLDER}/([A-Za-z0-9._-]+)"')
_TYPST_ALIGN = {"left": "left", "center": "center", "right": "right", "": "auto"}


def block_typst(block: md.Table | md.CodeBlock | md.Image) -> str:
    """A table, a code block or an image as one Typst expression (on one line, so it also fits in a
    list item)."""
    if isinstance(block, md.Table):
        columns = len(block.header)
        align = ", ".join(_TYPST_ALIGN[how] for how in block.align)
        header = ", ".join(f"[*{_inlines(cell)}*]" if cell else "[]" for cell in block.header)
        cells = ", ".join(f"[{_inlines(cell)}]" for row in block.rows for cell in row)
        return (
            f"#block(breakable: false, table(columns: {columns}, align: ({align},), inset: (x: 6pt, y: 3pt), "
            f"stroke: 0.5pt + luma(150), table.header({header}), {cells}))"
        )
    if isinstance(block, md.CodeBlock):
        language = re.sub(r"[^A-Za-z0-9_+-]", "", block.language)
        lang = f"lang: {_string(language)}, " if language else ""
        return (
            "#block(fill: luma(246), stroke: 0.5pt + luma(200), inset: 6pt, radius: 2pt, width: 100%, "
            f"breakable: false, raw(block: true, {lang}{_code_text(block.text)}))"
        )
    try:
        image = images.resolve(block.src)
    except images.ImageError as exc:
        return f"#emph[{escape(f'[image: {block.alt or block.src}] ({exc})')}]"
    _IMAGE_BYTES.setdefault(image.name, image.data)
    shown = (
        f'image("/{IMAGE_FOLDER}/{image.name}", alt: {_string(block.alt)}, '
        f'fit: "contain", width: {_image_width(block.width)}, height: auto)'
    )
    if not block.alt.strip():  # no alternative text: decoration, which a screen reader skips (an artifact)
        shown = f"pdf.artifact({shown})"
    return f"#block(breakable: false, {shown})"


def _image_width(width: str) -> str:
    """An image's width in Typst (the Markdown's ``{width=5cm}`` and Typst share their units); the
    file's own size, within the text's width, when none is given."""
    return width if md.IMAGE_WIDTH.match(width) else "auto"


def _code_text(text: str) -> str:
    """Code as a one-line Typst string: newlines and tabs as escapes, other control characters as
    visible ``\\xNN`` (Typst refuses them, and a terminal sequence has no place on paper)."""
    out: list[str] = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch < " " or "\x7f" <= ch <= "\x9f":
            out.append(f"\\\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def image_files(source: str) -> dict[str, bytes]:
    """The image files a Typst source of this module shows, by name, for the compiler's root folder
    ``/{IMAGE_FOLDER}/``."""
    if f"/{IMAGE_FOLDER}/" not in source:
        return {}
    return {name: _IMAGE_BYTES[name] for name in _IMAGE_PATH.findall(source) if name in _IMAGE_BYTES}


def _bracket(text: str) -> str:
    """Typst content ``[...]`` holding markup (blank lines inside keep the paragraphs apart)."""
    return f"[{text}]"


# ---------------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------------

_PREAMBLE = r"""#set document(title: TITLE, author: "quiz", date: none)
#let sheet-label = state("sheet-label", [])
#set page(
  paper: PAPER,
  margin: (x: 20mm, top: 18mm, bottom: 22mm),
  footer: context {
    set text(size: 8pt, fill: luma(90))
    sheet-label.get()
    h(1fr)
    [page #counter(page).display()]
  },
)
#set text(font: "New Computer Modern", size: 11pt, lang: "en", hyphenate: false)
#set par(justify: false, leading: 0.62em, spacing: 0.9em)
#show math.equation: set text(font: "New Computer Modern Math")
// Headings tag the sheet's and each question's title for a screen reader (the tagged PDF's H1, H2);
// each is drawn as its body, where it stands, as that text was before it was a heading.
// (Typst sets a heading's text larger and bold before any show rule: undone here.)
#show heading: it => it.body
#show heading.where(level: 1): set text(size: 1em / 1.4, weight: "regular")
#show heading.where(level: 2): set text(size: 1em / 1.2, weight: "regular")
#show raw: set text(font: "DejaVu Sans Mono", size: 0.9em)
#set enum(spacing: 0.7em)
#let code(c) = text(font: "DejaVu Sans Mono", size: 0.95em, c)
#let start-sheet(label) = {
  pagebreak(weak: true)
  sheet-label.update(label)
  counter(page).update(1)
}
#let sheet-head(title, subtitle, student, code-text, name: true) = {
  grid(
    columns: (1fr, auto),
    gutter: 6pt,
    [#heading(level: 1, text(size: 13pt, weight: "bold", title)) \ #text(fill: luma(70), subtitle)],
    if student == none { [] } else {
      align(right)[Student #text(weight: "bold", student) \ Variant #code(code-text)]
    },
  )
  if name {
    v(4pt)
    [Name: #box(width: 9cm, stroke: (bottom: 0.5pt), outset: (bottom: 2pt))[]]
  }
  v(2pt)
  line(length: 100%, stroke: 0.8pt)
  v(4pt)
}
#let question(number, source, body) = block(breakable: false, width: 100%, above: 1.4em)[
  #heading(level: 2)[#text(weight: "bold")[Question #number] #h(0.6em)
    #text(size: 9pt, fill: luma(80), source)]
  #v(-2pt)
  #body
]
#let instructions(t) = text(size: 9.5pt, style: "italic", fill: luma(60), t)
#let box-label(t) = text(size: 8pt, fill: luma(120), t)
#let answer-box(working, height) = block(
  width: 100%, stroke: 0.5pt + luma(150), radius: 2pt, inset: 5pt, above: 0.7em, breakable: false,
  {
    if working > 0cm {
      block(width: 100%, height: working, above: 0pt, below: 4pt, box-label[Working])
      line(length: 100%, stroke: (paint: luma(170), thickness: 0.4pt, dash: "dashed"))
    }
    block(width: 100%, height: height, above: 4pt, below: 0pt, box-label[Answer])
  },
)
// A student's answers in the brief key: a table that may continue in the next column or page,
// repeating the student's heading there, so no answer is ever pushed off the page.
#let brief-answers(heading, ..cells) = block(above: 1.5em, below: 0.4em, breakable: true, table(
  columns: (auto, 1fr, auto),
  stroke: none,
  inset: (x: 2pt, y: 1.7pt),
  align: (right, left, right),
  table.header(repeat: true, table.cell(colspan: 3, align: left, inset: (x: 0pt, bottom: 4pt), heading)),
  ..cells.pos(),
))
// A concept question's answer space: ruled lines to write on.
#let ruled(n) = block(width: 100%, above: 0.7em, breakable: false, {
  box-label[Answer]
  for _ in range(n) {
    v(0.78cm, weak: false)
    line(length: 100%, stroke: 0.4pt + luma(150))
  }
})
#let tick = box(width: 0.75em, height: 0.75em, stroke: 0.6pt, baseline: 0.1em)
#let bubble = box(width: 0.8em, height: 0.8em, stroke: 0.6pt, radius: 50%, baseline: 0.1em)
// A choice question's options, each with the mark to make: a bubble (one answer) or a box (several).
#let options(mark, ..items) = grid(
  columns: (auto, auto, 1fr),
  column-gutter: 0.5em,
  row-gutter: 0.7em,
  ..items.pos().enumerate().map(((i, body)) => (mark, strong(numbering("A.", i + 1)), body)).flatten()
)
"""


def _preamble(title: str, paper: Paper) -> str:
    return _PREAMBLE.replace("TITLE", _string(title)).replace("PAPER", _string(paper))


def figures(question: Question, where: str) -> list[str]:
    """The variant's figures that belong ``where`` ("prompt" or "solution"), drawn in Typst."""
    drawn = [f for f in question.variant.figures if f.where == where]
    if not drawn:
        return []
    from attnquiz.engine.export.figures.typst import figure

    return [figure(f, figure_text) for f in drawn]


def figure_text(text: str) -> str:
    """A figure's title, label, legend or caption as Typst content: its maths typeset as a prompt's
    is, the rest escaped."""
    from attnquiz.engine.figures import segments

    return _bracket("".join(escape(s) if isinstance(s, str) else math(s) for s in segments(text)))


def _options(answer: ChoiceAnswer) -> str:
    """A choice question's options: round bubbles for a single choice, boxes to tick for several."""
    kind = "tick" if answer.multiple else "bubble"
    return f"#options({kind}, " + ", ".join(_bracket(content(o.text)) for o in answer.options) + ")"


def _instructions(answer: Answer) -> str:
    return f"#instructions[{_inlines_of(sheet_instructions(answer))}]"


def _question_in_parts(number: int, question: Question) -> str:
    """A question in parts: the stem once, how the parts are marked, then each part (with its
    weight) and its own answer box."""
    assert isinstance(question.answer, PartsAnswer)
    body = [content(question.variant.stem), *figures(question, "prompt")]
    body.append(f"#instructions[{_inlines_of(parts_instructions(question.answer))}]")
    for part in question.variant.parts:
        body.append(content(f"{part_label(part)} {part.prompt}"))
        body.append(_instructions(part.answer))
        if isinstance(part.answer, ChoiceAnswer):
            body.append(_options(part.answer))
        else:
            body.append(f"#answer-box({working_space(part.answer)}, {answer_space(part.answer)})")
    if question.student_note:
        body.append(f"#text(size: 9pt, fill: luma(80))[{escape('Note: ' + question.student_note)}]")
    return f"#question({number}, {_string(question.source)})[\n" + "\n\n".join(body) + "\n]\n"


@images.in_question_folder
def _question(number: int, question: Question) -> str:
    if question.variant.parts:
        return _question_in_parts(number, question)
    answer = question.answer
    body = [content(question.variant.prompt), *figures(question, "prompt")]
    body.append(_instructions(answer))  # before the options: what to do, then what to choose from
    if isinstance(answer, ChoiceAnswer):
        body.append(_options(answer))
    if question.student_note:  # a worksheet is for students: never the instructors' note
        body.append(f"#text(size: 9pt, fill: luma(80))[{escape('Note: ' + question.student_note)}]")
    if isinstance(answer, ExplainAnswer):
        body.append(f"#ruled({ruled_lines(answer)})")
    elif not isinstance(answer, ChoiceAnswer):
        body.append(f"#answer-box({working_space(answer)}, {answer_space(answer)})")
    return f"#question({number}, {_string(question.source)})[\n" + "\n\n".join(body) + "\n]\n"


def _label(plan: ClassPlan, sheet: Sheet) -> str:
    if plan.original:
        return _bracket(escape(f"{plan.bank} · past-paper questions"))
    return _bracket(
        escape(f"{plan.bank} · student {sheet.student} · variant ") + f"#code({_string(sheet.code)})"
    )


def worksheets(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4") -> str:
    """The Typst source of the worksheets of ``sheets`` (one section per student, page breaks between)."""
    subtitle = "Past-paper questions" if plan.original else "Practice worksheet"
    out = [_preamble(f"{plan.title}: worksheets", paper)]
    for sheet in sheets:
        out.append(f"#start-sheet({_label(plan, sheet)})")
        student = "none" if plan.original else _string(str(sheet.student))
        head = f"{_string(plan.title)}, {_string(subtitle)}, {student}, {_string(sheet.code)}"
        out.append(f"#sheet-head({head})")
        out.extend(_question(n, q) for n, q in enumerate(sheet.questions, 1))
    return "\n".join(out) + "\n"


@images.in_question_folder
def _concept_entry(number: int, question: Question, answer: ExplainAnswer) -> str:
    """A concept question in the full key: the model answer and the key points to mark by."""
    head = (
        f'#heading(level: 2)[#text(weight: "bold")[{number}.] #h(0.3em) {escape(question.item_id)} '
        f"#text(size: 9pt, fill: luma(80))[({escape(question.source)})]] #h(1fr) "
        f"#emph[{escape('Marked by hand')}]"
    )
    points = "\n".join(f"+ {_inlines_of(point)}" for point in answer.points)
    parts = [
        head,
        f"#pad(left: 1em)[#emph[Model answer:]\n\n{content(answer.value)}]",
        f"#pad(left: 1em)[#emph[{escape(key_points_heading(answer))}:]\n{points}\n]",
    ]
    steps = "\n".join(f"+ {_inlines_of(step)}" for step in question.variant.solution)
    if steps:
        parts.append(f"#pad(left: 1em)[\n{steps}\n]")
    parts.extend(f"#pad(left: 1em)[\n{drawn}]" for drawn in figures(question, "solution"))
    if question.instructor_note:
        note = escape("Note for instructors: " + question.instructor_note)
        parts.append(f"#pad(left: 1em)[#text(size: 9pt, fill: luma(80))[{note}]]")
    return "#block(breakable: false, width: 100%, above: 1.2em)[\n" + "\n\n".join(parts) + "\n]"


@images.in_question_folder
def _key_entry(number: int, question: Question, style: KeyStyle) -> str:
    answer = question.answer
    if isinstance(answer, ExplainAnswer):
        return _concept_entry(number, question, answer)
    head = (
        f'#heading(level: 2)[#text(weight: "bold")[{number}.] #h(0.3em) {escape(question.item_id)} '
        f"#text(size: 9pt, fill: luma(80))[({escape(question.source)})]] #h(1fr) "
        f'Answer: #text(weight: "bold")[{_answer(answer)}]'
    )
    parts = [head]
    steps = "\n".join(f"+ {_inlines_of(step)}" for step in question.variant.solution)
    if steps:
        parts.append(f"#pad(left: 1em)[\n{steps}\n]")
    parts.extend(f"#pad(left: 1em)[\n{drawn}]" for drawn in figures(question, "solution"))
    if question.instructor_note:  # the key is the instructor's: their note belongs here
        note = escape("Note for instructors: " + question.instructor_note)
        parts.append(f"#pad(left: 1em)[#text(size: 9pt, fill: luma(80))[{note}]]")
    if isinstance(answer, PartsAnswer) and answer.key_note():
        parts.append(f"#pad(left: 1em)[#text(size: 9pt, fill: luma(80))[{escape(answer.key_note())}]]")
    listed = question.variant.listed_mistakes()
    if listed:
        lines = "\n".join(
            f'- {escape(where)}#text(weight: "bold")[{_mistake(m, of)}] '
            f"#text(fill: luma(80))[({escape(m.tag)})]: {_inlines_of(m.feedback)}"
            for where, of, m in listed
        )
        parts.append("#pad(left: 1em)[#text(size: 9.5pt)[_Wrong answers to recognise:_\n" + lines + "\n]]")
    return "#block(breakable: false, width: 100%, above: 1.2em)[\n" + "\n\n".join(parts) + "\n]"


_NEGATIVE = re.compile(r"(?<![\w.])-(?=\.?\d)|(?<=\d[eE])-(?=\d)")  # -0.5, [-1, 2], 9.5e-07


def minus_signs(text: str) -> str:
    """A number's hyphen as the true minus sign print uses (−0.5, not -0.5); other hyphens stay."""
    return _NEGATIVE.sub("\u2212", text)


def _answer(answer: Answer) -> str:
    """An answer as a key shows it: a formula typeset and simplified, any other kind as its text
    (with true minus signs)."""
    if formula_tex.is_typeset(answer):
        return _inlines_of(formula_tex.answer_markup(answer))
    return escape(minus_signs(key_text(answer)))  # a later part also from the rounded earlier ones


def _mistake(mistake: Mistake, answer: Answer) -> str:
    """A listed mistake's value as a key shows it (a formula typeset, as in `_answer`)."""
    if formula_tex.is_typeset(answer):
        return _inlines_of(formula_tex.mistake_markup(mistake, answer))
    return escape(minus_signs(mistake.format(answer)))


def _inlines_of(source: str) -> str:
    """A solution step or feedback: its blocks run together on one line (it sits in a list item)."""
    return _inlines_in(source, images.current_folder())


@lru_cache(maxsize=8192)
def _inlines_in(source: str, folder: str) -> str:
    del folder  # part of the cache key, as for `_content`
    pieces: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            pieces.append(_inlines(block.inlines))
        elif isinstance(block, md.ListBlock):
            pieces.extend(_inlines(item) for item in block.items)
        else:
            pieces.append(block_typst(block))
    return " ".join(pieces)


_BRIEF_INLINE = 18  # characters: a longer answer gets a row of its own under its item id


def _brief_cells(number: int, question: Question) -> str:
    """One question's cells in the brief key's table: number, item id, answer (or the answer below).

    A concept question shows its key points, numbered on one line (a mark each), under its item id.
    """
    if isinstance(question.answer, ExplainAnswer):
        points = " ".join(
            f"#strong[{n}.] {_inlines_of(point)}" for n, point in enumerate(question.answer.points, 1)
        )
        item = f"[{escape(question.item_id)} #emph[(by hand)]]"
        points_cell = f"table.cell(colspan: 2, text(size: 0.9em)[{points}])"
        return f"[{number}.], table.cell(colspan: 2, {item}), [], {points_cell},"
    shown = key_text(question.answer)  # with a later part from the rounded earlier ones, where it differs
    answer = f'text(weight: "bold")[{_answer(question.answer)}]'
    item = f"[{escape(question.item_id)}]"
    if len(shown) <= _BRIEF_INLINE:
        return f"[{number}.], {item}, {answer},"
    # The answer's row never breaks: a matrix split across two columns reads as two answers.
    whole = f"table.cell(colspan: 2, breakable: false, {answer})"
    return f"[{number}.], table.cell(colspan: 2, {item}), [], {whole},"


GRID_COLUMNS = 8  # question columns per table of the marking grid: what fits across a landscape page


def grid(
    plan: ClassPlan,
    sheets: Iterable[Sheet],
    paper: Paper = "a4",
    *,
    first_page: int = 1,
    key_points: bool = True,
) -> str:
    """The Typst source of the marking grid: a student a row, a question a column, each expected answer.

    Landscape, small type; the questions run in tables of `GRID_COLUMNS` columns, one after the
    other, each headed on every page by the question numbers and item ids, each row starting with
    the student's number and variant code, so a stack of sheets is marked by running down a column.
    """
    chosen = list(sheets)
    seed = "past-paper questions" if plan.original else f"master seed {plan.master_seed}"
    out = [
        _preamble(f"{plan.title}: marking grid", paper),
        "#set page(flipped: true, margin: (x: 12mm, top: 12mm, bottom: 22mm))",
        "#set text(size: 8pt)",
        "#set table.cell(breakable: false)",  # a row never splits across pages: an answer stays whole
        f"#sheet-label.update[{escape(plan.bank + ' · marking grid')}]",
        *_first_page(first_page),
    ]
    first, last = (chosen[0].student, chosen[-1].student) if chosen else (0, 0)
    title = escape(f"{plan.title} — marking grid ({seed}), students {first}–{last}")
    for start in range(0, len(plan.items), GRID_COLUMNS):
        columns = range(start, min(start + GRID_COLUMNS, len(plan.items)))
        head = ["[*Student*]", "[*Variant*]"] + [
            f"[*{n + 1}* #linebreak() #text(size: 6.5pt, fill: luma(80))[{escape(plan.items[n])}]]"
            for n in columns
        ]
        rows = []
        for sheet in chosen:
            cells = [f"[{sheet.student}]", f"code({_string(sheet.code)})"]
            cells += [_grid_cell(sheet.questions[n]) for n in columns]
            rows.append(", ".join(cells) + ",")
        questions = f"questions {columns[0] + 1}–{columns[-1] + 1} of {len(plan.items)}"
        out.append(
            # sticky: the heading goes to the next page with its table, never alone at a page's foot
            "#block(breakable: true, sticky: true, above: 0pt, below: 5pt)"
            f'[#heading(level: 1, text(size: 10pt, weight: "bold")[{title}'
            f" · {escape(questions)}])]\n"
            f"#table(columns: (auto, auto, {', '.join(['1fr'] * len(columns))}), inset: (x: 3pt, y: 2.5pt),\n"
            "  stroke: 0.4pt + luma(160), fill: (x, y) => if y > 0 and calc.even(y) { luma(240) },\n"
            f"  table.header({', '.join(head)}),\n" + "\n".join(rows) + "\n)\n#v(10pt)"
        )
    if key_points:  # once, at the end of the grid: a piece before the last leaves them out
        out.extend(_grid_key_points(plan, chosen))
    return "\n".join(out) + "\n"


GRID_BY_HAND = "by hand: key points at the end"


def _grid_cell(question: Question) -> str:
    """A question's cell in the marking grid: its expected answer, or where a concept question's key
    points are (they are the same for every student, so they are listed once after the tables)."""
    if isinstance(question.answer, ExplainAnswer):
        return f"[#emph[{escape(GRID_BY_HAND)}]]"
    return f"[{_answer(question.answer)}]"


def _grid_key_points(plan: ClassPlan, sheets: list[Sheet]) -> list[str]:
    """After the marking grid: each concept question's key points, once per question (and once per
    distinct set, should a generator vary them between students)."""
    out: list[str] = []
    for position, item in enumerate(plan.items):
        seen: list[tuple[str, ...]] = []
        for sheet in sheets:
            answer = sheet.questions[position].answer
            if isinstance(answer, ExplainAnswer) and answer.points not in seen:
                seen.append(answer.points)
        for points in seen:
            listed = "\n".join(f"+ {_inlines_of(point)}" for point in points)
            heading = escape(f"Question {position + 1}, {item}: {len(points)} key points, a mark each")
            out.append(
                "#block(breakable: false, above: 0.8em)"
                f'[#heading(level: 2, text(size: 9pt, weight: "bold")[{heading}])\n'
                f"#set text(size: 8.5pt)\n{listed}\n]"
            )
    if out:
        out.insert(
            0,
            "#block(above: 1em, sticky: true)"
            '[#heading(level: 1, text(size: 10pt, weight: "bold")[Concept questions: key points])]',
        )
    return out


def _first_page(number: int) -> list[str]:
    """The page counter set for a piece of a document numbered through (`pdf.Document.continuous`)."""
    return [] if number == 1 else [f"#counter(page).update({int(number)})"]


def key(
    plan: ClassPlan,
    sheets: Iterable[Sheet],
    paper: Paper = "a4",
    style: KeyStyle = "full",
    *,
    first_page: int = 1,
    last: bool = True,
) -> str:
    """The Typst source of the answer key: per student and variant code, each answer (and solution);
    in the ``grid`` style, the marking grid (`grid`). ``first_page`` numbers the first page of a
    grid or a brief key made in pieces (a full key numbers each student's pages from 1); ``last``:
    whether these are the key's last students (the grid lists the concept questions' key points,
    the same for every student, once, after them)."""
    if style == "grid":
        return grid(plan, sheets, paper, first_page=first_page, key_points=last)
    out = [_preamble(f"{plan.title}: answer key", paper)]
    seed = "past-paper questions" if plan.original else f"master seed {plan.master_seed}"
    intro = escape(f"{plan.title} — answer key ({seed})")
    if style == "brief":
        out.append(f"#sheet-label.update[{escape(plan.bank + ' · answer key')}]")
        out.extend(_first_page(first_page))
        out.append(
            f'#heading(level: 1, text(size: 13pt, weight: "bold")[{intro}])\n'
            "#line(length: 100%, stroke: 0.8pt)"
        )
        out.append("#show: columns.with(2, gutter: 8mm)")
    for sheet in sheets:
        heading = escape(f"Student {sheet.student} · variant ") + f"#code({_string(sheet.code)})"
        if style == "full":
            out.append(f"#start-sheet({_label(plan, sheet)})")
            out.append(f"#text(size: 9pt, fill: luma(80))[{intro}]\n")
            out.append(
                f'#heading(level: 1, text(size: 13pt, weight: "bold")[{heading}])\n'
                "#line(length: 100%, stroke: 0.5pt)"
            )
            out.extend(_key_entry(n, q, style) for n, q in enumerate(sheet.questions, 1))
        else:
            # Several students share a page; a long list continues in the next column, headed again.
            cells = "\n".join(_brief_cells(n, q) for n, q in enumerate(sheet.questions, 1))
            out.append(f'#brief-answers(heading(level: 2, text(weight: "bold")[{heading}]),\n{cells}\n)')
    return "\n".join(out) + "\n"


__all__ = ["GRID_COLUMNS", "content", "escape", "grid", "key", "math", "worksheets"]
