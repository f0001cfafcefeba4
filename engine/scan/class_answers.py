"""A class's pages assembled into the answers.csv rows and the review items, and both written to disk."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnquiz.engine.scan.layout import FieldSpec, Layout, PageSpec
from attnquiz.engine.scan.page_read import Flag, PageRead, same_reading
from attnquiz.engine.scan.pictures import stacked
from attnquiz.engine.scan.review import NO_FIELD_CROP, NO_PAGE_IMAGE, NO_SCAN, REVIEW_PREFIX, ReviewItem


@dataclass(slots=True)
class ClassScan:
    """The answers read from a class's scans, and what is left to settle."""

    layout: Layout
    rows: dict[int, dict[str, str]]  # student → column → cell
    review: list[ReviewItem]
    crops: dict[str, bytes]  # file name → PNG
    unscanned: list[int]
    pages: int

    def csv(self) -> str:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.layout.columns)
        for student in sorted(self.rows):
            cells = self.rows[student]
            writer.writerow([cells.get(c, "") for c in self.layout.columns])
        return buffer.getvalue()

    @property
    def open_items(self) -> list[ReviewItem]:
        return [item for item in self.review if item.value is None]


def assemble(layout: Layout, pages: Sequence[PageRead], crop_folder: str = "review") -> ClassScan:
    """The class's answers from its pages: a row per student whose sheet was scanned, each
    undecided cell ``?review N``; every undecided thing listed once in the review."""
    review: list[ReviewItem] = []
    crops: dict[str, bytes] = {}

    def add(kind: str, reason: str, image: bytes = b"", **where: Any) -> ReviewItem:
        item = ReviewItem(len(review) + 1, kind, reason, **where)
        if image:
            name = f"{crop_folder}/{item.n:04d}.png"
            crops[name] = image
            item.crop = name
        review.append(item)
        return item

    seen: dict[tuple[int, int], PageRead] = {}
    copies: dict[tuple[int, int], list[PageRead]] = {}  # every scan of each page, the first first
    for page in pages:
        if page.student is None or page.sheet_page is None:
            add(
                "page",
                page.problem,
                page.image,
                source=page.source,
                rereadable=page.resampled,
                no_crop="" if page.image else NO_PAGE_IMAGE,
            )
            continue
        key = (page.student, page.sheet_page)
        for note in page.notes:  # said, and settled: the page's doubtful marks are items of their own
            add(
                "note", f"{page.source}: {note}", source=page.source, student=key[0], sheet_page=key[1]
            ).value = "noted"
        if key in seen:
            first = seen[key]
            same = same_reading(first, page)
            reason = (
                f"student {key[0]}'s page {key[1]} was scanned twice ({first.source} and {page.source})"
                + (": both read the same, the first is used" if same else ": they differ")
            )
            item = add("duplicate", reason, source=page.source, student=key[0], sheet_page=key[1])
            # Settled here: when the two differ, each field that differs is an item of its own.
            item.value = "same" if same else "each field that differs is listed"
            copies[key].append(page)
            continue
        seen[key] = page
        copies[key] = [page]
    for key, scanned in copies.items():
        # A column the scans of one page read differently is not guessed: one item, every scan's crops.
        first = scanned[0]
        columns = sorted({c for copy in scanned for c in copy.values})
        differ = [c for c in columns if any(copy.values.get(c) != first.values.get(c) for copy in scanned)]
        flags = [_read_differently(c, key[1], scanned, layout.pages.get(key)) for c in differ]
        for column in differ:
            first.values.pop(column, None)
        first.flags.extend(flags)
    rows: dict[int, dict[str, str]] = {}
    students = sorted({s for s, _ in seen})
    expected = layout.sheet_pages
    for student in students:
        cells: dict[str, str] = {"student": str(student), "code": layout.codes.get(student, "")}
        entries: dict[str, dict[int, str]] = {}
        flagged: dict[str, ReviewItem] = {}
        entry_readings: list[tuple[ReviewItem, FieldSpec]] = []  # readings of one entry of a vector
        shown: set[tuple[str, int]] = set()  # the vector entries read empty already in an item's crop
        pieces: dict[int, list[tuple[int, str, bytes]]] = {}  # item → its crops (entry, label, PNG), in order
        for sheet_page in range(1, expected.get(student, 1) + 1):
            read = seen.get((student, sheet_page))
            spec = layout.pages.get((student, sheet_page))
            if read is None:
                item = add(
                    "missing",
                    f"page {sheet_page} of student {student}'s sheet was not scanned",
                    student=student,
                    sheet_page=sheet_page,
                    no_crop=NO_SCAN,
                )
                for lost in spec.fields if spec is not None else ():
                    if lost.kind != "student":
                        flagged.setdefault(lost.column, item)
                        if lost.kind == "concept":
                            flagged.setdefault(lost.column.rsplit(" mark", 1)[0], item)
                continue
            for column, values in read.values.items():
                entries.setdefault(column, {}).update(values)
            for f in read.flags:
                own = next((x for x in spec.fields if x.id == f.field), None) if spec is not None else None
                new: list[tuple[int, str, bytes]] = [(-1, "", f.crop)] if f.crop else []
                if own is not None and own.entries > 1 and f.crop and not f.whole_cell:
                    # The cell is settled whole: the entries of the vector read empty on this page are shown
                    # too (a faint entry the scan took for empty is seen there), each labelled.
                    new = [
                        (own.entry, f"entry {own.entry + 1}", f.crop),
                        *(
                            (k, f"entry {k + 1}: read empty", read.blank_crops[own.column, k])
                            for k in range(own.entries)
                            if (own.column, k) in read.blank_crops and (own.column, k) not in shown
                        ),
                    ]
                    shown.update((own.column, k) for k in range(own.entries))
                crop = f.crop if len(new) == 1 and not new[0][1] else stacked([(t, png) for _, t, png in new])
                earlier = flagged.get(f.column)
                if earlier is not None and earlier.kind == "field":
                    # Another entry of the same vector in doubt: the answers file has one cell, so one item
                    # settles it, with each entry's reason and crop (two items would leave the second's
                    # marker nowhere in the file, and settling it would change nothing).
                    earlier.reason += f"; {f.reason}"
                    earlier.read = "; ".join(r for r in (earlier.read, f.read) if r)
                    earlier.readings, earlier.likely = [], ""
                    entry_readings[:] = [(i, o) for i, o in entry_readings if i is not earlier]
                    if new:
                        held = sorted([*pieces.get(earlier.n, []), *new], key=lambda p: p[0])
                        pieces[earlier.n] = held
                        name = earlier.crop or f"{crop_folder}/{earlier.n:04d}.png"
                        crops[name] = stacked([(t, png) for _, t, png in held])
                        earlier.crop, earlier.no_crop = name, ""
                    continue
                item = add(
                    "field",
                    f.reason,
                    crop,
                    source=read.source,
                    student=student,
                    sheet_page=sheet_page,
                    column=f.column,
                    field=f.field,
                    read=f.read,
                    readings=list(f.readings),
                    likely=f.likely,
                    no_crop="" if crop else f.no_crop,
                )
                flagged.setdefault(f.column, item)
                pieces[item.n] = new
                if own is not None and own.entries > 1 and item.readings:
                    entry_readings.append((item, own))
            if read.student_number and read.student_number.lstrip("0") != str(student):
                add(
                    "student-number",
                    f"the student number filled in ({read.student_number}) is not the sheet's ({student}): "
                    "the answers are graded as this sheet's variant; check who wrote it",
                    source=read.source,
                    student=student,
                    sheet_page=sheet_page,
                    value="noted",
                )
        fields = [f for (s, _), spec in layout.pages.items() if s == student for f in spec.fields]
        blanks = {
            where: (sheet_page, crop)
            for sheet_page in range(1, expected.get(student, 1) + 1)
            if (read := seen.get((student, sheet_page))) is not None
            for where, crop in read.blank_crops.items()
        }
        for column in dict.fromkeys(f.column for f in fields if f.kind != "student"):
            if column in flagged:
                continue
            _cell(column, entries.get(column, {}), fields, cells, flagged, add, student, blanks)
        for concept in fields:
            # A concept question's answer column says whether an answer is written on the sheet (read
            # from its box); its mark column holds the marker's mark.
            answer_column = concept.column.rsplit(" mark", 1)[0]
            if concept.kind == "concept" and answer_column not in flagged:
                cells[answer_column] = entries.get(answer_column, {}).get(0, "")
        for item, own in entry_readings:
            # The cell holds the whole vector or matrix: a reading of one entry is offered as the whole,
            # with the other entries as read, and not at all when another entry is in doubt too.
            known = entries.get(own.column, {})
            others = [k for k in range(own.entries) if k != own.entry]
            if (
                all(known.get(k) for k in others)
                and sum(1 for i, _ in entry_readings if i.column == own.column) == 1
            ):
                whole = {
                    r: _vector_cell(
                        own.shape, [r if k == own.entry else known[k] for k in range(own.entries)]
                    )
                    for r in item.readings
                }
                item.readings, item.likely = list(whole.values()), whole.get(item.likely, "")
            else:
                item.readings, item.likely = [], ""
        for column, item in flagged.items():
            cells[column] = f"{REVIEW_PREFIX}{item.n}"
        rows[student] = cells
    for item in review:
        if item.value is None and not item.crop and not item.no_crop:
            item.no_crop = "no image: the scan kept no picture of this"
    unscanned = [s for s in sorted(layout.codes) if s not in rows]
    return ClassScan(layout, rows, review, crops, unscanned, len(pages))


MAX_SCANS_SHOWN = 4  # scans of a page whose crops a field read differently shows (a PDF scanned many times)


def _read_differently(
    column: str, sheet_page: int, scanned: Sequence[PageRead], spec: PageSpec | None
) -> Flag:
    """The flag of a column the scans of one page read differently, with each scan's crops of its
    fields (a vector's entries: each), one scan's below the other's, each labelled by its file."""
    own = [
        f
        for f in (spec.fields if spec is not None else ())
        if f.column == column or (f.kind == "concept" and f.column.rsplit(" mark", 1)[0] == column)
    ]
    shown = scanned[:MAX_SCANS_SHOWN]
    parts = [
        (copy.source + (f", entry {f.entry + 1}" if f.entries > 1 else ""), copy.field_crops[f.id])
        for copy in shown
        for f in own
        if f.id in copy.field_crops
    ]
    crop = stacked(parts) if parts else b""
    what = f"question {own[0].title.split(' ')[0]}: " if own else ""
    said = "; ".join(f"{copy.source}: {_said(copy.values.get(column))}" for copy in shown)
    more = len(scanned) - len(shown)
    return Flag(
        f"{what}read differently on {len(scanned)} scans of page {sheet_page} ({said}"
        + (f"; {more} more scans not shown)" if more else ")"),
        own[0].id if own else "",
        column,
        own[0].title if own else "",
        crop,
        no_crop="" if crop else NO_FIELD_CROP,
        whole_cell=True,
    )


def _said(entries: dict[int, str] | None) -> str:
    """What one scan read in a column, for the review: its entries, or that it read nothing sure."""
    if not entries:
        return "not read"
    return ", ".join(entries[k] or "empty" for k in sorted(entries))


def _cell(
    column: str,
    entries: dict[int, str],
    fields: Sequence[FieldSpec],
    cells: dict[str, str],
    flagged: dict[str, ReviewItem],
    add: Callable[..., ReviewItem],
    student: int,
    blanks: dict[tuple[str, int], tuple[int, bytes]] | None = None,
) -> None:
    own = [f for f in fields if f.column == column]
    if own and own[0].kind == "number" and own[0].shape:
        shape = own[0].shape
        texts = [entries.get(k, "") for k in range(own[0].entries)]
        if not any(texts):
            cells[column] = ""
            return
        if not all(texts):
            missing = [k for k, t in enumerate(texts) if not t]
            empty = ", ".join(str(k + 1) for k in missing)
            # The first empty entry's page and crop: where the instructor looks for what was left out.
            sheet_page, crop = (blanks or {}).get((column, missing[0]), (None, b""))
            flagged[column] = add(
                "field",
                f"question {own[0].title.split(' ')[0]}: entries {empty} are empty",
                crop,
                student=student,
                sheet_page=sheet_page,
                column=column,
                read=", ".join(texts),
            )
            return
        cells[column] = _vector_cell(shape, texts)
        return
    cells[column] = entries.get(0, "")


def _vector_cell(shape: Sequence[int], texts: Sequence[str]) -> str:
    """A vector's or matrix's entries as the answers file writes them: ``[1, 2]``, ``[[1, 2], [3, 4]]``."""
    if len(shape) == 2:
        rows = [texts[r * shape[1] : (r + 1) * shape[1]] for r in range(shape[0])]
        return "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    return "[" + ", ".join(texts) + "]"


def write_outputs(scan: ClassScan, answers: Path, review: Path, sheets: Path | None = None) -> list[Path]:
    """Write ``answers.csv``, the review file and its cropped images, all or nothing."""
    from attnquiz.engine.export.files import save

    folder = review.parent / (review.stem + "-images")
    outputs: dict[Path, bytes] = {answers: scan.csv().encode("utf-8")}
    for name, data in scan.crops.items():
        outputs[folder / Path(name).name] = data
    for item in scan.review:
        if item.crop:
            item.crop = str((folder / Path(item.crop).name).relative_to(review.parent))
    doc = {
        "format": "quiz-scan-review",
        "answers": str(answers.resolve()),
        "sheets": str(sheets.resolve()) if sheets is not None else "",
        "layout_columns": list(scan.layout.columns),
        "unscanned": scan.unscanned,
        "items": [item.to_json() for item in scan.review],
    }
    outputs[review] = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    if scan.crops:
        folder.mkdir(parents=True, exist_ok=True)
    return save(outputs)
