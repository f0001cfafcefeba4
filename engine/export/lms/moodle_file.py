"""The frame of a Moodle XML file, shared by the writers of Moodle's own questions (`moodle`) and of
STACK questions (`stack`): the text elements, the header, a category per item with its variants,
and the file written as it is made: compact (`compact`), in one file or in parts under a size
limit for a site's upload limit (`Parts`).

Only the frame is shared: what a question holds is each writer's own (`moodle.question_xml`,
`stack.question_xml`), so neither writer imports the other.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.markup.xml_text import escape
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, Progress
from attnquiz.engine.variant import Question

_BATCH = 32 * 2**10
"""Bytes (about) written at once: few calls, and little held whatever a line holds (a question's
whole XML, an embedded image)."""


def cdata(text: str) -> str:
    """``text`` as a CDATA section (a ``]]>`` inside it split across two sections)."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def text_element(text: str, *, html: bool = True) -> str:
    """A ``<text>`` element: HTML as CDATA, plain text escaped."""
    return f"<text>{cdata(text) if html else escape(text)}</text>"


def lines(
    plan: ClassPlan,
    question_xml: Callable[[Question], Iterable[str]],
    *,
    made_for: str = "",
    progress: Progress | None = None,
) -> Iterator[str]:
    """The file line by line: a header naming the bank (and ``made_for``, such as " for STACK"), then
    a category per item (``$course$/<bank>/<item>``, its source as the category's information)
    followed by its variants, each built by ``question_xml`` as it is written.

    Each ``<question>`` element (a category or a variant) comes as one string of several lines, so
    that `write` can compact it whole and cut the file between questions."""
    yield '<?xml version="1.0" encoding="UTF-8"?>'
    yield (
        f"<!-- quiz export of bank {plan.bank}{made_for}: "
        + ("past-paper questions" if plan.original else f"master seed {plan.master_seed}")
        + f", {len(plan.sheets)} variant(s) per item -->"
    )
    yield "<quiz>"
    groups = plan.by_item()
    for done, (item_id, questions) in enumerate(groups, 1):
        source = questions[0].source if questions else ""
        yield "\n".join(
            (
                '  <question type="category">',
                f"    <category>{text_element(f'$course$/{plan.bank}/{item_id}', html=False)}</category>",
                f'    <info format="html">{text_element(escape(source))}</info>',
                "  </question>",
            )
        )
        for question in lms_model.variants_to_write(questions):
            yield "\n".join(question_xml(question))
        if progress is not None:
            progress(done, len(groups))
    yield "</quiz>"


_BEFORE_START = re.compile(r">[ \t\r\n]+(?=<[^/!?])")
_BEFORE_END = re.compile(r">[ \t\r\n]+(?=</)")
_XML_SPACE = " \t\r\n"


def _before_end(found: re.Match[str]) -> str:
    """White space before an end tag: dropped after another end tag or an empty element (the
    indentation of a closing parent), kept after a start tag (it is the element's whole text)."""
    text = found.string
    tag = text[text.rfind("<", 0, found.start()) : found.start() + 1]
    if tag.startswith(("</", "<!", "<?")) or tag.endswith("/>"):
        return ">"
    return found.group()


def _cdata_split(xml: str) -> list[str]:
    """``xml`` cut around its CDATA sections: text outside one at even places, each whole section
    (from ``<![CDATA[`` to the first ``]]>``) at odd places. Found with ``str.find``: a regular
    expression's lazy scan to each section's end took most of `compact`'s time."""
    pieces: list[str] = []
    position = 0
    while (start := xml.find("<![CDATA[", position)) >= 0:
        end = xml.find("]]>", start + len("<![CDATA["))
        if end < 0:
            break  # a section never closed is no section: left in the text, as it is
        pieces += [xml[position:start], xml[start : end + len("]]>")]]
        position = end + len("]]>")
    pieces.append(xml[position:])
    return pieces


def compact(xml: str) -> str:
    """``xml`` without the indentation between its elements: the same elements, attributes and
    text in fewer bytes (a sixth of a STACK file).

    A run of XML white space between two tags goes unless it is the whole content of an element
    (``<text> </text>`` keeps its space); CDATA sections (HTML, Maxima) and text are kept byte for
    byte. No element of a Moodle or STACK question holds both text and elements, so what goes is
    indentation only, and an importer reads the same values. Regular expressions rather than a
    parse: a 30-variant STACK file of 34 MB is compacted in a quarter of a CPU-second.
    """
    pieces = _cdata_split(xml)  # even places: outside CDATA; odd places: CDATA sections
    last = len(pieces) - 1
    for at in range(0, len(pieces), 2):
        piece = pieces[at]
        if at == 0:
            piece = piece.lstrip(_XML_SPACE)
        if at == last:
            piece = piece.rstrip(_XML_SPACE)
        pieces[at] = _BEFORE_END.sub(_before_end, _BEFORE_START.sub(">", piece))
    return "".join(pieces)


@dataclass(frozen=True)
class Parts:
    """Where a file cut into parts goes: part n (1, 2, ...) is written through ``open_part(n)``,
    each at most ``limit`` bytes."""

    open_part: Callable[[int], contextlib.AbstractContextManager[BinaryIO]]
    limit: int


Sink = BinaryIO | Parts
"""Where `write` puts a file: one stream, or `Parts`."""

_NAME = re.compile(r"<name><text>(.*?)</text></name>", re.DOTALL)


def write(file_lines: Iterable[str], out: Sink) -> int:
    """Write the lines compacted (`compact`) as UTF-8, a question a line, to ``out`` as they are
    made; the number of files written (1 unless ``out`` is `Parts`)."""
    if isinstance(out, Parts):
        return _write_parts(file_lines, out)
    batch: list[str] = []
    size = 0
    for line in file_lines:
        line = compact(line)
        batch.append(line)
        size += len(line)
        if size >= _BATCH:
            out.write(("\n".join(batch) + "\n").encode("utf-8"))
            batch, size = [], 0
    if batch:
        out.write(("\n".join(batch) + "\n").encode("utf-8"))
    return 1


def _write_parts(file_lines: Iterable[str], parts: Parts) -> int:
    """Cut the file between questions into parts of at most ``parts.limit`` bytes, each a whole
    file: the header, the category of its first question repeated (so that a part imports into the
    same categories on its own), whole questions, and the end."""
    head: list[bytes] = []
    tail = b"</quiz>\n"
    category = b""  # the category of the questions being written
    in_part = False  # whether the current part holds ``category`` already
    size = 0
    count = 0
    with contextlib.ExitStack() as files:
        out: BinaryIO | None = None
        for line in file_lines:
            data = (compact(line) + "\n").encode("utf-8")
            if line == "</quiz>":
                break
            if not line.lstrip().startswith("<question"):
                head.append(data)
            elif line.lstrip().startswith('<question type="category">'):
                category, in_part = data, False
            else:
                needed = (b"" if in_part else category) + data
                if out is None or size + len(needed) + len(tail) > parts.limit:
                    if out is not None:
                        out.write(tail)
                    needed = b"".join(head) + category + data
                    if len(needed) + len(tail) > parts.limit:
                        raise ExportError(_too_small(parts.limit, line, len(needed) + len(tail)))
                    count += 1
                    out = files.enter_context(parts.open_part(count))
                    size = 0
                out.write(needed)
                size += len(needed)
                in_part = True
        if out is None:  # no question at all: one part, as the unsplit file would be
            count = 1
            out = files.enter_context(parts.open_part(count))
            out.write(b"".join(head))
        out.write(tail)
    return count


def _too_small(limit: int, question: str, needed: int) -> str:
    named = _NAME.search(question)
    which = f"the question {named.group(1)}" if named else "a question"
    return (
        f"a size limit of {limit:,} bytes is smaller than one question: {which} takes {needed:,} bytes "
        "in a file of its own (with the file's header and its category); give a larger limit"
    )
