"""The frame of a Moodle XML file, shared by the writers of Moodle's own questions (`moodle`) and of
STACK questions (`stack`): the text elements, the header, a category per item with its variants,
and the file written as it is made.

Only the frame is shared: what a question holds is each writer's own (`moodle.question_xml`,
`stack.question_xml`), so neither writer imports the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from attnquiz.engine.export import lms_model
from attnquiz.engine.export.worksheet import ClassPlan, Progress
from attnquiz.engine.variant import Question
from attnquiz.engine.xml_text import escape

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
    followed by its variants, each built by ``question_xml`` as it is written."""
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
        yield '  <question type="category">'
        yield f"    <category>{text_element(f'$course$/{plan.bank}/{item_id}', html=False)}</category>"
        yield f'    <info format="html">{text_element(escape(source))}</info>'
        yield "  </question>"
        for question in lms_model.variants_to_write(questions):
            yield from question_xml(question)
        if progress is not None:
            progress(done, len(groups))
    yield "</quiz>"


def write(file_lines: Iterable[str], out: BinaryIO) -> None:
    """Write the lines to ``out`` as they are made, as UTF-8, in batches of about 32 kB."""
    batch: list[str] = []
    size = 0
    for line in file_lines:
        batch.append(line)
        size += len(line)
        if size >= _BATCH:
            out.write(("\n".join(batch) + "\n").encode("utf-8"))
            batch, size = [], 0
    if batch:
        out.write(("\n".join(batch) + "\n").encode("utf-8"))
