"""JSON export: every variant of the selected items, with the fields of ``quiz show --json``.

The file is one object: the bank, its title, the master seed, the number of variants, and
``questions``, a flat list in item order then variant order, each entry exactly
`Question.to_json` (prompt, instructions, answer with tolerance, mistakes, solution, seed,
variant code, ...). Keys keep their order and the text is UTF-8, so the same seed gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from attnquiz.engine.export.worksheet import ClassPlan

FORMAT_VERSION = 1


def document(plan: ClassPlan) -> dict[str, Any]:
    """The export as a JSON-able dict."""
    return {
        "format": "quiz-export",
        "version": FORMAT_VERSION,
        "bank": plan.bank,
        "title": plan.title,
        "master_seed": plan.master_seed,
        "original": plan.original,
        "variants": len(plan.sheets),
        "items": list(plan.items),
        "questions": [q.to_json() for _, questions in plan.by_item() for q in questions],
    }


def dumps(plan: ClassPlan) -> str:
    """The export as JSON text (indented, UTF-8 characters kept, ending in a newline)."""
    return json.dumps(document(plan), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


__all__ = ["FORMAT_VERSION", "document", "dumps"]
