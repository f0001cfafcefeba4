"""What one field of a page says, decided from its bubbles' states, or the flag sending it to review.

Any unclear bubble, two filled bubbles in one digit column, a gap in a number, or two options of a
single choice send the field to the review with a cropped image."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from attnquiz.engine.scan.handwriting import has_writing
from attnquiz.engine.scan.layout import FieldSpec, Layout
from attnquiz.engine.scan.page_read import Flag, PageRead
from attnquiz.engine.scan.pictures import crop_png

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


WRITTEN_ON_SHEET = "(written on the answer sheet)"  # a concept question's answer cell (docs/paper.md)


def decide(
    spec: FieldSpec,
    states: list[str],
    page: npt.NDArray[np.uint8],
    dark: npt.NDArray[np.float32],
    result: PageRead,
    layout: Layout,
    written: dict[str, str] | None = None,
    touched: list[bool] | None = None,
) -> None:
    """What one field says, or a flag for the review. ``written``: whether a digit is written in each
    digit column's box (a number or the student number); ``touched``: each bubble has ink just outside
    it (a stroke of a cross-out, maybe)."""
    by_position: dict[str, list[tuple[str, str]]] = {}
    for (position, value, _, _), state in zip(spec.bubbles, states, strict=True):
        by_position.setdefault(position, []).append((value, state))
    struck = {
        (position, value)
        for (position, value, _, _), hit in zip(spec.bubbles, touched or [False] * len(states), strict=True)
        if hit
    }
    what = "the student number" if spec.kind == "student" else f"question {spec.title}"

    def flag(reason: str, read: str = "", readings: Sequence[str] = (), likely: str = "") -> None:
        result.flags.append(
            Flag(
                f"{what}: {reason}",
                spec.id,
                spec.column,
                spec.title,
                crop_png(page, spec.box),
                read,
                tuple(dict.fromkeys([likely, *readings] if likely else readings)),
                likely,
            )
        )

    unclear = [p for p, marks in by_position.items() if any(s == "unclear" for _, s in marks)]
    filled = {p: [v for v, s in marks if s == "filled"] for p, marks in by_position.items()}
    if spec.kind in ("number", "student"):
        from attnquiz.engine.export.pdf.answer_sheet import NumberGrid

        assert spec.grid is not None
        grid = NumberGrid.from_json(spec.grid)
        doubled = [p for p, values in filled.items() if len(values) > 1]
        values = {p: v[0] for p, v in filled.items() if len(v) == 1}
        if unclear:
            # Only bubbles with strokes past their circle unclear (an X the scan saw in part), each beside
            # one clear digit: that digit is the likely reading (the X cancels); a faint mark has none.
            doubtful = [(p, v) for p, marks in by_position.items() for v, s in marks if s == "unclear"]
            likely = ""
            if (
                all(d in struck for d in doubtful)
                and all(len(filled[p]) == 1 for p in unclear)
                and not doubled
            ):
                likely = _spelled(grid, values)
            flag(
                f"a faint, erased or half-crossed mark in {_columns(unclear)}",
                likely,
                [likely] if likely else [],
                likely,
            )
            return
        if doubled:
            options, likely = _doubled_readings(grid, values, {p: filled[p] for p in doubled}, struck)
            flag(
                f"two bubbles filled in {_columns(doubled)}"
                + (" (one has a stroke past its circle: crossed out?)" if likely else ""),
                likely,
                options,
                likely,
            )
            return
        # The digits written above the grid are the student's second statement of the number: a column
        # written but not bubbled (a digit dropped) or bubbled but not written is not read.
        written = written or {}
        unbubbled = [p for p, w in written.items() if w != "blank" and p not in values]
        unwritten = [p for p in values if p in written and written[p] != "written"]
        read_so_far = _spelled(grid, values)
        if unbubbled:
            flag(
                f"{'a digit' if len(unbubbled) == 1 else 'digits'} written (or a mark) above "
                f"{_columns(unbubbled)} with no bubble filled: read the written number",
                read_so_far,
            )
            return
        if unwritten:
            flag(
                f"a bubble filled in {_columns(unwritten)} with no digit written above it: check the number",
                read_so_far,
                [read_so_far] if read_so_far else [],
            )
            return
        try:
            text = grid.read(values)
        except ValueError as exc:
            flag(str(exc))
            return
        if spec.kind == "student":
            result.student_number = text
        else:
            result.values.setdefault(spec.column, {})[spec.entry] = text
            if not text and spec.entries > 1:
                result.blank_crops[spec.column, spec.entry] = crop_png(page, spec.box)
        return
    chosen = [v for v, s in ((v, s) for marks in by_position.values() for v, s in marks) if s == "filled"]
    if unclear:
        doubtful = [(p, v) for p, marks in by_position.items() for v, s in marks if s == "unclear"]
        likely = ", ".join(chosen) if spec.kind == "choice" and all(d in struck for d in doubtful) else ""
        if likely and not spec.multiple and len(chosen) != 1:
            likely = ""
        flag("a faint, erased or half-crossed mark", ", ".join(chosen), [likely] if likely else [], likely)
        return
    if spec.kind == "choice":
        if not spec.multiple and len(chosen) > 1:
            clean = [v for v in chosen if ("letter", v) not in struck]
            likely = clean[0] if len(clean) == 1 else ""
            flag(
                f"{len(chosen)} options filled in a question with one answer"
                + (" (the others have strokes past their circles: crossed out?)" if likely else ""),
                ", ".join(chosen),
                chosen,
                likely,
            )
            return
        result.values.setdefault(spec.column, {})[0] = ", ".join(chosen)
        return
    boxed = has_writing(dark, spec.write_box)
    if spec.kind == "concept":
        # The answer stays on paper: the answers file says that there is one (or not), the mark is the score.
        item = spec.column.rsplit(" mark", 1)[0]
        result.values.setdefault(item, {})[0] = WRITTEN_ON_SHEET if boxed else ""
        if len(chosen) > 1:
            flag("two marks filled by the marker", ", ".join(chosen))
            return
        result.values.setdefault(spec.column, {})[0] = chosen[0] if chosen else ""
        return
    # A formula (or a shape in symbols), marked right or wrong by the marker.
    if chosen == ["right"] and spec.answer:
        result.values.setdefault(spec.column, {})[0] = spec.answer
        return
    if not chosen and not boxed:
        result.values.setdefault(spec.column, {})[0] = ""
        return
    reason = {
        (): "written but not marked: type what the student wrote (quiz grade marks it)",
        ("wrong",): "marked wrong: type what the student wrote, so that quiz grade can name the mistake",
        ("right",): "marked right: type what the student wrote",
    }.get(tuple(chosen), "both right and wrong are filled")
    flag(reason, ", ".join(chosen))


MAX_READINGS = 6  # readings offered for a field with doubled columns (two in each of two columns: four)


def _doubled_readings(
    grid: Any, values: dict[str, str], doubled: dict[str, list[str]], struck: set[tuple[str, str]]
) -> tuple[list[str], str]:
    """The numbers a grid with two (or more) bubbles filled in some columns may mean: one bubble of each
    such column with the rest; and the likely one, when in every such column all bubbles but one have
    ink past their circle (a cross-out the scan could not be sure of)."""
    import itertools

    options: list[str] = []
    for combination in itertools.product(*doubled.values()):
        text = _spelled(grid, {**values, **dict(zip(doubled, combination, strict=True))})
        if text and text not in options:
            options.append(text)
        if len(options) >= MAX_READINGS:
            break
    kept = {p: [v for v in vs if (p, v) not in struck] for p, vs in doubled.items()}
    likely = ""
    if all(len(v) == 1 for v in kept.values()):
        likely = _spelled(grid, {**values, **{p: v[0] for p, v in kept.items()}})
    return options, likely


def _spelled(grid: Any, values: dict[str, str]) -> str:
    """What the filled bubbles spell, for the instructor's information ("" when they spell no number)."""
    try:
        return str(grid.read(values))
    except ValueError:
        return ""


def _columns(positions: Sequence[str]) -> str:
    names = {"sign": "the sign", "esign": "the sign of the power of ten"}
    said = [
        names.get(p) or f"{ {'i': 'whole-part', 'd': 'decimal', 'e': 'power'}[p[0]] } column {int(p[1:]) + 1}"
        for p in positions
    ]
    return ", ".join(s.replace("{", "").replace("}", "").strip() for s in said)
