"""Bank files: every problem reported as file:line: field: message, and YAML's traps avoided."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attnquiz.engine.bank.loader import load_bank_text, parse_yaml
from attnquiz.engine.errors import BankError

BAD = Path(__file__).resolve().parent.parent / "data" / "bad_banks"
ROOT = BAD.parent.parent.parent
CASES = sorted(BAD.glob("*.yaml"))


@pytest.mark.parametrize("bank_file", CASES, ids=[p.stem for p in CASES])
def test_bad_bank_reports_exactly_its_error_lines(bank_file: Path) -> None:
    shown = str(bank_file.relative_to(ROOT))
    with pytest.raises(BankError) as caught:
        load_bank_text(bank_file.read_text(encoding="utf-8"), shown)
    expected_file = bank_file.with_suffix(".errors")
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(str(caught.value) + "\n", encoding="utf-8")
    assert str(caught.value) + "\n" == expected_file.read_text(encoding="utf-8")


def test_errors_are_sorted_by_line_and_counted() -> None:
    with pytest.raises(BankError) as caught:
        load_bank_text((BAD / "many_errors.yaml").read_text(encoding="utf-8"), "many.yaml")
    lines = [issue.line for issue in caught.value.issues]
    assert lines == sorted(lines)
    assert str(caught.value).splitlines()[-1] == "many.yaml: 8 errors, nothing was run."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x: 1e-3", 0.001),
        ("x: 1.5E+3", 1500.0),
        ("x: .5", 0.5),
        ("x: no", "no"),
        ("x: off", "off"),
        ("x: yes", "yes"),
        ("x: true", True),
        ("x: False", False),
        ("x: 2026-11-29", "2026-11-29"),
        ("x: 017", 17),
        ("x: '1e-3'", "1e-3"),
        ("x: 12", 12),
    ],
    ids=str,
)
def test_scalars_are_read_as_yaml_1_2(text: str, expected: object) -> None:
    data, _ = parse_yaml(text, "t.yaml")
    assert data == {"x": expected}
    assert type(data["x"]) is type(expected)


def test_lines_are_recorded_for_every_key() -> None:
    _, located = parse_yaml("a: 1\nb:\n  - c: 2\n    d: [1, 2]\n", "t.yaml")
    assert located.line_of(("a",)) == 1
    assert located.line_of(("b", 0, "c")) == 3
    assert located.line_of(("b", 0, "d")) == 4
    assert located.line_of(("b", 0, "missing")) == 3


def test_a_valid_bank_loads_with_validated_parameters() -> None:
    text = """
bank: mini
title: Mini
items:
  - id: score
    source: "2026 T1 Quiz 1, Q13"
    topic: additive-attention
    generator: additive_score
    params: {dim: 3}
    original: {h: [1, 0], s_proj: [1, 2], v: [1, 1], dim: 2}
    tolerance: {rtol: 1e-2}
"""
    bank = load_bank_text(text, "mini.yaml")
    entry = bank.get("score")
    assert entry.kwargs["dim"] == 3
    assert entry.original_kwargs is not None
    assert entry.original_kwargs["h"] == [1.0, 0.0]
    assert entry.line == 5
    question = entry.question(1)
    assert question.answer.tolerance.rtol == pytest.approx(0.01)


def test_an_unknown_item_suggests_close_ids() -> None:
    bank = load_bank_text(
        "bank: mini\ntitle: Mini\nitems:\n"
        "  - {id: additive-score, source: s, topic: t, generator: additive_score}\n",
        "mini.yaml",
    )
    with pytest.raises(Exception, match="did you mean additive-score"):
        bank.get("additive-scor")


# ---------------------------------------------------------------------------------------------
# Bounded loading: size, nodes, aliases; files that are not banks are never quoted
# ---------------------------------------------------------------------------------------------


def test_a_file_beyond_the_size_cap_is_refused_before_parsing(tmp_path: Path) -> None:
    from attnquiz.engine.bank.finding import MAX_BANK_BYTES
    from attnquiz.engine.bank.loader import load_bank_file

    big = tmp_path / "big.yaml"
    big.write_text("bank: big\n" + "#" * MAX_BANK_BYTES + "\n", encoding="utf-8")
    with pytest.raises(BankError, match=r"^big\.yaml:1: the file is larger than 1,000,000 bytes"):
        load_bank_file(big, shown_as="big.yaml")
    with pytest.raises(BankError, match=r"^big\.yaml:1: the file has 1,000,0\d\d characters"):
        load_bank_text(big.read_text(encoding="utf-8"), "big.yaml")


def test_a_bank_with_too_many_values_is_refused() -> None:
    from attnquiz.engine.bank.loader import MAX_NODES

    text = "bank: many\ntitle: t\nitems: [" + ", ".join(["1"] * (MAX_NODES + 10)) + "]\n"
    with pytest.raises(BankError, match=r"^many\.yaml:1: more than 50,000 YAML values"):
        load_bank_text(text, "many.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "- &r [*r, *r]\n",
        "&m {a: *m, b: *m}\n",
        "bank: b\ntitle: t\nitems: &i\n  - *i\n",
        "bank: b\ntitle: t\nx: &x [[1, 2], [3, 4]]\nitems: [*x]\n",
    ],
    ids=["self-list", "self-mapping", "items-in-items", "shared-list"],
)
def test_an_alias_of_a_collection_is_refused_at_its_line(text: str) -> None:
    with pytest.raises(BankError) as caught:
        load_bank_text(text, "a.yaml")
    [issue] = caught.value.issues
    assert "an alias (*name) of a" in issue.message
    assert issue.line == text.count("\n", 0, text.rindex("*")) + 1  # the line of the (last) alias


def test_a_mapping_that_is_not_a_bank_is_never_quoted() -> None:
    # A bank that is a symlink to a secret file must not echo its keys as "unknown field" names.
    secret = "password: hunter2\napi_key: sk-SECRET-TOKEN\n"
    with pytest.raises(BankError) as caught:
        load_bank_text(secret, "evil.yaml")
    shown = caught.value.report()
    for secret_part in ("password", "hunter2", "SECRET"):
        assert secret_part not in shown
    assert caught.value.issues[0].message.startswith("not a question bank")
    broken = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7: [\n"
    with pytest.raises(BankError) as caught:
        load_bank_text(broken, "key.yaml")
    assert "AAAAB3" not in caught.value.report()  # a syntax error in a non-bank: no excerpt either


def test_a_long_unknown_key_is_shortened() -> None:
    key = "k" * 500
    with pytest.raises(BankError) as caught:
        load_bank_text(f"bank: b\ntitle: t\n{key}: 1\nitems: []\n", "b.yaml")
    assert all(len(issue.field) <= 40 for issue in caught.value.issues)


def test_errors_show_the_source_line_with_a_caret() -> None:
    text = (
        "bank: b\ntitle: t\nitems:\n  - id: score\n    source: s\n    topic: t\n"
        "    generator: additive_score\n    params: {dim: 2.5}\n"
    )
    with pytest.raises(BankError) as caught:
        load_bank_text(text, "b.yaml")
    assert caught.value.report().splitlines() == [
        "b.yaml:8: items[0].params.dim: Input should be a valid integer, got a number with a fractional part"
        " (got 2.5)",
        " 8 |     params: {dim: 2.5}",
        "   |              ^^^",
        "b.yaml: 1 error, nothing was run.",
    ]
    assert str(caught.value).splitlines()[0] == caught.value.report().splitlines()[0]


def test_a_tab_is_named_and_shown() -> None:
    with pytest.raises(BankError) as caught:
        load_bank_text("bank: b\ntitle: t\nitems:\n  - id: a\n\tsource: s\n", "b.yaml")
    report = caught.value.report().splitlines()
    assert "tab" in report[0]
    assert report[1] == " 5 | →source: s"


def test_the_json_schema_writes_bounds_as_json_schema_keywords() -> None:
    from attnquiz.engine.schema import json_schema

    schema = json_schema()
    found: list[str] = []

    def walk(node: object, path: str, keywords: bool = True) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if keywords and key in {"gt", "ge", "lt", "le"}:
                    found.append(f"{path}/{key}")
                named = key in {"properties", "$defs"}
                if named and isinstance(value, dict):
                    for name, sub in value.items():
                        walk(sub, f"{path}/{key}/{name}")
                else:
                    walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}[{index}]")

    walk(schema, "")
    assert found == []  # JSON Schema ignores pydantic's gt/ge/lt/le: a step of 0 would pass an editor
    step = schema["$defs"]["ParamSpec"]["properties"]["step"]
    assert step["anyOf"][0]["exclusiveMinimum"] == 0
