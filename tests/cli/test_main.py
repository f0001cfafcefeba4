"""`quiz list`, `quiz show` and `quiz schema` driven as a user drives them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from attnquiz.main import app

runner = CliRunner()
BAD = Path(__file__).resolve().parent.parent / "data" / "bad_banks"


def quiz(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "attnquiz", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_list_shows_every_item_with_source_topic_and_kind() -> None:
    result = runner.invoke(app, ["list", "week1", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    ids = [row["id"] for row in rows]
    assert "additive-score" in ids
    row = rows[ids.index("additive-score")]
    assert row["source"] == "2026 T1 Quiz 1, Q13"
    assert row["topic"] == "additive-attention"
    assert row["kind"] == "number"


def test_list_as_a_table_fits_80_columns() -> None:
    result = quiz("list", "week1")
    assert result.returncode == 0, result.stderr
    assert "additive-score" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_show_original_gives_the_papers_question_and_answer() -> None:
    result = runner.invoke(app, ["show", "week1", "additive-score", "--original"])
    assert result.exit_code == 0, result.output
    assert "2026 T1 Quiz 1, Q13" in result.output
    assert "Answer: 1.93" in result.output


def test_show_json_has_the_documented_fields() -> None:
    result = runner.invoke(app, ["show", "week1", "additive-score", "--seed", "7", "--json"])
    data = json.loads(result.output)
    assert {
        "bank",
        "item",
        "source",
        "seed",
        "variant_code",
        "prompt",
        "answer",
        "mistakes",
        "solution",
        "params",
    } <= set(data)
    assert data["seed"] == 7
    assert data["answer"]["kind"] == "numeric"
    assert data["answer"]["tolerance"] == {"decimals": 2}
    by_code = runner.invoke(
        app, ["show", "week1", "additive-score", "--code", data["variant_code"], "--json"]
    )
    assert json.loads(by_code.output) == data


def test_show_solution_has_steps_with_the_variants_numbers() -> None:
    result = runner.invoke(app, ["show", "week1", "additive-score", "--seed", "7", "--solution"])
    assert "Solution" in result.output
    assert "1." in result.output


def test_conflicting_options_are_a_usage_error() -> None:
    result = runner.invoke(app, ["show", "week1", "additive-score", "--seed", "1", "--original"])
    assert result.exit_code == 2


def test_unknown_bank_and_item_are_one_clear_line() -> None:
    result = quiz("show", "week9", "x")
    assert result.returncode == 1
    assert result.stderr.startswith("quiz: no bank named 'week9'")
    assert "Traceback" not in result.stderr
    result = quiz("show", "week1", "additive-scor", "--seed", "1")
    assert result.returncode == 1
    assert "did you mean additive-score" in result.stderr


def test_a_bad_bank_file_lists_every_error_without_a_traceback() -> None:
    result = quiz("list", str(BAD / "many_errors.yaml"))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    located = [line for line in lines if re.match(r"^\S+many_errors\.yaml:\d+: ", line)]
    assert len(located) == 8  # each followed by its source line and a caret
    assert len(lines) == 8 * 3 + 1
    assert lines[-1].endswith("8 errors, nothing was run.")


def test_a_bad_variant_code_is_explained() -> None:
    result = quiz("show", "week1", "additive-score", "--code", "0000-0078")
    assert result.returncode == 1
    assert "not a valid variant code" in result.stderr


def test_schema_describes_every_field() -> None:
    result = runner.invoke(app, ["schema"])
    schema = json.loads(result.output)
    item = schema["$defs"]["GeneratorItem"]
    assert all(prop.get("description") for prop in item["properties"].values())


def test_help_does_not_import_the_engine() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['quiz', '--help']\n"
        "from attnquiz.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('numpy', 'pydantic', 'yaml', 'sympy', 'typst') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "HEAVY []" in result.stdout, result.stdout + result.stderr


def test_help_lists_every_command_in_the_order_users_meet_them() -> None:
    result = quiz("--help")
    listed = [
        line.split()[0]
        for line in result.stdout.split("Commands:")[1].splitlines()
        if line.startswith("  ") and line.strip()
    ]
    assert listed == [
        "run",
        "review",
        "stats",
        "list",
        "show",
        "answer",
        "export",
        "grade",
        "scan",
        "check",
        "new",
        "schema",
        "generators",
        "serve",
    ]
