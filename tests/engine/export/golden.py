"""Golden files: compare an export with tests/data/golden/<name>, or rewrite it with QUIZ_UPDATE_GOLDEN=1."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"


def check_golden(name: str, actual: str) -> None:
    """Assert ``actual`` equals the stored golden file (QUIZ_UPDATE_GOLDEN=1 rewrites it after a change)."""
    path = GOLDEN / name
    if os.environ.get("QUIZ_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from the golden file; QUIZ_UPDATE_GOLDEN=1 rewrites it"
