"""An item's notes: for instructors unless marked for students, on every instance or only some (issue 13)."""

from __future__ import annotations

import textwrap

import pytest

from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.errors import BankError
from attnquiz.engine.schema import json_schema

ITEM = """\
  - id: w-o
    kind: formula
    source: "2025 T3 Quiz 1, Q191"
    topic: parameter-count
    params:
      d: {choice: [256, 512, 768]}
    prompt: "How many parameters has $W^O$ when $d_{\\\\text{model}} = {{d}}$?"
    answer: {kind: integer, value: "d^2"}
    solution: ["${{d}}^2 = {{d^2}}$."]
    original: {d: 768}
"""


def bank_with(note: str) -> str:
    return "bank: notes\ntitle: Notes\nitems:\n" + ITEM + textwrap.indent(note, "    ")


@pytest.mark.parametrize(
    ("note", "original", "variant"),
    [
        pytest.param("", ("", ""), ("", ""), id="none"),
        # The old form: a plain text is a note for instructors, on every instance.
        pytest.param(
            "note: Where the numbers come from.\n",
            ("", "Where the numbers come from."),
            ("", "Where the numbers come from."),
            id="text",
        ),
        pytest.param(
            "note: {text: Read the notes' §9., for: students}\n",
            ("Read the notes' §9.", ""),
            ("Read the notes' §9.", ""),
            id="students",
        ),
        pytest.param(
            "note: {text: Only the paper's., on: original}\n",
            ("", "Only the paper's."),
            ("", ""),
            id="original-only",
        ),
        pytest.param(
            "note: {text: Drawn., on: variants, for: students}\n",
            ("", ""),
            ("Drawn.", ""),
            id="variants-only",
        ),
        pytest.param(
            "note:\n  - First.\n  - {text: Second., for: students, on: original}\n  - Third.\n",
            ("Second.", "First. Third."),
            ("", "First. Third."),
            id="list",
        ),
    ],
)
def test_each_form_of_note_reaches_its_readers_on_its_instances(
    note: str, original: tuple[str, str], variant: tuple[str, str]
) -> None:
    entry = load_bank_text(bank_with(note), "notes.yaml").get("w-o")
    got_original = entry.original()
    got_variant = entry.question(3)
    assert (got_original.student_note, got_original.instructor_note) == original
    assert (got_variant.student_note, got_variant.instructor_note) == variant
    json = got_variant.to_json()
    assert (json["student_note"], json["instructor_note"]) == variant


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        pytest.param(
            "note:\n  text: Hello.\n  for: teachers\n",
            "notes.yaml:16: items[0].note.for: Input should be 'instructors' or 'students' (got 'teachers')",
            id="bad-audience",
        ),
        pytest.param(
            "note:\n  text: Hello.\n  who: me\n",
            "notes.yaml:16: items[0].note.who: unknown field",
            id="unknown-key",
        ),
        pytest.param(
            "note: {text: Hello., on: paper}\n",
            "notes.yaml:14: items[0].note.on: Input should be 'every', 'original' or 'variants' "
            "(got 'paper')",
            id="bad-scope",
        ),
        pytest.param(
            "note: 5\n",
            "notes.yaml:14: items[0].note: a note is a text, a mapping {text, for, on}, or a list of "
            "them (got 5)",
            id="number",
        ),
        pytest.param(
            "note:\n  - Fine.\n  - {text: '', for: students}\n",
            "notes.yaml:16: items[0].note[1].text: String should have at least 1 character (got '')",
            id="empty-in-list",
        ),
    ],
)
def test_a_bad_note_is_reported_at_its_line(note: str, expected: str) -> None:
    with pytest.raises(BankError) as error:
        load_bank_text(bank_with(note), "notes.yaml")
    assert [str(issue) for issue in error.value.issues] == [expected]


def test_the_json_schema_documents_every_form_of_note() -> None:
    schema = json_schema()
    note = schema["$defs"]["Note"]
    assert set(note["properties"]) == {"text", "for", "on"}
    assert note["properties"]["for"]["enum"] == ["instructors", "students"]
    forms = schema["$defs"]["GeneratorItem"]["properties"]["note"]["anyOf"]
    assert {"type": "string"} in forms
    assert "for: students" in schema["$defs"]["FormulaItem"]["properties"]["note"]["description"]
