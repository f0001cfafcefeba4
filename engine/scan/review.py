"""The review file: the items an instructor settles, where the file is written, and reading it back."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.scan.fields import MAX_READINGS
from attnquiz.engine.scan.layout import MAX_JSON_BYTES, ScanError

REVIEW_PREFIX = "?review "
# Why a review item has no picture, said where the picture would be (`quiz scan --fix`, the review page).
NO_SCAN = "no image: this page was not in the scans"
NO_PAGE_IMAGE = "no image: the file gave no picture of a page to show"
NO_FIELD_CROP = "no image: the scans were read without keeping this field's crop (scan them again to see it)"


@dataclass(slots=True)
class ReviewItem:
    """One thing the instructor settles: a field (``column`` of ``student``) or a whole page."""

    n: int
    kind: str  # "field", "page", "missing", "duplicate", "student-number", "note"
    reason: str
    source: str = ""
    student: int | None = None
    sheet_page: int | None = None
    column: str = ""
    field: str = ""
    read: str = ""
    crop: str = ""
    value: str | None = None  # what the instructor settled (None: not yet)
    rereadable: bool = False  # a page whose image can be read once the instructor says whose it is
    # (``field`` is a name of this class: the dataclasses function under its full name)
    readings: list[str] = dataclasses.field(default_factory=list)  # what the student may have meant
    likely: str = ""  # the reading the marks point to: settled with one key
    no_crop: str = ""  # why an item has no picture (``no image: this page was not in the scans``)

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kind": self.kind,
            "reason": self.reason,
            "source": self.source,
            "student": self.student,
            "page": self.sheet_page,
            "column": self.column,
            "field": self.field,
            "read": self.read,
            "crop": self.crop,
            "value": self.value,
            "rereadable": self.rereadable,
            "readings": self.readings,
            "likely": self.likely,
            "no_crop": self.no_crop,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReviewItem:
        return cls(
            int(data["n"]),
            str(data["kind"]),
            str(data["reason"]),
            str(data.get("source", "")),
            data.get("student"),
            data.get("page"),
            str(data.get("column", "")),
            str(data.get("field", "")),
            str(data.get("read", "")),
            str(data.get("crop", "")),
            data.get("value"),
            bool(data.get("rereadable", False)),
            [str(r) for r in data.get("readings", []) if isinstance(r, str)][:MAX_READINGS],
            str(data.get("likely", "")),
            str(data.get("no_crop", "")),
        )


def default_review(answers: Path) -> Path:
    return answers.with_name(answers.stem + ".review.json")


def load_review(path: Path) -> tuple[dict[str, Any], list[ReviewItem]]:
    try:
        data = json.loads(read_capped(path, MAX_JSON_BYTES))
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('a review file')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read the review file ({exc.strerror or exc})") from exc
    except ValueError as exc:
        raise ScanError(f"{path}: not a review file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != "quiz-scan-review":
        raise ScanError(f"{path}: not a review file written by `quiz scan`")
    return data, [ReviewItem.from_json(item) for item in data["items"]]
