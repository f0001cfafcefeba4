"""Markdown worksheets and keys with TeX maths in ``$...$``, as Pandoc and R/exams users write them.

Prompts are Markdown with TeX maths; they are written back from the same parsed tree the other
renderers use (`attnquiz.engine.markup.markdown`), so only the supported subset comes out (bold,
italic, code, lists, maths) and everything else in bank text is escaped: raw HTML, links
(``[x](javascript:…)``, ``<javascript:…>``) and entities show as the characters they are. Every
formula is rewritten from its parsed source with tight dollars (``$x$``, never ``$ x $``), which
is what Pandoc's ``tex_math_dollars`` needs to see maths. Students are separated by
``\\newpage``, which Pandoc passes to LaTeX (a page break in the PDF) and drops elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from urllib.parse import quote

from attnquiz.engine.answers.kinds import ChoiceAnswer, ExplainAnswer, PartsAnswer
from attnquiz.engine.bank import images
from attnquiz.engine.export.text.text_document import TextDocument, as_text
from attnquiz.engine.formula import tex as formula_tex
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.plan.class_plan import (
    ClassPlan,
    KeyStyle,
    Sheet,
    key_points_heading,
    part_label,
    parts_instructions,
    ruled_lines,
    sheet_instructions,
)
from attnquiz.engine.variant import Question

_RULE = "_" * 32
# A ruled line to write on: escaped underscores (a line of bare ones would be a horizontal rule).
_WRITING_LINE = "\\_" * 60
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


escape = markup.escape_markdown  # plain text as Markdown that shows exactly that text


# What a Markdown reader without maths would take for markup inside a formula's TeX: ``<`` before
# a letter, ``/``, ``!`` or ``?`` opens raw HTML or an autolink, ``&`` before a letter or ``#`` an
# entity, ``](`` a link. A space after each changes nothing in TeX's maths mode (spaces are
# ignored there) and makes none of them markup.
_ACTIVE_IN_MATH = re.compile(r"[<&](?=[A-Za-z/!?#])|\](?=\()")


def _formula(formula: markup.Math) -> str:
    source = _ACTIVE_IN_MATH.sub(lambda m: m.group(0) + " ", formula.source.strip())
    return f"$${source}$$" if formula.display else f"${source}$"


def _code(text: str) -> str:
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _inlines(nodes: Iterable[md.Inline]) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, md.Plain):
            out.append(escape(node.text))
        elif isinstance(node, md.Strong):
            out.append(f"**{_inlines(node.children)}**")
        elif isinstance(node, md.Emph):
            out.append(f"*{_inlines(node.children)}*")
        elif isinstance(node, md.Code):
            out.append(_code(node.text))
        else:
            out.append(_formula(node.math))
    return "".join(out)


def tex(text: str) -> str:
    """Prompt text as Markdown in the supported subset: formulas with tight dollars, the rest escaped."""
    out: list[str] = []
    for block in md.blocks(text):
        if isinstance(block, md.Paragraph):
            out.append(_inlines(block.inlines))
        elif isinstance(block, md.ListBlock):
            out.append(
                "\n".join(
                    (f"{n}. " if block.ordered else "- ") + _inlines(item)
                    for n, item in enumerate(block.items, 1)
                )
            )
        else:
            out.append(block_markdown(block))
    return "\n\n".join(out)


_ALIGN_ROW = {"left": ":---", "center": ":---:", "right": "---:", "": "---"}


def block_markdown(block: md.Table | md.CodeBlock | md.Image) -> str:
    """A table, a code block or an image written back as Markdown (cells escaped, the code in a fence
    longer than any run of backticks inside it, the image by its path relative to the bank)."""
    if isinstance(block, md.Table):

        def row(cells: Iterable[tuple[md.Inline, ...]]) -> str:
            return "| " + " | ".join(_inlines(cell).replace("\n", " ") for cell in cells) + " |"

        rule = "| " + " | ".join(_ALIGN_ROW[how] for how in block.align) + " |"
        return "\n".join([row(block.header), rule, *(row(cells) for cells in block.rows)])
    if isinstance(block, md.CodeBlock):
        longest = max((len(run) for run in re.findall(r"`+", block.text)), default=0)
        fence = "`" * max(3, longest + 1)
        language = re.sub(r"[^A-Za-z0-9_+-]", "", block.language)
        return f"{fence}{language}\n{block.text}\n{fence}"
    try:
        images.check_src(block.src)
    except images.ImageError:
        return escape(f"[image: {block.alt or block.src}]")
    width = f"{{width={block.width}}}" if md.IMAGE_WIDTH.match(block.width) else ""
    # The path percent-encoded (a reader decodes it to the file's name): no quote, space, bracket
    # or backtick of a hostile file name can end the link or start markup.
    return f"![{escape(block.alt)}]({quote(block.src, safe='/._-~')}){width}"


def _one_line(text: str) -> str:
    """Text for a list item: its paragraphs joined, so the item stays one item (a table, code
    block or image keeps its lines, indented under the item)."""
    if any(isinstance(b, md.Table | md.CodeBlock | md.Image) for b in md.blocks(text)):
        first, *rest = tex(text).split("\n")
        return "\n".join([first, *("    " + line if line.strip() else "" for line in rest)])
    return " ".join(line.strip() for line in tex(text).splitlines() if line.strip())


def figures(question: Question, where: str, indent: str = "") -> list[str]:
    """The variant's figures that belong ``where`` ("prompt" or "solution") as Markdown tables."""
    drawn = [f for f in question.variant.figures if f.where == where]
    if not drawn:
        return []
    from attnquiz.engine.export.figures.markdown import figure

    return [figure(f, indent) for f in drawn]


def _options(answer: ChoiceAnswer) -> str:
    """A choice question's options: a circle to fill for a single choice, boxes to tick for several."""
    mark = "- [ ]" if answer.multiple else "- ○"
    return "\n".join(
        f"{mark} **{letter}.** {_one_line(option.text)}"
        for letter, option in zip(answer.letters, answer.options, strict=True)
    )


def _question_in_parts(number: int, question: Question) -> str:
    """A question in parts: the stem once, how the parts are marked, then each part (with its
    weight) and its own answer line."""
    assert isinstance(question.answer, PartsAnswer)
    out = [f"## Question {number} · {escape(question.source)}", tex(question.variant.stem).strip()]
    out.extend(figures(question, "prompt"))
    out.append(f"*{parts_instructions(question.answer)}*")
    for part in question.variant.parts:
        out.append(tex(f"{part_label(part)} {part.prompt}").strip())
        out.append(f"*{sheet_instructions(part.answer)}*")
        if isinstance(part.answer, ChoiceAnswer):
            out.append(_options(part.answer))
        else:
            out.append(f"Answer ({part.label}): {_RULE}")
    if question.student_note:
        out.append(f"Note: {escape(question.student_note)}")
    return "\n\n".join(out)


def _question(number: int, question: Question) -> str:
    if question.variant.parts:
        return _question_in_parts(number, question)
    answer = question.answer
    parts = [f"## Question {number} · {escape(question.source)}", tex(question.variant.prompt).strip()]
    parts.extend(figures(question, "prompt"))
    parts.append(f"*{sheet_instructions(answer)}*")  # before the options: what to do, then the choices
    if isinstance(answer, ChoiceAnswer):
        parts.append(_options(answer))
    if question.student_note:  # a worksheet is for students: never the instructors' note
        parts.append(f"Note: {escape(question.student_note)}")
    if isinstance(answer, ExplainAnswer):
        # One paragraph of ruled lines, each ended by a hard line break (a backslash).
        parts.append("Answer:\\\n" + "\\\n".join([_WRITING_LINE] * ruled_lines(answer)))
    elif not isinstance(answer, ChoiceAnswer):
        parts.append(f"Answer: {_RULE}")
    return "\n\n".join(parts)


def worksheets(plan: ClassPlan, sheets: Iterable[Sheet]) -> str:
    """The worksheets of ``sheets`` as one Markdown file (``\\newpage`` between students)."""
    return as_text(worksheet_document(plan), sheets)


def worksheet_document(plan: ClassPlan) -> TextDocument:
    """The worksheets as a document made sheet by sheet (see `attnquiz.engine.export.text.text_document`)."""
    subtitle = "Past-paper questions" if plan.original else "Practice worksheet"

    def sheet_blocks(index: int, sheet: Sheet) -> Iterator[str]:
        if index:
            yield "\\newpage"
        who = "" if plan.original else f" · **Student {sheet.student}** · variant `{sheet.code}`"
        yield f"# {escape(plan.title)}\n\n{subtitle}{who}\n\nName: {_RULE}"
        yield from (_question(n, q) for n, q in enumerate(sheet.questions, 1))

    return TextDocument("", "\n\n", sheet_blocks, suffix="\n")


def _concept_entry(number: int, question: Question, answer: ExplainAnswer) -> str:
    """A concept question in the full key: the model answer and the key points to mark by."""
    lines = [
        f"{number}. **{escape(question.item_id)}** ({escape(question.source)}): *marked by hand*",
        "",
        "    *Model answer:*",
        "",
        *(f"    {line}" if line else "" for line in tex(answer.value).splitlines()),
        "",
        f"    *{escape(key_points_heading(answer))}:*",
        "",
    ]
    lines.extend(f"    {n}. {_one_line(point)}" for n, point in enumerate(answer.points, 1))
    if question.variant.solution:
        lines.append("")
        lines.extend(f"    - {_one_line(step)}" for step in question.variant.solution)
    for drawn in figures(question, "solution", "    "):
        lines.extend(["", drawn])
    if question.instructor_note:
        lines.extend(["", f"    *Note for instructors:* {escape(question.instructor_note)}"])
    return "\n".join(lines)


def _brief_answer(question: Question) -> str:
    """A question's answer in the brief key's table: the answer, or a concept question's key points."""
    answer = question.answer
    if isinstance(answer, ExplainAnswer):
        points = " ".join(f"**{n}.** {_one_line(p)}" for n, p in enumerate(answer.points, 1))
        return _UNESCAPED_PIPE.sub(r"\\|", f"*by hand:* {points}")  # a pipe in maths would end the cell
    return formula_tex.answer_markup(answer)


def _key_entry(number: int, question: Question) -> str:
    answer = question.answer
    if isinstance(answer, ExplainAnswer):
        return _concept_entry(number, question, answer)
    lines = [
        f"{number}. **{escape(question.item_id)}** ({escape(question.source)}): "
        f"**{formula_tex.answer_markup(answer)}**"
    ]
    lines.extend(f"    {n}. {_one_line(step)}" for n, step in enumerate(question.variant.solution, 1))
    for drawn in figures(question, "solution", "    "):
        lines.extend(["", drawn])
    if question.instructor_note:  # the key is the instructor's: their note belongs here
        lines.extend(["", f"    *Note for instructors:* {escape(question.instructor_note)}"])
    if isinstance(answer, PartsAnswer) and answer.key_note():
        lines.extend(["", f"    *{escape(answer.key_note())}*"])
    listed = question.variant.listed_mistakes()
    if listed:
        lines.append("")
        lines.append("    *Wrong answers to recognise:*")
        lines.append("")
        lines.extend(
            f"    - {where}**{formula_tex.mistake_markup(m, of)}** ({escape(m.tag)}): {_one_line(m.feedback)}"
            for where, of, m in listed
        )
    return "\n".join(lines)


def key(plan: ClassPlan, sheets: Iterable[Sheet], style: KeyStyle = "full") -> str:
    """The answer key of ``sheets``: per student and variant code, answers (and worked solutions)."""
    return as_text(key_document(plan, style), sheets)


def key_document(plan: ClassPlan, style: KeyStyle = "full") -> TextDocument:
    """The answer key as a document made sheet by sheet (see `attnquiz.engine.export.text.text_document`)."""
    seed = "past-paper questions" if plan.original else f"master seed {plan.master_seed}"

    def sheet_blocks(index: int, sheet: Sheet) -> Iterator[str]:
        heading = f"## Student {sheet.student} · variant `{sheet.code}`"
        if style == "brief":
            rows = "\n".join(
                f"| {n} | {escape(q.item_id)} | {_brief_answer(q)} |"
                for n, q in enumerate(sheet.questions, 1)
            )
            yield f"{heading}\n\n| # | item | answer |\n|---:|---|---|\n{rows}"
            return
        if index:
            yield "\\newpage"
        yield heading
        yield "\n\n".join(_key_entry(n, q) for n, q in enumerate(sheet.questions, 1))

    title = f"# {escape(plan.title)}: answer key\n\n{seed}"
    return TextDocument("", "\n\n", sheet_blocks, head=[title], suffix="\n")


__all__ = ["escape", "key", "key_document", "tex", "worksheet_document", "worksheets"]
