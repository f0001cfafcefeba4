"""Moodle and STACK files as written: compact (the same XML tree as the file built whole, without
the indentation between elements), and cut into parts under a size limit, each part a whole file
that imports on its own, together the questions of the file in one."""

from __future__ import annotations

import contextlib
import io
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import BinaryIO

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import moodle, moodle_file, stack
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, plan_class


@pytest.mark.parametrize(
    ("xml", "compacted"),
    [
        ("  <a>\n    <b>x</b>\n    <c></c>\n  </a>", "<a><b>x</b><c></c></a>"),
        ("<a>\n  <b/>\n</a>", "<a><b/></a>"),
        ("<text> </text>", "<text> </text>"),  # the whole content of an element is kept
        ("<a>\n<text>\n\n</text>\n</a>", "<a><text>\n\n</text></a>"),
        ("<t><![CDATA[ <p> a </p>\n  <p>b</p> ]]>  </t>", "<t><![CDATA[ <p> a </p>\n  <p>b</p> ]]>  </t>"),
        ("<t>  <![CDATA[x]]></t>", "<t>  <![CDATA[x]]></t>"),  # text before CDATA is text
        ("<t>a &gt; b</t>\n<u>\u00a0</u>", "<t>a &gt; b</t><u>\u00a0</u>"),  # a no-break space is text
        ('<q a="1 &gt; 0">\n <n>x y</n>\n</q>', '<q a="1 &gt; 0"><n>x y</n></q>'),
        ("<a>\n\t<b>1</b>\r\n</a>", "<a><b>1</b></a>"),
        ("", ""),
    ],
)
def test_compact_drops_only_the_space_between_elements(xml: str, compacted: str) -> None:
    assert moodle_file.compact(xml) == compacted


def _tree(element: ET.Element) -> object:
    """An element as a comparable value: white space that only separates child elements ignored."""
    children = list(element)
    text = element.text or ""
    if children and not text.strip(" \t\r\n"):
        text = ""
    tails = [(c.tail or "").strip(" \t\r\n") for c in children]
    return (element.tag, element.attrib, text, tails, [_tree(c) for c in children])


def _plan(students: int, count: int | None = 8) -> ClassPlan:
    return plan_class(banks.load("week1"), students=students, master_seed=5, count=count)


def _file(fmt: str, plan: ClassPlan, out: moodle_file.Sink) -> list[str]:
    return moodle.write(plan, out) if fmt == "moodle" else stack.write(plan, out)


def test_a_written_moodle_file_is_the_built_file_without_indentation() -> None:
    plan = _plan(3, count=None)
    out = io.BytesIO()
    moodle.write(plan, out)
    built = moodle.build(plan).text.encode("utf-8")
    assert len(out.getvalue()) < len(built)
    assert _tree(ET.fromstring(out.getvalue())) == _tree(ET.fromstring(built))


class _Parts:
    """Parts kept in memory, by number."""

    def __init__(self) -> None:
        self.data: dict[int, io.BytesIO] = {}

    @contextlib.contextmanager
    def open(self, number: int) -> Iterator[BinaryIO]:
        assert number == len(self.data) + 1  # opened in order, each once
        self.data[number] = io.BytesIO()
        yield self.data[number]


def _questions(data: bytes) -> list[bytes]:
    return [ET.tostring(q) for q in ET.fromstring(data) if q.get("type") != "category"]


def _categories_of(data: bytes) -> list[tuple[str, str]]:
    """Each question's name with the category it is imported into (the last category before it)."""
    found, category = [], ""
    for question in ET.fromstring(data):
        if question.get("type") == "category":
            category = question.findtext("category/text") or ""
        else:
            found.append((question.findtext("name/text") or "", category))
    return found


@pytest.mark.parametrize("fmt", ["moodle", "stack"])
@pytest.mark.parametrize("share", [2, 5])
def test_parts_hold_whole_questions_under_the_limit_and_together_the_whole_file(fmt: str, share: int) -> None:
    plan = _plan(4)
    whole = io.BytesIO()
    warnings = _file(fmt, plan, whole)
    limit = len(whole.getvalue()) // share  # a limit that takes more than ``share`` parts
    parts = _Parts()
    assert _file(fmt, plan, moodle_file.Parts(parts.open, limit)) == warnings
    written = [part.getvalue() for part in parts.data.values()]
    assert len(written) > share
    assert all(len(part) <= limit for part in written)
    assert all(part.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n') for part in written)
    assert all(ET.fromstring(part)[0].get("type") == "category" for part in written)  # imports on its own
    assert [q for part in written for q in _questions(part)] == _questions(whole.getvalue())
    assert [q for part in written for q in _categories_of(part)] == _categories_of(whole.getvalue())
    again = _Parts()
    _file(fmt, plan, moodle_file.Parts(again.open, limit))
    assert [part.getvalue() for part in again.data.values()] == written  # deterministic


def test_a_limit_above_the_file_makes_one_part_equal_to_the_file() -> None:
    plan = _plan(2)
    whole, parts = io.BytesIO(), _Parts()
    moodle.write(plan, whole)
    moodle.write(plan, moodle_file.Parts(parts.open, 10**12))
    assert [part.getvalue() for part in parts.data.values()] == [whole.getvalue()]


@pytest.mark.parametrize("limit", [1, 500, 3_000])
def test_a_limit_smaller_than_one_question_is_refused_by_name(limit: int) -> None:
    parts = _Parts()
    with pytest.raises(ExportError, match=rf"size limit of {limit:,} bytes is smaller than one question: "
                       r"the question .+ takes [\d,]+ bytes"):  # fmt: skip
        moodle.write(_plan(2), moodle_file.Parts(parts.open, limit))
