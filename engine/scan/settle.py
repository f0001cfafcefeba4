"""Settling the review: each answer the instructor gives put into answers.csv; a page named by hand read."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.scan.class_answers import assemble
from attnquiz.engine.scan.layout import PX_PER_PT, Layout, ScanError, load_layout
from attnquiz.engine.scan.opencv import opencv
from attnquiz.engine.scan.page import read_image
from attnquiz.engine.scan.page_files import MAX_SCAN_BYTES
from attnquiz.engine.scan.review import REVIEW_PREFIX, ReviewItem
from attnquiz.engine.typed_numbers import whole

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


MAX_ANSWERS_BYTES = 20_000_000  # the answers.csv that scan fills in (what `quiz grade` reads)


class AnswerRefused(ScanError):
    """What the instructor gave cannot settle this item (too long, malformed): ask again."""


def answers_text(path: Path) -> str:
    """The text of the answers.csv a scan fills in, read with its cap."""
    try:
        data = read_capped(path, MAX_ANSWERS_BYTES)
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('an answers file')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read the answers file ({exc.strerror or exc})") from exc
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise ScanError(f"{path}: not a UTF-8 text file ({exc.reason})") from None


def settle(
    review_path: Path,
    answers: Path,
    item: ReviewItem,
    value: str,
    items: list[ReviewItem],
    doc: dict[str, Any],
) -> None:
    """Record ``value`` for ``item`` and put it into ``answers.csv`` in place of ``?review N``."""
    import csv
    import io

    from attnquiz.engine.export.files import save

    text = answers_text(answers)
    rows = list(csv.reader(io.StringIO(text)))
    marker = f"{REVIEW_PREFIX}{item.n}"
    for row in rows[1:]:
        for k, cell in enumerate(row):
            if cell == marker:
                row[k] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    item.value = value
    doc["items"] = [i.to_json() for i in items]
    save(
        {
            answers: buffer.getvalue().encode("utf-8"),
            review_path: (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8"),
        }
    )


MAX_SETTLED_LENGTH = 500
"""Characters an instructor's answer may have (a matrix of a few dozen entries fits)."""


def readings(item: ReviewItem) -> list[str]:
    """The readings to offer for a field as choices: those the scan found (a number with two bubbles in
    a column: each of them; the likely one first), or each option filled on a choice question with a
    doubtful mark (``A``, ``C``) and all of them together; else nothing (the answer is typed)."""
    if item.kind != "field":
        return []
    parts = [p.strip() for p in item.read.split(",") if p.strip()]
    letters: list[str] = []
    if parts and all(len(p) == 1 and p.isalpha() and p.isupper() for p in parts):
        letters = parts + ([", ".join(parts)] if len(parts) > 1 else [])
    return list(dict.fromkeys([*item.readings, *letters]))


def settle_answer(
    review_path: Path,
    answers: Path,
    item: ReviewItem,
    value: str,
    items: list[ReviewItem],
    doc: dict[str, Any],
) -> list[ReviewItem]:
    """Settle ``item`` with what the instructor gave, as `quiz scan --fix` and the `quiz serve` page
    both do: a field takes the answer as the student wrote it (empty: no answer); a page whose QR
    code could not be read takes ``STUDENT PAGE`` and is read (what it leaves is returned, and added
    to the review); a page missing or scanned twice can only be scanned again. Refused with a
    `ScanError` that says why, with nothing written."""
    if item.value is not None:
        raise ScanError(f"item {item.n} was already settled ({item.value or 'no answer'})")
    text = value.strip()
    if len(text) > MAX_SETTLED_LENGTH:
        raise AnswerRefused(f"an answer of at most {MAX_SETTLED_LENGTH} characters, please")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise AnswerRefused("an answer on one line, without control characters")
    if item.kind == "page" and text.lower() == STRAY:
        _record(review_path, item, STRAY_VALUE, items, doc)
        return []
    if item.kind == "missing":
        if text.lower() != ABSENT:
            raise AnswerRefused(f"type {ABSENT} if the student did not hand this page in; else scan it again")
        # Its cells become blank answers: counted as not answered, as on a sheet handed in empty.
        settle(review_path, answers, item, "", items, doc)
        _record(review_path, item, ABSENT_VALUE, items, doc)
        return []
    if item.kind == "page":
        if not item.rereadable:
            raise ScanError(
                f"this page's image cannot be read: scan it again, or type {STRAY} to set it aside"
            )
        split = text.split()
        student, page = (whole(split[0]), whole(split[1])) if len(split) == 2 else (None, None)
        if student is None or page is None:
            raise AnswerRefused("give the student number and the page of their sheet, e.g. 12 1")
        return settle_page(review_path, answers, item, student, page, items, doc)
    if item.kind != "field":
        raise ScanError("scan this page again (with --overwrite, or into another file)")
    if text.startswith(REVIEW_PREFIX.strip()):
        raise AnswerRefused(f"{text!r} is how the answers file marks a cell under review, not an answer")
    refused = spreadsheet_formula(text)
    if refused:
        raise AnswerRefused(refused)
    settle(review_path, answers, item, text, items, doc)
    return []


_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")


def spreadsheet_formula(text: str) -> str:
    """Why ``text`` may not go into a cell of ``answers.csv`` ("" when it may): a spreadsheet that opens
    the file runs a cell starting with ``=``, ``+``, ``-`` or ``@`` as a formula, and a formula can call
    out (``=HYPERLINK(…)``, ``=WEBSERVICE(…)``, a ``cmd|`` DDE link). A student's answer never starts
    with ``=`` or ``@``; one starting with a sign may be a number or a formula of the quiz's own
    functions (``-3``, ``-exp(x)``), and is refused only when it calls anything else or holds a
    character that only a spreadsheet formula uses (``|``, ``!``, ``"``)."""
    from attnquiz.engine.formula.arithmetic import FUNCTIONS

    if not text or text[0] not in "=+-@\t\r":
        return ""
    if text[0] in "=@\t\r":
        return f"an answer may not start with {text[0]!r}: a spreadsheet runs such a cell as a formula"
    if any(c in text for c in '|!"') or any(name.lower() not in FUNCTIONS for name in _CALL.findall(text)):
        return (
            "a spreadsheet would run this as a formula (a sign, then a call of a function that is not "
            "one of the quiz's, or | ! \"): write a product with *, e.g. -x*(y+1)"
        )
    return ""


STRAY = "stray"
"""What sets aside a page that is not one of the class's (another export's, a blank sheet, a cover)."""
STRAY_VALUE = "set aside: not a page of these answer sheets"
ABSENT = "absent"
"""What records a page missing from a sheet as not handed in (its answers blank)."""
ABSENT_VALUE = "not handed in (its answers blank)"


def _record(
    review_path: Path, item: ReviewItem, value: str, items: list[ReviewItem], doc: dict[str, Any]
) -> None:
    """Record ``value`` as how ``item`` was settled, in the review file alone."""
    from attnquiz.engine.export.files import save

    item.value = value
    doc["items"] = [i.to_json() for i in items]
    save({review_path: (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")})


def _upright(image: npt.NDArray[np.uint8], layout: Layout) -> npt.NDArray[np.uint8]:
    """A resampled page turned the right way up: the sheet's title and instructions are at the top left,
    where the bottom right is empty; a page that shows neither way is refused, not guessed."""
    import numpy as np

    cv2 = opencv()
    left, top = int(40 * PX_PER_PT), int(40 * PX_PER_PT)
    region = (slice(top, top + int(120 * PX_PER_PT)), slice(left, left + int(220 * PX_PER_PT)))
    turned = cv2.rotate(image, cv2.ROTATE_180)
    ink = float(np.mean(image[region] < 128))
    ink_turned = float(np.mean(turned[region] < 128))
    if ink > 2 * ink_turned and ink > 0.01:
        return image
    if ink_turned > 2 * ink and ink_turned > 0.01:
        return np.asarray(turned, dtype=np.uint8)
    raise ScanError("cannot tell which way up this page is: scan it again")


def settle_page(
    review_path: Path,
    answers: Path,
    item: ReviewItem,
    student: int,
    sheet_page: int,
    items: list[ReviewItem],
    doc: dict[str, Any],
) -> list[ReviewItem]:
    """Read a page whose QR code could not be read, now that the instructor says whose it is, into
    ``answers.csv``; returns what it leaves for review (added to the review file)."""
    import csv
    import io

    import numpy as np

    from attnquiz.engine.export.files import save

    cv2 = opencv()
    if not item.rereadable or not item.crop:
        raise ScanError("this page's image cannot be read: scan it again")
    if not doc.get("sheets"):
        raise ScanError("the review file does not say which answer-sheets.json it was scanned with")
    layout = load_layout(Path(doc["sheets"]))
    spec = layout.pages.get((student, sheet_page))
    if spec is None:
        raise ScanError(f"the answer sheets have no page {sheet_page} for student {student}")
    picture = review_path.parent / item.crop
    try:
        data = np.frombuffer(read_capped(picture, MAX_SCAN_BYTES), dtype=np.uint8)
    except TooLarge as exc:
        raise ScanError(f"{picture}: {exc.said('a scanned page')}") from None
    except OSError as exc:
        raise ScanError(f"{picture}: cannot read the page's image ({exc.strerror or exc})") from exc
    image = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    if image is None:
        raise ScanError(f"{picture}: cannot read the page's image")
    upright = _upright(np.asarray(image, dtype=np.uint8), layout)
    read = read_image(upright, layout, item.source, 0, (student, sheet_page))
    if read.problem:
        raise ScanError(read.problem)
    partial = assemble(layout, [read])
    columns = {f.column for f in spec.fields if f.kind != "student"}
    columns |= {f.column.rsplit(" mark", 1)[0] for f in spec.fields if f.kind == "concept"}
    folder = review_path.parent / (review_path.stem + "-images")
    added: list[ReviewItem] = []
    renumber: dict[str, str] = {}
    outputs: dict[Path, bytes] = {}
    rows = list(csv.reader(io.StringIO(answers_text(answers))))
    first_page_of_student = not any(r and r[0] == str(student) for r in rows[1:])
    if first_page_of_student:
        # The scan had no page of this student: their other pages are missing until scanned (their
        # cells wait for review, never blank answers), and the row is written whole.
        columns = set(partial.rows[student]) - {"student", "code"}
    for new in partial.review:
        if new.kind != "field" and not (new.kind == "missing" and first_page_of_student):
            continue
        old = new.n
        new.n = max((i.n for i in items), default=0) + 1
        if new.crop:
            target = folder / f"{new.n:04d}.png"
            outputs[target] = partial.crops[new.crop]
            new.crop = str(target.relative_to(review_path.parent))
        renumber[f"{REVIEW_PREFIX}{old}"] = f"{REVIEW_PREFIX}{new.n}"
        items.append(new)
        added.append(new)
    cells = partial.rows[student]
    header = rows[0]
    row = next((r for r in rows[1:] if r and r[0] == str(student)), None)
    if row is None:
        row = [""] * len(header)
        row[header.index("student")], row[header.index("code")] = str(student), layout.codes.get(student, "")
        rows.append(row)
        rows[1:] = sorted(rows[1:], key=lambda r: (whole(r[0]) or 0) if r else 0)
    for column in columns:
        if column in header:
            value = cells.get(column, "")
            row[header.index(column)] = renumber.get(value, value)
    for other in items:  # the page "missing" from this student's sheet has now been read
        if other.kind == "missing" and (other.student, other.sheet_page) == (student, sheet_page):
            other.value = "read from a page named by hand"
    item.value = f"student {student} page {sheet_page}"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    doc["items"] = [i.to_json() for i in items]
    outputs[answers] = buffer.getvalue().encode("utf-8")
    outputs[review_path] = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    save(outputs)
    return added
