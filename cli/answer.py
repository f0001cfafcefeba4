"""The `quiz answer` command: grade one response to one variant of an item and print the grade."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnquiz.common import BankArg, JsonOpt, fail, print_json, user_errors

if TYPE_CHECKING:
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.variant import Question


@user_errors
def answer_command(
    bank: BankArg,
    item: Annotated[str, typer.Argument(help="The item's id (see `quiz list BANK`).")],
    responses: Annotated[
        list[str] | None,
        typer.Argument(
            help="Your answer, e.g. 1.93, 2*tanh(2), [0.881, 0.119], A, C or 12d^2 + 13d; for a question "
            "in parts one answer per part (R1 R2 ...). Omit it (or give -) to read it from standard input "
            "(a question in parts: one line per part)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", min=0, max=2**32 - 1, help="The variant of this seed.")
    ] = None,
    code: Annotated[str | None, typer.Option("--code", help="The variant of this variant code.")] = None,
    original: Annotated[bool, typer.Option("--original", help="The past paper's own question.")] = False,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Read the answer from this file (a code question's .py file)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Grade one answer to a variant: correct, partial, wrong or invalid, with feedback and the mistake.

    A concept question is never scored: its answer is shown with the model answer and key points
    (status unscored), and needs no --seed, --code or --original.

    Exit code 0 for any grade (an invalid answer costs nothing), 1 for a user error such as an
    unknown item.

    A question in parts takes one answer per part and is graded with error carried forward: a part
    that uses an earlier one is marked against the value computed from your own earlier answer.

    Example: quiz answer week1 additive-score --original "2*tanh(2)"

    Example (in parts): quiz answer week1 params-chain --original 64 32768 1050624 3152384 18914304

    Example (code): quiz answer code attention --seed 1 --file attention.py
    """
    from attnquiz.engine.answers.kinds import ExplainAnswer, answer_json
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.grading.grade import grade
    from attnquiz.engine.grading.parts import grade_parts
    from attnquiz.engine.seeding import seed_from_code

    chosen = sum((seed is not None, code is not None, original))
    if chosen > 1:
        fail("give exactly one of --seed N, --code C or --original: the variant that was answered", 2)
    given = list(responses or [])
    if file is not None and given:
        fail("give the answer either as an argument or with --file, not both", 2)
    from_stdin = given in ([], ["-"]) and file is None
    entry = banks.load(bank, plugins=True).get(item)
    if chosen == 0 and entry.explain is None:
        # A concept question has one instance, so it needs no variant; any other item does.
        fail("give exactly one of --seed N, --code C or --original: the variant that was answered", 2)
    code_item = entry.explain is None and entry.formula is None and entry.spec.name.startswith("code_")
    if file is not None:
        text = read_code_file(file)
    elif from_stdin:
        text = _read_response(None, code=code_item)
    else:
        text = given[0]
    if original or chosen == 0:
        question = entry.original()
    else:
        question = entry.question(seed if seed is not None else seed_from_code(code or ""))
    parts = question.variant.parts
    if len(given) > 1:
        if len(given) != len(parts):
            wanted = f"{len(parts)} answers, one per part" if parts else "one answer"
            fail(f"{item} takes {wanted}; {len(given)} were given", 2)
        result = grade_parts(question.variant.answer, given)  # type: ignore[arg-type]
    elif parts and from_stdin:
        result = grade_parts(question.variant.answer, _per_part(text, len(parts)))  # type: ignore[arg-type]
    else:
        result = grade(question, text)
    if as_json:
        data = result.to_json()
        if isinstance(question.answer, ExplainAnswer):
            # Not scored: the model answer and its key points, to compare the response with.
            data["answer"] = answer_json(question.answer)
        print_json(data)
    else:
        show_grade(question, result, text)


def _read_response(response: str | None, *, code: bool = False) -> str:
    """The response argument, or standard input when it is omitted or ``-`` (a code question's
    whole program, up to its own limit)."""
    from attnquiz.engine.answers.parse import MAX_LENGTH

    if response is not None and response != "-":
        return response
    if sys.stdin is None or sys.stdin.isatty():
        fail("give the answer as an argument, or pipe it on standard input", 2)
    # Read one character beyond the limit: enough for the grader to say the answer is too long.
    text = sys.stdin.read((CODE_LIMIT if code else MAX_LENGTH) + 1)
    return text if code else text.removesuffix("\n").removesuffix("\r")


CODE_LIMIT = 100_000
"""Characters of code read (one more is read so that the grader can say it is too long)."""


def read_code_file(path: Path) -> str:
    """A code answer's file, as text: a clear error for a missing, unreadable or binary file."""
    try:
        with path.open("rb") as handle:
            data = handle.read(CODE_LIMIT * 4 + 1)
    except IsADirectoryError:
        fail(f"{path} is a folder, not a file", 1)
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}", 1)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        fail(f"{path} is not UTF-8 text (save the code as a plain .py file)", 1)


def _per_part(text: str, count: int) -> list[str]:
    """Piped answers to a question in parts: one line per part, or one line with the parts
    separated by ``|`` (missing parts are empty answers: invalid, costing nothing)."""
    from attnquiz.engine.grading.parts import PART_SEPARATOR

    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) == 1 and PART_SEPARATOR in lines[0]:
        lines = [piece.strip() for piece in lines[0].split(PART_SEPARATOR)]
    if len(lines) > count:
        fail(f"this question has {count} parts; {len(lines)} answers were given", 2)
    return lines + [""] * (count - len(lines))


def show_grade(question: Question, result: Grade, response: str = "") -> None:
    """A grade as a session shows it: the variant, the verdict, how the response was read, the feedback."""
    from attnquiz.display import console, print_grade, print_model_answer, question_header
    from attnquiz.engine.answers.kinds import ExplainAnswer
    from attnquiz.folding import put

    put(console, question_header(question, seed=False))
    print_grade(console, result, response, echo=True)
    if isinstance(question.answer, ExplainAnswer):
        console.print()
        print_model_answer(console, question.answer)
