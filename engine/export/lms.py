"""What the LMS formats share: HTML with TeX for MathJax, question names, and the scoring checks.

Moodle and Canvas both typeset maths with MathJax, which reads TeX between ``\\(...\\)`` and
``\\[...\\]``. Each formula is written from its parsed source (checked against the subset), inside
HTML built from the same Markdown tree the other renderers use.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from functools import lru_cache
from html import escape

from attnquiz.engine import markup
from attnquiz.engine.answers import (
    Answer,
    ChoiceAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    ShapeAnswer,
    Tolerance,
)
from attnquiz.engine.export import text as md
from attnquiz.engine.variant import Question


def _inlines(nodes: Iterable[md.Inline]) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, md.Plain):
            out.append(escape(node.text, quote=False))
        elif isinstance(node, md.Strong):
            out.append(f"<strong>{_inlines(node.children)}</strong>")
        elif isinstance(node, md.Emph):
            out.append(f"<em>{_inlines(node.children)}</em>")
        elif isinstance(node, md.Code):
            out.append(f"<code>{escape(node.text, quote=False)}</code>")
        else:
            out.append(tex_formula(node.math))
    return "".join(out)


def tex_formula(formula: markup.Math) -> str:
    """A formula as MathJax TeX, HTML-escaped: ``\\(...\\)`` inline, ``\\[...\\]`` displayed."""
    source = escape(formula.source.strip(), quote=False)
    return f"\\[{source}\\]" if formula.display else f"\\({source}\\)"


@lru_cache(maxsize=8192)
def tex_html(source: str) -> str:
    """Markdown with TeX maths as HTML paragraphs and lists, maths left as TeX for MathJax."""
    out: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            out.append(f"<p>{_inlines(block.inlines)}</p>")
        else:
            tag = "ol" if block.ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_inlines(i)}</li>" for i in block.items) + f"</{tag}>")
    return "".join(out)


@lru_cache(maxsize=8192)
def tex_html_inline(source: str) -> str:
    """Like `tex_html`, without paragraph tags (for an option, a list item or a feedback line)."""
    pieces: list[str] = []
    for block in md.blocks(source):
        if isinstance(block, md.Paragraph):
            pieces.append(_inlines(block.inlines))
        else:
            pieces.extend(_inlines(item) for item in block.items)
    return " ".join(pieces)


def solution_html(question: Question) -> str:
    """The worked solution as an ordered list (the general feedback of an LMS question)."""
    steps = "".join(f"<li>{tex_html_inline(step)}</li>" for step in question.variant.solution)
    answer = escape(question.answer.format(), quote=False)
    return f"<p><strong>Answer:</strong> {answer}</p>" + (f"<ol>{steps}</ol>" if steps else "")


def instructions(answer: Answer) -> str:
    """What to enter, phrased for an LMS form (blanks per entry, ticks for choices)."""
    if isinstance(answer, ChoiceAnswer):
        return f"Select all that apply. {answer.scoring_rule()}" if answer.multiple else "Select one."
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return answer.instructions()
    if isinstance(answer, ShapeAnswer):
        return "Give each dimension" + (" (a number or a symbol such as T)." if answer.symbolic else ".")
    return f"Give each entry {answer.tolerance.describe()}."


def question_html(question: Question, asked: str | None = None) -> str:
    """The question text: prompt, what to enter (``asked``, or `instructions`), and the item's note."""
    html = tex_html(question.variant.prompt)
    asked = asked if asked is not None else instructions(question.answer)
    html += f"<p><em>{escape(asked, quote=False)}</em></p>"
    if question.student_note:  # students see the question text: never the instructors' note
        html += f"<p><small>Note: {escape(question.student_note, quote=False)}</small></p>"
    return html


def question_name(question: Question) -> str:
    """The name an LMS shows: item, variant code and seed, so a variant can be rebuilt from it."""
    if question.is_original:
        return f"{question.item_id} original"
    return f"{question.item_id} {question.code} (seed {question.seed})"


def number_text(value: float) -> str:
    """A number as an LMS answer field: integers plainly, others with every significant digit."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def tolerance_text(value: float) -> str:
    """An absolute tolerance, rounded to 12 significant digits (0.0051, not 0.0051000000000000004)."""
    return f"{value:.12g}"


def entries(answer: MatrixAnswer) -> list[float]:
    """A matrix's entries, row by row."""
    return [v for row in answer.rows for v in row]


def spellings(value: float | int | str, tolerance: Tolerance) -> list[str]:
    """The ways of writing ``value`` that a text-matching LMS blank should accept.

    Canvas's fill-in-the-blank compares text, not numbers, so a blank lists every spelling at
    the precisions near the one asked for whose value the tolerance accepts (``0.88`` and
    ``0.881`` for 0.8808 to 2 places, but not ``0.9``).
    """
    if isinstance(value, str):
        return [value]
    if tolerance.mode == "exact" or (float(value).is_integer() and tolerance.mode != "decimals"):
        return [number_text(value)]
    found: list[str] = []
    magnitude = 0 if value == 0 else math.floor(math.log10(abs(value)))
    for places in range(10):
        text = f"{value:.{places}f}"
        if float(text) == 0:
            text = text.lstrip("-")
        candidates = [text, text.rstrip("0").rstrip(".") if "." in text else text]
        if text.startswith(("0.", "-0.")):
            candidates.append(text.replace("0.", ".", 1))
        for candidate in candidates:
            if (
                candidate not in found
                and candidate not in {"", "-", "."}
                and tolerance.accepts(value, float(candidate))
            ):
                found.append(candidate)
        if places > max(magnitude, 0) + 6:
            break
    return found[:8]


def subsets(letters: str) -> Iterator[frozenset[str]]:
    """Non-empty selections to check a choice scheme on: all of them for up to 12 options."""
    n = len(letters)
    sizes: Iterable[int] = range(1, n + 1) if n <= 12 else (1, 2, 3, n - 1, n)
    for size in sizes:
        for combo in itertools.combinations(letters, size):
            yield frozenset(combo)


__all__ = [
    "entries",
    "instructions",
    "number_text",
    "question_html",
    "question_name",
    "solution_html",
    "spellings",
    "subsets",
    "tex_formula",
    "tex_html",
    "tex_html_inline",
    "tolerance_text",
]
