"""Every hostile input of issue 25, and new ones, costs a bounded amount of work (issue 25's "Done when").

The cost is measured inside the test as CPU time (this process's, or its children's for a command),
never as wall-clock time: CPU time does not grow with the machine's load, so the bounds hold on a
loaded 2-core box and no result depends on timing. The bounds are generous (grading one response
takes milliseconds; a tower took minutes before issue 25): they catch a cost that grows without
bound, not a slow machine. Speed itself is measured in bench/.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import PartsAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.parts import grade_parts
from tests.engine.test_formula_hostile import BLOCK, BLOCK_MISTAKES, INVALID, ISSUE_TOWER, WRONG

GRADE_CPU = 2.0  # seconds of CPU for one response, whatever it is (the issue's "under 2 s")
COMMAND_CPU = 20.0  # seconds of CPU for a whole command, start-up and imports included
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]

# New attacks on the formula reader, beyond the corpus of tests/engine/test_formula_hostile.py:
# (response, status, words of the reason or None). Magnitudes hidden in exponent digits, towers
# that cancel, powers chained without brackets, degree built by repetition, brackets of other
# kinds, a lone surrogate (what undecodable bytes become), digits of other scripts.
NEW_FORMULAS = [
    ("1e" + "9" * 400 + "*d", "invalid", "exponent"),
    ("d^" + "9" * 5000, "invalid", "too long"),
    ("((((10^8)^8)^8)^8)/((((10^8)^8)^8)^8)*d", "invalid", "too large to grade"),
    ("(10^300)*(10^300)*(10^300)*d", "invalid", "exponent 300"),
    ("1e308*10*d", "invalid", "too large"),
    ("d" + "^2" * 200, "invalid", "power of a power"),
    ("d" + "*d" * 150, "invalid", "degree"),
    ("*".join(["(d+1)^8"] * 6), "invalid", "degree"),
    ("[" * 60 + "d" + "]" * 60, "invalid", "Unexpected `[`"),
    ("d\udcff", "invalid", "U+DCFF"),
    ("0x10*d", "invalid", "no symbol `x10`"),
    ("inf*d", "invalid", "no symbol `inf`"),
    ("nan*d", "invalid", "no symbol `nan`"),
    ("1e-324*d", "wrong", None),
    ("0^0*d", "wrong", None),
    ("١٢d^2+١٣d", "correct", None),  # Arabic-Indic digits are digits: a right answer is right
    ("１２d^2+13d", "correct", None),  # full-width digits too
    ("12d²+13d", "correct", None),
]

# Carried-forward values of any size, and spellings that are no number (issue 25: `3 1e27 5`).
CARRIED = ["1e27", "-1e27", "1e99999", "1e-99999", "9" * 400, "1" + "0" * 1900, "nan", "inf", "-0", "0x1p3"]


@contextmanager
def cpu(children: bool = False) -> Iterator[Callable[[], float]]:
    """CPU seconds spent in the block: this process's, or its finished children's."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF

    def used() -> float:
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    start = used()
    spent: list[float] = []
    yield lambda: spent[0]
    spent.append(used() - start)


@pytest.mark.parametrize(
    "response",
    [text for text, _ in INVALID] + WRONG + [text for text, _, _ in NEW_FORMULAS],
    ids=lambda text: repr(text[:30]),
)
def test_grading_any_hostile_formula_costs_milliseconds(response: str) -> None:
    with cpu() as spent:
        result = grade_answer(BLOCK, response, BLOCK_MISTAKES)
    assert result.feedback
    assert spent() < GRADE_CPU, f"{spent():.2f} s of CPU for {response[:60]!r}"


@pytest.mark.parametrize(("response", "status", "words"), NEW_FORMULAS, ids=lambda v: repr(str(v)[:30]))
def test_new_hostile_formulas_are_read_as_they_should_be(
    response: str, status: str, words: str | None
) -> None:
    result = grade_answer(BLOCK, response, BLOCK_MISTAKES)
    assert result.status == status, (response[:60], result.feedback)
    if words is not None:
        assert words in result.feedback, (response[:60], result.feedback)


@pytest.mark.parametrize("number", CARRIED, ids=lambda text: text[:12])
def test_a_carried_value_of_any_size_is_graded_readably_and_cheaply(number: str) -> None:
    answer = banks.load("week1").get("additive-chain").question(1).answer
    assert isinstance(answer, PartsAnswer)
    with cpu() as spent:
        result = grade_parts(answer, ["3", number, "5"])
    json.dumps(result.to_json())
    last = result.parts[-1].grade.feedback
    assert 0 < len(last) < 600, last
    assert "Traceback" not in last, last
    assert "nan" not in last.lower().replace(number.lower(), ""), last
    assert spent() < GRADE_CPU, f"{spent():.2f} s of CPU"


def _quiz(
    home: Path, *args: str, stdin: str | bytes = b""
) -> tuple[subprocess.CompletedProcess[bytes], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), COLUMNS="100", NO_COLOR="1")
    data = stdin.encode("utf-8", "surrogateescape") if isinstance(stdin, str) else stdin
    with cpu(children=True) as spent:
        done = subprocess.run(
            [*QUIZ, *args], input=data, capture_output=True, env=env, timeout=300, check=False
        )
    return done, spent()


@pytest.mark.parametrize(
    "responses",
    [[ISSUE_TOWER], ["1e" + "9" * 400 + "*d"], ["d" + "^2" * 200]],
    ids=["tower", "exponent-digits", "power-chain"],
)
def test_quiz_answer_of_a_hostile_formula_is_cheap_and_clear(tmp_path: Path, responses: list[str]) -> None:
    done, spent = _quiz(
        tmp_path, "answer", "week1", "block-params-formula", "--seed", "1", "--json", "--", *responses
    )
    assert b"Traceback" not in done.stderr, done.stderr
    graded = json.loads(done.stdout)
    assert graded["status"] == "invalid", graded
    assert graded["feedback"], graded
    assert spent < COMMAND_CPU, f"{spent:.2f} s of CPU"


def test_quiz_run_given_undecodable_bytes_and_huge_carried_values_goes_on(tmp_path: Path) -> None:
    # A terminal or a pipe can send bytes that are not UTF-8; each line is still an answer.
    stdin = b"3\n\xff\xfe1e99999\n5\n"
    done, spent = _quiz(
        tmp_path, "run", "week1", "--item", "additive-chain", "--count", "1", "--seed", "1",
        "--json", "--no-history", stdin=stdin,
    )  # fmt: skip
    assert b"Traceback" not in done.stderr, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith(b"{")]
    assert records, done.stdout[-400:]
    assert records[-1]["type"] == "summary", done.stdout[-400:]
    assert spent < COMMAND_CPU, f"{spent:.2f} s of CPU"


def test_quiz_grade_of_a_sheet_that_is_not_utf8_is_one_located_line(tmp_path: Path) -> None:
    template = tmp_path / "t.csv"
    made, _ = _quiz(tmp_path, "grade", "week1", "--template", "--students", "2", "--seed", "7",
                    "--items", "additive-chain", "-o", str(template))  # fmt: skip
    assert made.returncode == 0, made.stderr
    header, *rows = template.read_bytes().splitlines()
    sheet = tmp_path / "answers.csv"
    sheet.write_bytes(b"\n".join([header, *(row.rstrip(b",") + b",3,\xff\xfe,5" for row in rows)]) + b"\n")
    done, spent = _quiz(tmp_path, "grade", "week1", str(sheet), "--seed", "7")
    assert b"Traceback" not in done.stderr, done.stderr
    assert b"answers.csv:2: not UTF-8" in done.stderr, done.stderr
    assert spent < COMMAND_CPU, f"{spent:.2f} s of CPU"


def test_a_bank_that_is_not_utf8_is_a_located_error(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_bytes(
        b'title: x\nitems:\n  - id: a\n    prompt: "\xff\xfe caf\xe9"\n'
        b'    answer: {kind: integer, value: "2"}\n'
    )
    done, spent = _quiz(tmp_path, "check", str(bank))
    assert done.returncode != 0
    assert b"Traceback" not in done.stderr + done.stdout
    shown = done.stdout + done.stderr
    assert b"bank.yaml:1:" in shown, shown
    assert b"not UTF-8" in shown, shown
    assert spent < COMMAND_CPU, f"{spent:.2f} s of CPU"


def test_the_wall_clock_is_not_what_is_bounded() -> None:
    # The measure above is CPU time: sleeping costs none, so a loaded machine cannot fail these tests.
    with cpu() as spent:
        time.sleep(0.05)
    assert spent() < 0.05
