"""What one scanned page reads as: whose page it is, its fields' values, the flags of what is undecided."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Flag:
    """Something on a page that is not decided by the scan: a field, or the page itself."""

    reason: str
    field: str = ""
    column: str = ""
    title: str = ""
    crop: bytes = b""  # PNG
    read: str = ""  # what the bubbles would spell, for the instructor's information
    readings: tuple[str, ...] = ()  # what the student may have meant, offered as choices
    likely: str = ""  # the reading the marks point to (taken with one key), "" when none does
    no_crop: str = ""  # why there is no ``crop``, said in the review
    whole_cell: bool = False  # ``crop`` shows every entry of a vector already (each scan's, labelled)


@dataclass(slots=True)
class PageRead:
    """One scanned page: where it came from, whose page it is, and what its fields say."""

    source: str
    index: int
    student: int | None = None
    sheet_page: int | None = None
    values: dict[str, dict[int, str]] = field(default_factory=dict)  # column → entry → text
    flags: list[Flag] = field(default_factory=list)
    student_number: str = ""
    problem: str = ""  # why the page could not be read at all (then ``image`` holds it)
    image: bytes = b""  # PNG of the page, kept when its identity must be settled by hand
    resampled: bool = False  # ``image`` is the page mapped onto its layout: it can be read once named
    notes: list[str] = field(default_factory=list)  # what the instructor should know about the page
    # The crop of each entry of a vector or matrix read blank: shown if some of its entries are filled.
    blank_crops: dict[tuple[str, int], bytes] = field(default_factory=dict)
    # The crop of every field (field id → PNG), kept only when asked: for a page scanned twice whose two
    # scans read differently (kept for every page, a large class's crops would fill the memory).
    field_crops: dict[str, bytes] = field(default_factory=dict)


def same_reading(first: PageRead, other: PageRead) -> bool:
    """Whether two scans of one page read the same: the same values and the same doubts."""
    return first.values == other.values and [f.reason for f in first.flags] == [f.reason for f in other.flags]
