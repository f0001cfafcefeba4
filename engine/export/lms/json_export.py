"""JSON export: every variant of the selected items, with the fields of ``quiz show --json``.

The file is one object: the bank, its title, the master seed, the number of variants, and
``questions``, a flat list in item order then variant order, each entry exactly
`Question.to_json` (prompt, instructions, answer with tolerance, mistakes, solution, seed,
variant code, ...). Keys keep their order and the text is UTF-8, so the same seed gives the same bytes.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from typing import Any, BinaryIO

from attnquiz.engine.plan.class_plan import ClassPlan

FORMAT_VERSION = 1


def document(plan: ClassPlan, *, questions: bool = True) -> dict[str, Any]:
    """The export as a JSON-able dict (without its ``questions`` when told: `chunks` adds them one by one)."""
    head: dict[str, Any] = {
        "format": "quiz-export",
        "version": FORMAT_VERSION,
        "bank": plan.bank,
        "title": plan.title,
        "master_seed": plan.master_seed,
        "original": plan.original,
        "variants": len(plan.sheets),
        "items": list(plan.items),
    }
    if questions:
        head["questions"] = [q.to_json() for _, group in plan.by_item() for q in group]
    return head


def chunks(plan: ClassPlan) -> Iterator[str]:
    """The export as JSON text in pieces, each question built as it is written: the same text as
    ``json.dumps(document(plan), indent=2)`` (and a newline), never whole in memory."""
    head = document(plan, questions=False)
    opening = json.dumps(head, ensure_ascii=False, indent=2, allow_nan=False)
    yield opening[: -len("\n}")] + ',\n  "questions": ['
    first = True
    for _, questions in plan.by_item():
        for question in questions:
            text = json.dumps(question.to_json(), ensure_ascii=False, indent=2, allow_nan=False)
            yield ("\n" if first else ",\n") + textwrap.indent(text, "    ")
            first = False
    yield ("\n  ]\n}\n" if not first else "]\n}\n")


def write(plan: ClassPlan, out: BinaryIO) -> None:
    """Write the export to ``out`` as it is made (UTF-8)."""
    for chunk in chunks(plan):
        out.write(chunk.encode("utf-8"))


def dumps(plan: ClassPlan) -> str:
    """The export as JSON text (indented, UTF-8 characters kept, ending in a newline)."""
    return "".join(chunks(plan))


__all__ = ["FORMAT_VERSION", "chunks", "document", "dumps", "write"]
