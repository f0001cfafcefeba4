"""What the LMS formats share: HTML with TeX for MathJax, question names, and the scoring checks.

Moodle and Canvas both typeset maths with MathJax, which reads TeX between ``\\(...\\)`` and
``\\[...\\]``. Each formula is written from its parsed source (checked against the subset), inside
HTML built from the same Markdown tree the other renderers use.
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache
from html import escape
from typing import Protocol

from attnquiz.engine.answers.kinds import (
    Answer,
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    ShapeAnswer,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank import images
from attnquiz.engine.export.figures import table as figure_table
from attnquiz.engine.export.text.html import table_html
from attnquiz.engine.figures import Figure, plain
from attnquiz.engine.formula import tex as formula_tex
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import speech as math_speech
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.variant import Question


# Bank text written for the platforms' own parsers, which read the stored HTML before any browser
# does: Moodle's cloze parser finds {1:SHORTANSWER:...} anywhere in a cloze question's text (maths
# included), its filters {mlang ...} and {GENERICO:...}; Canvas puts a blank at every [e1]; STACK
# runs [[...]] and {@...@}. A character reference shows the same in the browser (and to MathJax,
# which reads the decoded page) and is none of these.
def _out_of_platform_syntax(html: str) -> str:
    """``html`` with every ``{`` and ``[`` written as a character reference. (Two replaces: a
    translation table is looked up a character at a time: 3 % of a 300-student Moodle export.)"""
    return html.replace("{", "&#123;").replace("[", "&#91;")


NOT_MATH_CLASS = "tex2jax_ignore mathjax_ignore"
"""The classes MathJax 2 and 3 skip: on bank text that holds ``$`` or a backslash, whose ``$$...$$``
or backslash-parenthesis delimiters would otherwise be typeset as TeX that quiz never checked (its
own formulas are checked against the subset, and written by `tex_formula`)."""


def not_math(html: str, text: str) -> str:
    """``html``, the escaped form of bank ``text``, kept from MathJax when ``text`` could hold one
    of its delimiters."""
    return f'<span class="{NOT_MATH_CLASS}">{html}</span>' if "$" in text or "\\" in text else html


def _plain_html(text: str) -> str:
    return not_math(escape(text, quote=False), text)


def plain_html(text: str) -> str:
    """Bank text that is not Markdown (a note) as LMS HTML: escaped, out of every platform's syntax."""
    return _out_of_platform_syntax(_plain_html(text))


def _inlines(nodes: Iterable[md.Inline]) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, md.Plain):
            out.append(_plain_html(node.text))
        elif isinstance(node, md.Strong):
            out.append(f"<strong>{_inlines(node.children)}</strong>")
        elif isinstance(node, md.Emph):
            out.append(f"<em>{_inlines(node.children)}</em>")
        elif isinstance(node, md.Code):
            out.append(f"<code>{escape(node.text, quote=False)}</code>")
        else:
            out.append(tex_formula(node.math))
    return "".join(out)


SPOKEN_CLASS = "sr-only visually-hidden screenreader-only"
"""The classes of a formula's spoken form: the visually hidden class of Moodle's Bootstrap 4
themes (``sr-only``), of its Bootstrap 5 themes (``visually-hidden``) and of Canvas
(``screenreader-only``); both platforms keep ``class``. No inline CSS as well: Moodle's purifier
drops the properties that hide text (``position``, ``clip``, ``overflow``), and repeating it on
every formula doubled the size of an export."""


PLAIN_TEXT_IGNORED = "_html2text_ignore"
"""The class of a span that Moodle leaves out when it makes plain text of a question (its
html2text drops ``<span class="_html2text_ignore">...</span>``, exactly so written): the spoken form
is wrapped in one, so that a question's summary in Moodle's reports reads the TeX alone, not the
TeX and its words run together, while a screen reader still reads the words."""


def tex_formula(formula: markup.Math) -> str:
    """A formula as MathJax TeX, HTML-escaped (``\\(...\\)`` inline, ``\\[...\\]`` displayed),
    with its spoken form for screen readers (issue 31).

    The TeX is kept for the platform's MathJax, in a span hidden from assistive technology; beside
    it a visually hidden span says the formula in words (`math_speech`: "square root of d sub k"),
    the same text as the ``alttext`` of the HTML export's MathML. Moodle's HTML purifier and
    Canvas's sanitizer both keep spans and their classes (MathML, ``role`` and ``aria-label`` are
    not kept by every Moodle configuration), so a screen reader reads the words wherever the
    question is shown; where ``aria-hidden`` were dropped it would also read MathJax's own
    rendering, never nothing.
    """
    source = escape(formula.source.strip(), quote=False)
    tex = f"\\[{source}\\]" if formula.display else f"\\({source}\\)"
    said = escape(math_speech.speech(formula), quote=False)
    return (
        f'<span class="quiz-math"><span aria-hidden="true">{tex}</span>'
        f'<span class="{SPOKEN_CLASS}"><span class="{PLAIN_TEXT_IGNORED}">{said}</span></span></span>'
    )


def tex_html(source: str) -> str:
    """Markdown with TeX maths as HTML paragraphs, lists, tables, code and images, maths left as TeX
    for MathJax (an image as a file of the question: see `_placed_images`)."""
    return _placed_images(_tex_html(source, images.current_folder()))


@lru_cache(maxsize=8192)
def _tex_html(source: str, folder: str) -> str:
    del folder  # part of the cache key: an image path means another file in another bank's folder
    out: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            out.append(f"<p>{_inlines(block.inlines)}</p>")
        elif isinstance(block, md.ListBlock):
            tag = "ol" if block.ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_inlines(i)}</li>" for i in block.items) + f"</{tag}>")
        else:
            out.append(_block_html(block))
    return _out_of_platform_syntax("".join(out))


def tex_html_inline(source: str) -> str:
    """Like `tex_html`, without paragraph tags (for an option, a list item or a feedback line)."""
    return _placed_images(_tex_html_inline(source, images.current_folder()))


@lru_cache(maxsize=8192)
def _tex_html_inline(source: str, folder: str) -> str:
    del folder  # part of the cache key, as for `_tex_html`
    pieces: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            pieces.append(_inlines(block.inlines))
        elif isinstance(block, md.ListBlock):
            pieces.extend(_inlines(item) for item in block.items)
        else:
            pieces.append(_block_html(block))
    return _out_of_platform_syntax(" ".join(pieces))


_ALIGN_STYLE = {
    "left": "text-align: left; ",
    "center": "text-align: center; ",
    "right": "text-align: right; ",
    "": "",
}
_CELL = "border: 1px solid #999; padding: 2px 8px; "
_IMAGE_BYTES: dict[str, bytes] = {}
"""The bytes of every image file the HTML of this process has shown, by file name (its digest)."""
_IMAGE_MARK = re.compile(r'<img class="quiz-image" src="quiz-image:([A-Za-z0-9._-]+)"')


def _block_html(block: md.Table | md.CodeBlock | md.Image) -> str:
    """A table, code block or image as HTML an LMS keeps (inline styles: Moodle and Canvas strip
    ``<style>`` and classes they do not know)."""
    if isinstance(block, md.Table):
        return table_html(
            block,
            _inlines,
            lambda how: f' style="{_CELL}{_ALIGN_STYLE[how]}"',
            ' style="border-collapse: collapse"',
        )
    if isinstance(block, md.CodeBlock):
        # No TeX delimiters may stay in code: MathJax would typeset them; \( is written as a character
        # reference, which MathJax does not read as a delimiter and a browser shows as \(.
        code = escape(block.text, quote=False).replace("\\", "&#92;").replace("$", "&#36;")
        return f'<pre style="background: #f6f6f6; padding: 6px; overflow-x: auto"><code>{code}</code></pre>'
    try:
        image = images.resolve(block.src)
    except images.ImageError as exc:
        shown = f"[image: {block.alt or block.src}] ({exc})"
        return f"<p><em>{escape(shown, quote=False)}</em></p>"
    _IMAGE_BYTES.setdefault(image.name, image.data)
    return (
        f'<p><img class="quiz-image" src="quiz-image:{image.name}" alt="{escape(block.alt)}" '
        f'style="max-width: 100%{_width_style(block.width)}"></p>'
    )


def _width_style(width: str) -> str:
    """An image's width as CSS (after the max-width), or nothing for the file's own size."""
    return f"; width: {width}" if md.IMAGE_WIDTH.match(width) else ""


def _placed_images(html: str) -> str:
    """The HTML with each image's file placed: under `FILE_BASE`, and collected in `PACKED` when a
    package collects its files (a Moodle question embeds the files its text names: `image_files`)."""
    if "quiz-image:" not in html:
        return html
    base = FILE_BASE.get()
    packed = PACKED.get()

    def place(match: re.Match[str]) -> str:
        name = match.group(1)
        if packed is not None:
            packed[name] = _IMAGE_BYTES[name]
        return f'<img class="quiz-image" src="{escape(base + name)}"'

    return _IMAGE_MARK.sub(place, html)


def image_files(html: str) -> dict[str, bytes]:
    """The image files (name → bytes) that a piece of HTML of this module shows, under any `FILE_BASE`."""
    return {
        name: _IMAGE_BYTES[name]
        for name in re.findall(r'<img class="quiz-image" src="[^"]*?/([A-Za-z0-9._-]+)"', html)
        if name in _IMAGE_BYTES
    }


CODE_BY_HAND = (
    "Moodle does not run code: a teacher marks each code answer by hand (the reference solution and "
    "the named mistakes are the grader information); quiz answer and quiz run grade code in their sandbox"
)


def code_grader_html(question: Question, answer: CodeAnswer) -> str:
    """A code question's reference solution and named mistakes (what a grader marks a program by)."""
    mistakes = "".join(
        f"<li><strong>{escape(m.tag, quote=False)}</strong>: {tex_html_inline(m.feedback)}</li>"
        for m in question.variant.mistakes
    )
    return (
        f"<p><strong>Reference solution</strong> (any function that gives the same outputs, within a "
        f"relative 1e-4, is right):</p><pre><code>{escape(answer.reference, quote=False)}</code></pre>"
        + (f"<p><strong>Named mistakes</strong>:</p><ul>{mistakes}</ul>" if mistakes else "")
    )


def key_points_html(answer: ExplainAnswer) -> str:
    """A concept question's model answer and key points (its feedback, and what a grader marks by)."""
    n = len(answer.points)
    points = "".join(f"<li>{tex_html_inline(point)}</li>" for point in answer.points)
    return (
        f"<p><strong>Model answer:</strong></p>{tex_html(answer.value)}"
        f"<p><strong>Key points</strong> ({n}; each is worth 1/{n} of the mark):</p><ol>{points}</ol>"
    )


FILE_BASE: contextvars.ContextVar[str] = contextvars.ContextVar("FILE_BASE", default="@@PLUGINFILE@@/")
"""What the HTML of a question puts before the name of a file it shows (Moodle's own file area by
default; a QTI package sets the folder of its files)."""


class FileCollector(Protocol):
    """Where a package collects the files its questions show (a dict will do)."""

    def __setitem__(self, name: str, data: bytes, /) -> None: ...


PACKED: contextvars.ContextVar[FileCollector | None] = contextvars.ContextVar("PACKED", default=None)
"""Where a package collects the files its questions show (name → bytes), while it renders them."""


def figure_files(question: Question, where: str) -> list[tuple[str, bytes]]:
    """The variant's figures that belong ``where`` ("prompt" or "solution") as SVG files: (name, bytes).

    A name is the digest of the file, so that two figures never share a name and a figure shown
    twice (the same numbers) is stored once."""
    drawn = [f for f in question.variant.figures if f.where == where]
    if not drawn:
        return []
    return [_figure_file(figure) for figure in drawn]


_FIGURE_FILES: dict[int, tuple[Figure, tuple[str, bytes]]] = {}
"""The last figures' files, by the figure object's id (the figure kept with it, so that the id
stays its own): a question's figures are drawn for its HTML and again for the files the export
embeds beside it (`figures_html`, then the writer's `figure_files`)."""
_FIGURE_FILES_KEPT = 16


def _figure_file(figure: Figure) -> tuple[str, bytes]:
    """One figure's SVG file, (name, bytes), drawn once however often a question asks for it.
    By the object, not by value: figures equal as values (0.0 and -0.0) may be drawn apart."""
    found = _FIGURE_FILES.get(id(figure))
    if found is not None and found[0] is figure:
        return found[1]
    from attnquiz.engine.export.figures.svg import svg_file

    data = svg_file(figure)
    made = (f"figure-{hashlib.sha256(data).hexdigest()[:16]}.svg", data)
    if len(_FIGURE_FILES) >= _FIGURE_FILES_KEPT:
        _FIGURE_FILES.clear()
    _FIGURE_FILES[id(figure)] = (figure, made)
    return made


def figures_html(question: Question, where: str) -> str:
    """The variant's figures that belong ``where`` as ``<img>`` elements of their SVG files (under
    `FILE_BASE`; collected in `PACKED` when a package collects them), each with its caption."""
    html = ""
    packed = PACKED.get()
    drawn = [f for f in question.variant.figures if f.where == where]
    for figure, (name, data) in zip(drawn, figure_files(question, where), strict=True):
        if packed is not None:
            packed[name] = data
        alt = figure_table.alt_text(figure)
        html += (
            f'<p><img src="{escape(FILE_BASE.get() + name)}" alt="{escape(alt)}" style="max-width: 100%"></p>'
        )
        if figure.caption:
            html += f"<p><small>{escape(plain(figure.caption), quote=False)}</small></p>"
        html += figure_table.lms_html(figure)
    return html


def solution_html(question: Question) -> str:
    """The worked solution as an ordered list (the general feedback of an LMS question); for a concept
    question, the model answer and its key points (and the solution's steps, if it has any)."""
    steps = "".join(f"<li>{tex_html_inline(step)}</li>" for step in question.variant.solution)
    if isinstance(question.answer, ExplainAnswer):
        return key_points_html(question.answer) + (f"<ul>{steps}</ul>" if steps else "")
    if isinstance(question.answer, CodeAnswer):
        return code_grader_html(question, question.answer)
    if formula_tex.is_typeset(question.answer):  # a formula as a marker reads it: typeset, simplified
        answer = tex_html_inline(formula_tex.answer_markup(question.answer))
    else:
        answer = escape(question.answer.format(), quote=False)
    drawn = figures_html(question, "solution")
    return f"<p><strong>Answer:</strong> {answer}</p>" + (f"<ol>{steps}</ol>" if steps else "") + drawn


def instructions(answer: Answer) -> str:
    """What to enter, phrased for an LMS form (blanks per entry, ticks for choices)."""
    if isinstance(answer, ChoiceAnswer):
        return f"Select all that apply. {answer.scoring_rule()}" if answer.multiple else "Select one."
    if isinstance(answer, ExplainAnswer):
        from attnquiz.engine.plan.class_plan import concept_instructions

        return concept_instructions(answer)
    if isinstance(answer, CodeAnswer):
        return (
            f"Write the {answer.what} {answer.signature} in Python with {answer.library}, starting from "
            "the stub."
        )
    if isinstance(answer, IntegerAnswer):
        return f"{answer.instructions()} Write it in digits, not as a calculation."
    if isinstance(answer, NumericAnswer):
        return f"{answer.instructions()} {IN_DIGITS}"
    if isinstance(answer, ShapeAnswer):
        names = " or a name such as T" if answer.symbolic else ""
        return f"Give each dimension as a whole number in digits{names}, not as a calculation."
    return f"Give each entry {answer.tolerance.describe()}. {IN_DIGITS}"


IN_DIGITS = "Write numbers as decimals in digits, not as a fraction or a calculation."
"""What an LMS form reads as a number: its digits (quiz reads a calculation too; an LMS does not). No
example number: one could be the answer, or the calculation that gives it."""


def question_html(question: Question, asked: str | None = None) -> str:
    """The question text: prompt, what to enter (``asked``, or `instructions`), and the item's note."""
    html = tex_html(question.variant.prompt) + figures_html(question, "prompt")
    asked = asked if asked is not None else instructions(question.answer)
    html += f"<p><em>{escape(asked, quote=False)}</em></p>"
    if question.student_note:  # students see the question text: never the instructors' note
        html += f"<p><small>Note: {plain_html(question.student_note)}</small></p>"
    return html


def part_intro(label: str, prompt: str, asked: str) -> str:
    """A part's prompt after its label, then what to enter (for a whole answer, label "": what to enter)."""
    html = tex_html(f"**({label})** {prompt}") if label else ""
    return html + f"<p><em>{escape(asked, quote=False)}</em></p>"


def matrix_table(cells: list[str], rows: int, cols: int, attributes: str = "") -> str:
    """A matrix's blanks (or any cells, row by row) as an HTML table of ``rows`` by ``cols``."""
    body = "".join(
        "<tr>" + "".join(f"<td>{cells[r * cols + c]}</td>" for c in range(cols)) + "</tr>"
        for r in range(rows)
    )
    return f"<table{attributes}>{body}</table>"


def question_name(question: Question) -> str:
    """The name an LMS shows: item, variant code and seed, so a variant can be rebuilt from it (a
    concept question, the same for every seed, is named by its item)."""
    if question.is_original:
        return f"{question.item_id} original"
    if isinstance(question.answer, ExplainAnswer):  # one question, whatever the seed
        return f"{question.item_id} (concept question)"
    return f"{question.item_id} {question.code} (seed {question.seed})"


def number_text(value: float) -> str:
    """A number as an LMS answer field: integers plainly, others with every significant digit."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def tolerance_text(value: float) -> str:
    """An absolute tolerance, rounded to 12 significant digits (0.0051, not 0.0051000000000000004)."""
    return f"{value:.12g}"


def shown_first(target: float, half_width: float, tolerance: Tolerance) -> list[tuple[float, float]]:
    """The (value, absolute tolerance) answers an LMS numeric field is given for ``target``: first
    the value rounded as the question asks (what the LMS shows as the right answer: 2.75, not
    2.7517036633292), with the part of the tolerance that stays inside the item's, then the target
    with the item's own. Together they accept exactly what quiz accepts, |x - target| ≤ half_width;
    the target alone where rounding changes nothing."""
    try:
        rounded = float(tolerance.format(target))
    except ValueError:  # a format that is no plain number: the target alone
        return [(target, half_width)]
    inside = half_width - abs(rounded - target)  # written to 12 digits: 0.0042, its float noise gone
    if rounded == target or not math.isfinite(rounded) or inside <= 0:
        return [(target, half_width)]
    return [(rounded, inside), (target, half_width)]


def entries(answer: MatrixAnswer) -> list[float]:
    """A matrix's entries, row by row."""
    return [v for row in answer.rows for v in row]


Notes = list[tuple[str, str]]
"""What an LMS will do differently from quiz, as (message, item id) pairs gathered while writing."""


def gather(notes: Notes) -> list[str]:
    """One warning line per kind of note, with how many items it concerns and their ids.

    An export writes many variants of many items; a note repeated for each would bury the one
    line that matters, so each message is said once, in the order first met.
    """
    by_message: dict[str, list[str]] = {}
    for message, item in notes:
        items = by_message.setdefault(message, [])
        if item not in items:
            items.append(item)
    return [
        f"{message} ({len(items)} item{'s' if len(items) != 1 else ''}: {', '.join(items)})"
        for message, items in by_message.items()
    ]


MAX_SPELLINGS = 16
"""At most this many accepted texts per blank (the answer as the key writes it always among them)."""


def _scientific(value: float) -> list[str]:
    """``value`` in scientific notation at 1 to 7 significant digits, as students type it
    (``5.12e-07``, ``5.12e-7``, ``5.12E-7``), most precise last."""
    out: list[str] = []
    for digits in range(7):
        mantissa, _, exponent = f"{value:.{digits}e}".partition("e")
        short = str(int(exponent))
        for text in (f"{mantissa}e{exponent}", f"{mantissa}e{short}", f"{mantissa}E{short}"):
            if text not in out:
                out.append(text)
    return out


def spellings(value: float | int | str, tolerance: Tolerance) -> list[str]:
    """The ways of writing ``value`` that a text-matching LMS blank should accept.

    Canvas's fill-in-the-blank compares text, not numbers, so a blank lists every spelling at
    the precisions near the one asked for whose value the tolerance accepts (``0.88`` and
    ``0.881`` for 0.8808 to 2 places, but not ``0.9``), in fixed point and, for values too small
    or too large for a few decimals (``5.12e-07``), in scientific notation. The answer as the key
    writes it (`Tolerance.format`) comes first, so the canonical answer is always accepted.
    """
    if isinstance(value, str):
        return [value]
    if tolerance.mode == "exact" or (float(value).is_integer() and tolerance.mode != "decimals"):
        return [number_text(value)]
    found: list[str] = [tolerance.format(float(value))]
    magnitude = 0 if value == 0 else math.floor(math.log10(abs(value)))
    candidates: list[str] = []
    if tolerance.mode == "decimals":
        # At the precision asked, the neighbours the tolerance also takes: 1.09 for 1.08495 to 2 places
        # (|1.09 - 1.08495| <= 0.0051), which a student who rounded an intermediate result writes.
        step = 10.0**-tolerance.places
        for near in (math.floor(value / step) * step, math.ceil(value / step) * step):
            text = f"{near:.{tolerance.places}f}"
            candidates += [text, text.replace("0.", ".", 1)] if text.startswith(("0.", "-0.")) else [text]
    for places in range(10):
        text = f"{value:.{places}f}"
        if float(text) == 0:
            text = text.lstrip("-")
        candidates += [text, text.rstrip("0").rstrip(".") if "." in text else text]
        if text.startswith(("0.", "-0.")):
            candidates.append(text.replace("0.", ".", 1))
        if places > max(magnitude, 0) + 6:
            break
    if value != 0 and not -4 <= magnitude < 15:
        candidates = _scientific(float(value)) + candidates
    for candidate in candidates:
        if (
            candidate not in found
            and candidate not in {"", "-", "."}
            and tolerance.accepts(value, float(candidate))
        ):
            found.append(candidate)
    return found[:MAX_SPELLINGS]


# TeX and Unicode ways of writing a subscript, which the reader (`attnquiz.engine.answers.parse`) may take
# back as the same name; each candidate is kept only if the reader does.
_SUBSCRIPT_FORMS = ("{base}_{{{sub}}}", "{base}_\\text{{{sub}}}", "{base}_{{\\text{{{sub}}}}}",
                    "{base}_\\mathrm{{{sub}}}", "{base}_{{\\mathrm{{{sub}}}}}")  # fmt: skip


def _unicode_subscript(text: str) -> str | None:
    """``k`` → ``ₖ``, ``model`` → None (Unicode has no subscript d)."""
    out = []
    for ch in text:
        kind = "DIGIT" if ch.isdigit() else "SMALL LETTER"
        name = unicodedata.name(ch, "").rsplit(" ", 1)[-1]
        try:
            out.append(
                unicodedata.lookup(
                    f"LATIN SUBSCRIPT {kind} {name}" if kind != "DIGIT" else f"SUBSCRIPT {name}"
                )
            )
        except KeyError:
            return None
    return "".join(out)


@lru_cache(maxsize=1024)
def dimension_spellings(name: str) -> tuple[str, ...]:
    """Every way of writing the dimension name ``name`` that quiz's reader takes for it.

    A text-matching blank (a Moodle SHORTANSWER, a Canvas blank) accepts only what it lists, so it
    lists what quiz accepts: ``d_v``, ``dv``, ``d_{v}``, ``dᵥ``, ``d_\\text{v}``, ... Candidates
    are the usual plain, TeX and Unicode forms of a subscript; the reader decides which count.
    """
    from attnquiz.engine.answers import read_shapes, symbol_names

    canonical = symbol_names.canonical_symbol(name)
    plain = symbol_names.spell_dimensions(name)
    base, _, sub = plain.partition("_")
    candidates = [name, plain, canonical]
    if base and sub:
        candidates += [form.format(base=base, sub=sub) for form in _SUBSCRIPT_FORMS]
        small = _unicode_subscript(sub)
        if small is not None:
            candidates.append(base + small)

    def read_as_name(text: str) -> bool:
        dims = read_shapes.shape(f"[{text}]")
        return (
            isinstance(dims, tuple)
            and len(dims) == 1
            and isinstance(dims[0], str)
            and symbol_names.canonical_symbol(dims[0]) == canonical
        )

    return tuple(c for c in dict.fromkeys(candidates) if read_as_name(c))


def dimension_texts(answer: ShapeAnswer, dim: int | str) -> list[str]:
    """The texts a blank for one dimension accepts: the number or name, every spelling of each
    declared name that stands for it (``d_model`` where the prompt says d_model = 512), and the
    usual spellings of a product the prompt states equal to it (``h*d_k``, ``d_k*h``, ``h·d_k``
    where it says d_model = h·d_k, each kept only if quiz's grader marks it right in this blank's
    place), at most `MAX_SPELLINGS` in all."""
    texts = [str(dim)] if isinstance(dim, int) else list(dimension_spellings(dim))
    for name, value in answer.symbols:
        if (isinstance(dim, int) and value == dim) or (isinstance(dim, str) and name == dim):
            texts += [t for t in dimension_spellings(name) if t not in texts]
    # Products take the room the names leave; the first, the product as the item states it, is
    # listed even when there is none, so that typing the prompt's own formula is never refused.
    room = max(MAX_SPELLINGS - len(texts), 1)
    extra = _product_texts(answer.dims, answer.symbols, answer.products, dim)
    return texts + [t for t in extra if t not in texts][:room]


def lists_products(answer: ShapeAnswer) -> bool:
    """Whether some blank of the shape lists a product's spellings (then quiz accepts more than any
    blank can list: another order or spelling past the cap, ``1*h*d_k``, ``8*d_k`` where h = 8)."""
    return any(_product_texts(answer.dims, answer.symbols, answer.products, d) for d in answer.dims)


PRODUCT_SPELLINGS = (
    "{lms} matches a shape's blank as text: a dimension the question states as a product (such as "
    "d_model = h·d_k) accepts only the spellings its blank lists (h*d_k, d_k*h, h·d_k, ...), while quiz "
    "reads any product equal to it (more spellings and orders, or 8*d_k where h = 8)"
)
"""The note of an export whose shape blanks list products, with the LMS's name for ``{lms}``."""


# Ways of writing a product that students type and the reader takes for one: the reader's `*`,
# with spaces, and the prompt's `·` (a bare space separates two dimensions of a shape).
_PRODUCT_JOINERS = ("*", "·", " * ")


@lru_cache(maxsize=1024)
def _product_texts(
    dims: tuple[int | str, ...],
    symbols: tuple[tuple[str, int | None], ...],
    products: tuple[tuple[str, str], ...],
    dim: int | str,
) -> tuple[str, ...]:
    """Up to `MAX_SPELLINGS` texts for the answer's products that quiz's grader takes for ``dim``: the
    product as stated, the product's name where quiz reads it as ``dim`` through the product, then
    the product's commonest spellings (`_product_candidates`).

    Each candidate is graded in the blank's place in the answer (the other dimensions as the key
    writes them), so a text is listed only if quiz marks it right there: a product stands for
    a name (``h*d_k`` for d_model) or a number (``h*d_k`` for 512 where h = 8 and d_k = 64).
    The key is the answer's fields, not the answer: `ShapeAnswer` compares without its symbols.
    """
    if not products:
        return ()
    from attnquiz.engine.grading.grade import grade_answer

    keys = list(dims) if dim in dims else [dim]
    place = keys.index(dim)
    answer = ShapeAnswer(tuple(keys), symbols=symbols, products=products)

    def graded_right(text: str) -> bool:
        typed = [str(key) for key in keys]
        typed[place] = text
        return grade_answer(answer, "[" + ", ".join(typed) + "]").status == "correct"

    found: list[str] = []
    for name, product in products:
        # Every spelling of a product has its value: if the product as stated is wrong here, so are they.
        right = graded_right(product)
        if right and product not in found:
            found.append(product)
        # The name too: where it has no number of its own, quiz reads it as its product's value
        # (d_model for 512 where h = 8 and d_k = 64), which no declared number lists.
        if name != str(dim) and name not in found and graded_right(name):
            found.append(name)
        if not right:
            continue
        for text in itertools.islice(_product_candidates(product), _MAX_CANDIDATES):
            if len(found) >= MAX_SPELLINGS:
                break
            if text not in found and graded_right(text):
                found.append(text)
    return tuple(found[:MAX_SPELLINGS])


_MAX_CANDIDATES = 8 * MAX_SPELLINGS
"""At most this many spellings of one product are graded (a product of three names, each in eight
spellings, would have thousands)."""


def _product_candidates(product: str) -> Iterator[str]:
    """``h*d_k`` as stated, then with each joiner in both orders (`_PRODUCT_JOINERS`), each factor
    in its plainest spellings first (``d_k``, ``dk``), then in its others (``d_{k}``, ``dₖ``, ...).
    Repeats are left to the caller; the count is bounded by the factors' spellings."""
    factors = [f.strip() for f in product.split("*")]
    spelled = [(f,) if f.isdigit() else (dimension_spellings(f) or (f,)) for f in factors]
    stated = list(range(len(factors)))
    orders = [stated, stated[::-1]] if len(factors) > 1 else [stated]
    yield product
    for depth in range(1, max(len(s) for s in spelled) + 1):
        for combo in itertools.product(*(s[:depth] for s in spelled)):
            if depth > 1 and all(combo[i] in s[: depth - 1] for i, s in enumerate(spelled)):
                continue  # met at a smaller depth
            for joiner in _PRODUCT_JOINERS:
                for order in orders:
                    yield joiner.join(combo[i] for i in order)


def subsets(letters: str) -> Iterator[frozenset[str]]:
    """Non-empty selections to check a choice scheme on: all of them for up to 12 options."""
    n = len(letters)
    sizes: Iterable[int] = range(1, n + 1) if n <= 12 else (1, 2, 3, n - 1, n)
    for size in sizes:
        for combo in itertools.combinations(letters, size):
            yield frozenset(combo)


__all__ = [
    "IN_DIGITS",
    "MAX_SPELLINGS",
    "PLAIN_TEXT_IGNORED",
    "PRODUCT_SPELLINGS",
    "SPOKEN_CLASS",
    "Notes",
    "dimension_spellings",
    "dimension_texts",
    "entries",
    "figure_files",
    "figures_html",
    "gather",
    "instructions",
    "key_points_html",
    "lists_products",
    "matrix_table",
    "number_text",
    "part_intro",
    "question_html",
    "question_name",
    "shown_first",
    "solution_html",
    "spellings",
    "subsets",
    "tex_formula",
    "tex_html",
    "tex_html_inline",
    "tolerance_text",
]


# Moodle's essay editor offers these heights (lines); an essay asks for the first that holds the answer.
RESPONSE_LINES = (5, 10, 15, 20, 25, 30, 35, 40)


def question_end(question: Question) -> list[str]:
    """The closing lines of a question in Moodle XML: its tags (bank and topic), then the end tag.
    One for every writer of Moodle XML (Moodle's and STACK's files)."""
    tags = "".join(
        f"<tag><text>{escape(t, quote=False)}</text></tag>" for t in (question.bank, question.topic)
    )
    return [f"    <tags>{tags}</tags>", "  </question>"]


def essay_settings(wanted_lines: int, graderinfo: str) -> list[str]:
    """The settings of a Moodle ``essay`` question after its text and grade, as lines: an editor about
    ``wanted_lines`` tall, no attachments, and ``graderinfo`` (the element, written by the caller's
    format) for the marker. One list for every writer of an essay (Moodle's and STACK's files)."""
    height = next((n for n in RESPONSE_LINES if n >= wanted_lines), RESPONSE_LINES[-1])
    return [
        "    <responseformat>editor</responseformat>",
        "    <responserequired>1</responserequired>",
        f"    <responsefieldlines>{height}</responsefieldlines>",
        "    <minwordlimit></minwordlimit>",
        "    <maxwordlimit></maxwordlimit>",
        "    <attachments>0</attachments>",
        "    <attachmentsrequired>0</attachmentsrequired>",
        "    <maxbytes>0</maxbytes>",
        "    <filetypeslist></filetypeslist>",
        f"    {graderinfo}",
        '    <responsetemplate format="html"><text></text></responsetemplate>',
    ]
