"""The `quiz answer` command's work: grade one response to one variant of an item and print the grade.

No typer here: the command's arguments are declared in `attnquiz.answer_command`, and
`attnquiz.plain_parsing` calls `answer_item` directly when it can parse the arguments itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from attnquiz.common import fail, print_json, user_errors

if TYPE_CHECKING:
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.variant import Question


@user_errors
def answer_item(
    bank: str,
    item: str,
    responses: list[str] | None,
    seed: int | None,
    code: str | None,
    original: bool,
    file: Path | None,
    as_json: bool,
) -> None:
    """`quiz answer BANK ITEM [RESPONSE...]`: grade the response and print the grade."""
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
    from attnquiz.engine.answers.kinds import ExplainAnswer
    from attnquiz.light_lines import print_without_rich
    from attnquiz.question_lines import Writer, draw_grade, draw_model_answer, header_runs

    def draw(out: Writer) -> None:
        out.put(header_runs(question, seed=False))
        draw_grade(out, result, response, echo=True)
        if isinstance(question.answer, ExplainAnswer):
            out.blank()
            draw_model_answer(out, question.answer)

    if print_without_rich(draw):  # without rich's console where it prints the same bytes (issue 43)
        return
    from attnquiz.display import RichLines, console

    draw(RichLines(console))
