"""Grading a code answer: run the student's function in the sandbox, and the reference and each mutant
(in quiz's process: they are quiz's own code) on the same test inputs; compare.

- equal to the reference on every test, within the tolerance → right;
- equal to a mutant on every test (its value, or the same exception) → that named mistake, with the
  notes' explanation;
- otherwise wrong, the first failing test described in the course's words: a shape ("returns (4, 3);
  the answer is (4, 2)"), an exception (its last line and the line of the student's code, with the
  inner sizes of a matrix product spelled out), or values that differ;
- a program the sandbox stopped (too slow, too much memory or output, a crash) → wrong, saying why.

A syntax error or a missing function is *invalid* (it costs nothing, like unreadable text). Partial
credit is by test: the score is the share of tests passed.
"""

from __future__ import annotations

import functools
import math
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from attnquiz.engine.answers.kinds import CodeAnswer, Mistake
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.code.sandbox import Failure, Limits, Outcome, Returned, run
from attnquiz.engine.code.task_model import Args, CodeTask, shapes_of
from attnquiz.engine.code.tasks import task
from attnquiz.engine.extras import unavailable
from attnquiz.engine.markup.tex import escape_markdown

MAX_SOURCE = 100_000
"""The longest code accepted (characters); longer is invalid, unread."""

Result = Returned | Failure
Status = Literal["correct", "partial", "wrong", "invalid"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What grading code found, as `attnquiz.engine.grading.outcome.Grade` holds it (which builds one from
    this:
    this module does not import the grader, which imports it when a code answer is graded)."""

    status: Status
    score: float
    feedback: str
    mistake: Mistake | None
    read_as: str


@dataclass(frozen=True)
class Expected:
    """A variant's tests and what the reference and each mutant give on them."""

    tests: tuple[Args, ...]
    reference: tuple[Result, ...]
    mutants: dict[str, tuple[Result, ...]]


def returned(value: Any) -> Returned:
    """A value computed in this process, in the form the sandbox sends back (floats, shape, dtype)."""
    if isinstance(value, bool | int | float) and not isinstance(value, bool):
        return Returned("number", values=(float(value),))
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return Returned(
            "array",
            values=tuple(value.astype(float).ravel().tolist()),
            shape=value.shape,
            dtype=str(value.dtype),
        )
    if isinstance(value, list):  # a nested list of numbers is an array, as the sandbox reads it
        as_array = np.asarray(value)
        if as_array.dtype.kind in "biuf":
            return returned(as_array)
    if isinstance(value, tuple | list):
        return Returned("tuple", items=tuple(returned(v) for v in value))
    return Returned("other", what=f"a {type(value).__name__}")


def call(fn: Callable[..., Any], args: Args) -> Result:
    """``fn(*args)`` as a result: its value, or the exception it raised (mutants may raise)."""
    with np.errstate(all="ignore"):
        try:
            return returned(fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
        except Exception as exc:  # a mutant's error is its result (Q @ K raises)
            return Failure(type(exc).__name__, f"{type(exc).__name__}: {exc}"[:500])


@functools.lru_cache(maxsize=64)
def expected(name: str, draw: int) -> Expected:
    """The tests of a variant, with the reference's and the mutants' results on them."""
    code_task = task(name)
    tests = tuple(code_task.tests(draw))
    reference = tuple(call(code_task.reference, args) for args in tests)
    mutants = {m.tag: tuple(call(m.fn, args) for args in tests) for m in code_task.mutants}
    return Expected(tests, reference, mutants)


def _shape(result: Returned) -> tuple[int, ...] | None:
    if result.kind == "array":
        return result.shape
    if result.kind == "number":
        return ()
    return None


def same(a: Result, b: Result, tolerance: Tolerance, *, nan_equal: bool = False) -> bool:
    """Whether two results agree: equal shapes and values within ``tolerance``, or the same exception."""
    if isinstance(a, Failure) or isinstance(b, Failure):
        # The same error: its type and its message (NumPy's names the sizes that clash).
        return (
            isinstance(a, Failure) and isinstance(b, Failure) and (a.type, a.message) == (b.type, b.message)
        )
    if a.kind == "tuple" or b.kind == "tuple":
        return (
            a.kind == b.kind == "tuple"
            and len(a.items) == len(b.items)
            and all(same(x, y, tolerance, nan_equal=nan_equal) for x, y in zip(a.items, b.items, strict=True))
        )
    shape_a, shape_b = _shape(a), _shape(b)
    if shape_a is None or shape_b is None or shape_a != shape_b:
        return False
    x = np.asarray(a.values, dtype=float)
    y = np.asarray(b.values, dtype=float)
    return bool(np.allclose(x, y, rtol=tolerance.rtol, atol=tolerance.atol, equal_nan=nan_equal))


def _test_name(index: int) -> str:
    return "the example" if index == 0 else f"hidden test {index}"


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


_MATMUL = re.compile(r"size (\d+) is different from (\d+)")


def _exception_text(failure: Failure) -> str:
    """An exception in the course's words: its last line, the line of the student's code, and for a
    matrix product whose inner sizes differ, that rule spelled out."""
    text = f"`{_code(failure.message)}`"
    if failure.line:
        text += f" at line {failure.line}" + (f": `{_code(failure.text)}`" if failure.text else "")
    found = _MATMUL.search(failure.message)
    if "matmul" in failure.message and found:
        text += (
            f". In a matrix product `A @ B` the inner sizes must match (columns of A = rows of B), "
            f"here {found.group(2)} and {found.group(1)}: check which operand needs a transpose"
        )
    elif "could not be broadcast" in failure.message:
        text += ". The arrays' shapes do not line up: check `keepdims=True` and which axis you sum over"
    return text


def _code(text: str) -> str:
    """Text safe inside a Markdown code span (backticks would end it; a span is one line)."""
    return " ".join(text.replace("`", "'").split())[:300] or " "


_KINDS = {"tuple": "a tuple", "array": "an array", "number": "a number", "other": "something else"}


def _describe(got: Result, want: Result, index: int, tolerance: Tolerance, what: str = "function") -> str:
    """Why ``got`` is not ``want`` on test ``index``, in the course's words (``what`` the student
    wrote: a function, or a class)."""
    where = _test_name(index)
    if isinstance(got, Failure):
        return f"On {where} your {what} raised {_exception_text(got)}."
    if isinstance(want, Failure):  # never for a sound reference; said plainly if it were
        return f"On {where} the reference raised an error: report this question."
    if got.kind == "other":
        return (
            f"On {where} your function returned {escape_markdown(got.what)}, not a NumPy array or a number."
        )
    shape_got, shape_want = _shape(got), _shape(want)
    if got.kind == "tuple" or want.kind == "tuple" or shape_got is None or shape_want is None:
        return f"On {where} your function returned {_KINDS[got.kind]}; the answer is {_KINDS[want.kind]}."
    if shape_got != shape_want:
        return (
            f"On {where} your function returned shape {_shape_text(shape_got)}; the answer has shape "
            f"{_shape_text(shape_want)}."
        )
    x = np.asarray(got.values, dtype=float)
    y = np.asarray(want.values, dtype=float)
    if not np.all(np.isfinite(x)):
        return f"On {where} your function returned `nan` or `inf` where the answer is finite."
    off = ~np.isclose(x, y, rtol=tolerance.rtol, atol=tolerance.atol)
    first = int(np.argmax(off))
    position = tuple(int(i) for i in np.unravel_index(first, shape_want)) if shape_want else ()
    at = f" at {list(position)}" if position else ""
    return (
        f"On {where} {int(off.sum())} of {off.size} values differ from the answer (first{at}: yours "
        f"{x[first]:.6g}, the answer {y[first]:.6g})."
    )


def _mistake(tag: str, mistakes: Sequence[Mistake], code_task: CodeTask, tests: Sequence[Args]) -> Mistake:
    listed = next((m for m in mistakes if m.tag == tag), None)
    mutant = next(m for m in code_task.mutants if m.tag == tag)
    feedback = listed.feedback if listed is not None else mutant.feedback
    for name, shape in shapes_of(code_task.arguments, tests[0]).items():
        feedback = feedback.replace("{shape:" + name + "}", shape)
    return Mistake(tag, frozenset({tag}), feedback)


def classify(answer: CodeAnswer, results: Sequence[Result], mistakes: Sequence[Mistake] = ()) -> Verdict:
    """The grade of a function whose results on the variant's tests are ``results`` (in order)."""
    code_task = task(answer.task)
    found = expected(answer.task, answer.draw)
    total = len(found.tests)
    if len(results) != total:
        return Verdict("wrong", 0.0, "Your code did not give a result for every test.", None, "")
    tolerance = answer.tolerance
    passed = [same(got, want, tolerance) for got, want in zip(results, found.reference, strict=True)]
    score = sum(passed) / total
    read_as = f"{answer.signature}: {sum(passed)} of {total} tests pass"
    if all(passed):
        return Verdict(
            "correct", 1.0, f"Right: your {code_task.what} passes all {total} tests.", None, read_as
        )
    status: Status = "partial" if score > 0 else "wrong"
    for tag, outputs in found.mutants.items():
        if all(same(got, m, tolerance, nan_equal=True) for got, m in zip(results, outputs, strict=True)):
            mistake = _mistake(tag, mistakes, code_task, found.tests)
            feedback = f"{mistake.feedback} ({sum(passed)} of {total} tests pass.)"
            first = results[passed.index(False)]
            if isinstance(first, Failure):
                feedback = f"Your {code_task.what} raised {_exception_text(first)}. {feedback}"
            return Verdict(status, score, feedback, mistake, read_as)
    index = passed.index(False)
    feedback = _describe(results[index], found.reference[index], index, tolerance, code_task.what)
    feedback += f" {sum(passed)} of {total} tests pass."
    return Verdict(status, score, feedback, None, read_as)


def _invalid(why: str) -> Verdict:
    return Verdict("invalid", 0.0, why, None, "")


def grade_code(
    answer: CodeAnswer, source: str, mistakes: Sequence[Mistake] = (), limits: Limits | None = None
) -> Verdict:
    """Run ``source`` in the sandbox on the variant's tests and grade what it returns."""
    code_task = task(answer.task)
    if not source.strip():
        return _invalid(f"Write the {code_task.what} `{answer.signature}` (start from the stub).")
    missing = unavailable(code_task.needs)
    if missing:
        # Not the student's doing either: their code would fail at its first import.
        return _invalid(f"This question {missing}: your code was not run.")
    if len(source) > MAX_SOURCE:
        return _invalid(f"The code is too long ({len(source):,} characters; the limit is {MAX_SOURCE:,}).")
    if "\x00" in source:
        return _invalid("The code holds a NUL character: save it as a plain text file.")
    found = expected(answer.task, answer.draw)
    try:
        outcome = run(
            source,
            answer.function,
            found.tests,
            *(() if limits is None else (limits,)),
            harness=code_task.harness,
            preload=code_task.needs,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        # Not the student's doing: nothing is counted, and the reason is said.
        return _invalid(
            f"Your code could not be run: the sandbox did not start ({escape_markdown(str(exc))})."
        )
    return grade_outcome(answer, outcome, mistakes)


def grade_outcome(answer: CodeAnswer, outcome: Outcome, mistakes: Sequence[Mistake] = ()) -> Verdict:
    """The grade of what the sandbox reported."""
    if outcome.stopped:
        return Verdict(
            "wrong", 0.0, f"{escape_markdown(outcome.stopped[:1].upper() + outcome.stopped[1:])}.", None, ""
        )
    if outcome.load is not None:
        failure = outcome.load
        if failure.type in {"SyntaxError", "IndentationError", "TabError"}:
            return _invalid(f"Your code cannot be read: {_exception_text(failure)}.")
        return Verdict(
            "wrong", 0.0, f"Your code raised {_exception_text(failure)} before any test ran.", None, ""
        )
    if outcome.missing:
        first_line = task(answer.task).first_line
        return _invalid(f"Your code does not define `{answer.function}`: write `{first_line}`.")
    return classify(answer, outcome.results, mistakes)


def checked(answer: CodeAnswer) -> list[str]:
    """Problems of a variant's tests (for ``quiz check``): the reference is right on them, each mutant is
    caught and named as itself, and no two mutants (nor a mutant and the reference) agree on every test."""
    found = expected(answer.task, answer.draw)
    problems: list[str] = []
    for index, result in enumerate(found.reference):
        if not isinstance(result, Returned) or not np.all(np.isfinite(_values(result))):
            problems.append(f"the reference gives no finite result on {_test_name(index)}")
    if problems:
        return problems
    graded = classify(answer, found.reference)
    if graded.status != "correct":
        problems.append(f"the reference grades {graded.status}: {graded.feedback}")
    for tag, outputs in found.mutants.items():
        graded = classify(answer, outputs)
        named = graded.mistake.tag if graded.mistake is not None else None
        if named != tag:
            problems.append(
                f"mistake {tag!r}: its outputs grade {graded.status}"
                + (f" as {named!r}" if named else " with no mistake named")
            )
    return problems


def _values(result: Returned) -> Any:
    if result.kind == "tuple":
        return np.concatenate(
            [np.asarray(_values(r), dtype=float).ravel() for r in result.items] or [np.zeros(0)]
        )
    return (
        np.asarray(result.values, dtype=float)
        if result.values
        else np.zeros(1 if result.kind == "other" else 0) * math.nan
    )
