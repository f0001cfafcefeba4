"""Vectors and matrices: a response is read as a list or as rows, compared entry by entry, and a wrong
one is checked for too few digits, a sign slip, a transposed matrix and which entries are off."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from attnquiz.engine.answers import parse, read_matrices
from attnquiz.engine.answers.kinds import MatrixAnswer, Mistake, VectorAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.grading.numbers import exactly, near, resolved, too_coarse
from attnquiz.engine.grading.outcome import (
    PRECISION,
    SIGN,
    TRANSPOSED,
    Grade,
    correct,
    invalid,
    named,
    slip,
    wrong,
)


def _entries_list(positions: Sequence[str]) -> str:
    """'entry 2 is', 'entries 2 and 3 are', 'entries 1, 2 and 4 are'."""
    if len(positions) == 1:
        return f"entry {positions[0]} is"
    return f"entries {', '.join(positions[:-1])} and {positions[-1]} are"


def _all_near(tolerance: Tolerance, targets: Sequence[Any], values: Sequence[parse.Number]) -> bool:
    return len(targets) == len(values) and all(
        isinstance(t, int | float) and near(tolerance, t, v) for t, v in zip(targets, values, strict=True)
    )


def flattened(values: Sequence[Sequence[parse.Number]]) -> list[parse.Number]:
    """The entries of rows, row after row."""
    return [v for row in values for v in row]


def _coarse_entries(
    tolerance: Tolerance, targets: Sequence[float], values: Sequence[parse.Number]
) -> list[int] | None:
    """Indices of entries written too coarsely, when every other entry is right; else None."""
    coarse: list[int] = []
    for index, (target, value) in enumerate(zip(targets, values, strict=True)):
        if near(tolerance, target, value):
            continue  # a right entry is never "too coarse", however few digits it needs (768)
        if not too_coarse(tolerance, target, value):
            return None
        coarse.append(index)
    return coarse or None


def grade_vector(
    answer: VectorAnswer,
    response: str,
    mistakes: Sequence[Mistake],
    alternatives: Sequence[tuple[float, ...]] = (),
) -> Grade:
    """Grade a vector: a single row or column of a matrix is one too. ``alternatives``: other
    answers the entries may agree with (see `attnquiz.engine.grading.grade.grade_answer`)."""
    found = read_matrices.structure(response)
    n = len(answer.values)
    if isinstance(found, parse.Invalid):
        return invalid(answer, found.reason, found.read_as)
    if isinstance(found, parse.Number):
        return invalid(answer, f"Expected a vector of {n} numbers, but read a single number.", found.echo())
    values: tuple[parse.Number, ...]
    flat, matrix = split(found)
    if matrix is not None:
        rows = list(matrix)
        if len(rows) == 1 or all(len(r) == 1 for r in rows):
            values = tuple(flattened(rows))  # a single row or a single column is a vector
        else:
            shown = parse.echo_structure(found)
            return invalid(
                answer,
                f"Expected a vector of {n} numbers, but read a {len(rows)}×{len(rows[0])} matrix.",
                shown,
            )
    else:
        values = flat
    read = parse.echo_structure(values)
    tolerance = answer.tolerance
    if _all_near(tolerance, answer.values, values):
        return correct(read)
    listed = next(
        (m for m in mistakes if isinstance(m.value, tuple) and _all_near(tolerance, m.value, values)), None
    )
    if listed is not None and exactly(listed, tolerance, values):
        return named(listed, read)
    if len(values) == n:
        coarse = _coarse_entries(tolerance, answer.values, values)
        if coarse is not None:
            where = _entries_list([str(i + 1) for i in coarse])
            feedback = (
                f"Your digits agree with the answer, but {where} written with too few digits: give every "
                f"entry {tolerance.describe()}."
            )
            return slip(PRECISION, tuple(v.value for v in values), feedback, read)
    if listed is not None:
        return named(listed, read)
    if len(values) != n:
        hint = ""
        if len(values) > n and _GROUPED_IN_A_LIST.search(response):
            hint = " Inside a list a comma separates entries: write 589824, not 589,824."
        return wrong(f"The answer has {n} entries; you gave {len(values)}.{hint}", read)
    negated = [parse.Number(-v.value, None, v.text) for v in values]
    if _all_near(tolerance, answer.values, negated) and any(resolved(tolerance, t) for t in answer.values):
        feedback = "Every entry has the wrong sign: check the sign of each step."
        return slip(SIGN, tuple(v.value for v in values), feedback, read)
    off = [
        str(i + 1)
        for i, (t, v) in enumerate(zip(answer.values, values, strict=True))
        if not near(tolerance, t, v)
        and not any(len(a) == n and near(tolerance, a[i], v) for a in alternatives)
    ]
    return wrong(_off_message(off, n), read)


_GROUPED_IN_A_LIST = re.compile(r"(?<![\d.])\d{1,3},\d{3}(?![\d.])")  # 589,824 inside [768, 589,824]


def split(found: parse.Vector | parse.Matrix) -> tuple[parse.Vector, parse.Matrix | None]:
    """A read list as either a vector (flat) or a matrix (rows)."""
    if found and isinstance(found[0], tuple):
        return (), found
    return cast(parse.Vector, found), None


def _off_message(off: Sequence[str], total: int) -> str:
    if not off:  # every entry agrees with some accepted answer, but not all with the same one
        return (
            "Not correct: each entry follows from some of your earlier values, but not all from the same "
            "ones: work every entry from the same values."
        )
    if len(off) == total and total > 1:
        return "Not correct: every entry is off."
    where = _entries_list(off)
    return f"Not correct: {where} off."


def grade_matrix(
    answer: MatrixAnswer,
    response: str,
    mistakes: Sequence[Mistake],
    alternatives: Sequence[tuple[tuple[float, ...], ...]] = (),
) -> Grade:
    """Grade a matrix: a flat list is one when the matrix is a single row or column. ``alternatives``:
    other answers the entries may agree with (see `attnquiz.engine.grading.grade.grade_answer`)."""
    found = read_matrices.structure(response)
    r, c = answer.shape
    if isinstance(found, parse.Invalid):
        return invalid(answer, found.reason, found.read_as)
    if isinstance(found, parse.Number):
        return invalid(answer, f"Expected a {r}×{c} matrix, but read a single number.", found.echo())
    rows: list[tuple[parse.Number, ...]]
    flat, matrix = split(found)
    if matrix is not None:
        rows = list(matrix)
    else:
        if r == 1 and len(flat) == c:
            rows = [tuple(flat)]
        elif c == 1 and len(flat) == r:
            rows = [(v,) for v in flat]
        else:
            return invalid(
                answer,
                f"Expected a {r}×{c} matrix, but read a list of {len(flat)} numbers: separate the rows "
                "with `;` or new lines, or write [[a, b], [c, d]].",
                parse.echo_structure(tuple(flat)),
            )
    read = parse.echo_structure(tuple(rows))
    tolerance = answer.tolerance
    shape = (len(rows), len(rows[0]))
    if shape == (r, c) and all(_all_near(tolerance, t, v) for t, v in zip(answer.rows, rows, strict=True)):
        return correct(read)
    listed = next((m for m in mistakes if _matrix_matches(tolerance, m.value, rows)), None)
    if listed is not None and exactly(listed, tolerance, flattened(rows)):
        return named(listed, read)
    if shape == (r, c):
        coarse = _coarse_entries(tolerance, [t for row in answer.rows for t in row], flattened(rows))
        if coarse is not None:
            where = _entries_list([f"({i // c + 1}, {i % c + 1})" for i in coarse])
            feedback = (
                f"Your digits agree with the answer, but {where} written with too few digits: give every "
                f"entry {tolerance.describe()}."
            )
            return slip(PRECISION, tuple(tuple(v.value for v in row) for row in rows), feedback, read)
    if listed is not None:
        return named(listed, read)
    as_values = tuple(tuple(v.value for v in row) for row in rows)
    if shape == (c, r) and _matrix_matches(tolerance, _transpose(answer.rows), rows):
        feedback = (
            "That is the transpose of the answer: rows and columns are swapped. Check which index "
            "runs along the rows (queries along rows, keys along columns)."
        )
        return slip(TRANSPOSED, as_values, feedback, read)
    if shape != (r, c):
        return wrong(f"The answer is a {r}×{c} matrix; you gave a {shape[0]}×{shape[1]} one.", read)
    others = [a for a in alternatives if len(a) == r and all(len(row) == c for row in a)]
    off = [
        f"({i + 1}, {j + 1})"
        for i, (target_row, row) in enumerate(zip(answer.rows, rows, strict=True))
        for j, (t, v) in enumerate(zip(target_row, row, strict=True))
        if not near(tolerance, t, v) and not any(near(tolerance, a[i][j], v) for a in others)
    ]
    return wrong(_off_message(off, r * c), read)


def _transpose(rows: Sequence[Sequence[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(zip(*rows, strict=True))


def _matrix_matches(tolerance: Tolerance, target: Any, rows: Sequence[Sequence[parse.Number]]) -> bool:
    if not isinstance(target, tuple) or len(target) != len(rows):
        return False
    return all(isinstance(t, tuple) and _all_near(tolerance, t, v) for t, v in zip(target, rows, strict=True))


__all__ = ["flattened", "grade_matrix", "grade_vector", "split"]
