"""The STACK export's XML: what STACK's import_from_xml reads, the structure of STACK's own samples,
and the command line. (How the questions mark is tested in test_stack_maxima.py.)"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest
from msgspec.structs import replace
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import (
    ExplainAnswer,
    ExpressionAnswer,
    Mistake,
    NumericAnswer,
    PartsAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import moodle, stack, stack_inputs
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.plan.class_plan import ExportError, plan_class
from attnquiz.engine.variant import Question, Variant
from attnquiz.main import app

from . import stack_harness as harness

QUESTIONTYPE = harness.REFERENCE / "questiontype.php"
SAMPLES = harness.REFERENCE / "samplequestions"
needs_reference = pytest.mark.skipif(
    not QUESTIONTYPE.is_file(), reason=f"no STACK reference at {harness.REFERENCE}"
)


@cache
def exported(bank: str = "week1", variants: int = 2) -> ET.Element:
    plan = plan_class(
        banks.load(bank), students=variants, master_seed=7, items=[i.id for i in banks.load(bank).items]
    )
    text, _ = stack.build(plan)
    return ET.fromstring(text)


def stack_questions() -> list[ET.Element]:
    return [
        q for b in ("week1", "week2") for q in exported(b).findall("question") if q.get("type") == "stack"
    ]


# ---------------------------------------------------------------------------------------------
# What import_from_xml reads
# ---------------------------------------------------------------------------------------------


def _function(php: str, name: str) -> str:
    start = php.index(f"function {name}(")
    end = php.find("\n    }\n", start)
    return php[start:end]


_GETPATH = re.compile(
    r"getpath\(\$(\w+),\s*\[\s*'#',\s*'(\w+)',\s*0,\s*'#'(?:,\s*'text',\s*0,\s*'#')?\s*,?\s*\],\s*([^,)\]]+)"
)
_TEXT = re.compile(r"import_xml_text\(\$xml,\s*'(\w+)'")


@cache
def contract() -> dict[str, dict[str, str]]:
    """For each element import_from_xml reads (the question, an input, a PRT, a node, a test), the
    child elements it reads with the kind of value it expects: 'number' where its default is a
    number, 'text' otherwise, 'formatted' for a text with a format attribute and files."""
    php = QUESTIONTYPE.read_text(encoding="utf-8")
    parts = {
        "question": _function(php, "import_from_xml"),
        "input": _function(php, "import_xml_input"),
        "prt": _function(php, "import_xml_prt"),
        "node": _function(php, "import_xml_prt_node"),
        "qtest": _function(php, "import_xml_qtest"),
    }
    # Within a function, $xml is the element itself; a question test reads its inputs and
    # expectations from $inputxml and $expectedxml.
    inner = {"inputxml": "testinput", "expectedxml": "expected"}
    found: dict[str, dict[str, str]] = {}
    for level, body in parts.items():
        reads: dict[str, str] = {}
        for variable, name, default in _GETPATH.findall(body):
            if variable != "xml":
                found.setdefault(inner[variable], {})[name] = "text"
                continue
            default = default.strip()
            numeric = re.fullmatch(r"-?\d+(\.\d+)?", default) is not None
            # trueanswernote's default is 1 in the code, but an answer note is text (the samples'
            # are "Result-0-T"): the default's type decides every other element.
            reads[name] = "number" if numeric and not name.endswith("answernote") else "text"
        for name in _TEXT.findall(body):
            reads[name] = "formatted"
        found[level] = reads
    return found


@needs_reference
def test_the_contract_is_read_from_stacks_own_import_code() -> None:
    """The parse of import_from_xml finds what the code plainly reads (so the checks below check
    something)."""
    reads = contract()
    assert {"questionvariables", "questionsimplify", "prtcorrect", "specificfeedback"} <= set(
        reads["question"]
    )
    assert reads["input"]["boxsize"] == "number"
    assert reads["input"]["tans"] == "text"
    assert reads["node"]["truescore"] == "number"
    assert reads["node"]["truefeedback"] == "formatted"
    assert {"testcase", "description"} <= set(reads["qtest"])
    assert set(reads["expected"]) == {"name", "expectedscore", "expectedpenalty", "expectedanswernote"}


def _check_reads(element: ET.Element, reads: dict[str, str], where: str, variables: str = "") -> None:
    """Each element read is there once, with a value of the kind read; a score may also be a
    variable of the PRT's feedback variables (STACK's documentation allows it)."""
    defined = set(re.findall(r"(?:^|;)\s*(\w+)\s*:(?!=)", variables))
    for name, kind in reads.items():
        children = element.findall(name)
        assert len(children) == 1, f"{where}: <{name}> {len(children)} times"
        child = children[0]
        if kind == "formatted":
            assert child.get("format") in {"html", "moodle_auto_format", "plain_text", "markdown"}, (
                where,
                name,
            )
            assert child.find("text") is not None, (where, name)
            continue
        value = child.findtext("text") if child.find("text") is not None else child.text
        if kind == "number":
            assert value is not None, (where, name)
            number = re.fullmatch(r"-?\d+(\.\d+)?", value.strip())
            assert number or (name.endswith("score") and value in defined), (where, name, value)


@needs_reference
def test_every_question_has_every_element_import_from_xml_reads_with_its_type() -> None:
    reads = contract()
    questions = stack_questions()
    assert len(questions) > 200
    for q in questions:
        where = q.findtext("name/text", "")
        _check_reads(q, reads["question"], where)
        assert q.find("questiontext[@format='html']/text") is not None
        assert q.find("generalfeedback/text") is not None
        inputs = q.findall("input")
        prts = q.findall("prt")
        assert inputs, where
        assert len(inputs) == len(prts), where
        for item in inputs:
            _check_reads(item, reads["input"], where)
            assert f"[[input:{item.findtext('name')}]]" in q.findtext("questiontext/text", "")
        for prt in prts:
            _check_reads(prt, reads["prt"], where)
            nodes = prt.findall("node")
            names = {int(n.findtext("name", "")) for n in nodes}
            assert 0 in names, where
            variables = prt.findtext("feedbackvariables/text", "")
            for node in nodes:
                _check_reads(node, reads["node"], where, variables)
                for side in ("true", "false"):
                    target = int(node.findtext(f"{side}nextnode", ""))
                    assert target == -1 or target in names, (where, target)
            assert f"[[feedback:{prt.findtext('name')}]]" in q.findtext("questiontext/text", "")
        tests = q.findall("qtest")
        assert tests, f"{where}: no question tests"
        for test in tests:
            _check_reads(test, reads["qtest"], where)
            for level in ("testinput", "expected"):
                for element in test.findall(level):
                    _check_reads(element, reads[level], where)
            for element in test.findall("expected"):
                assert re.fullmatch(r"\d\.\d{7}", element.findtext("expectedscore", "")), where
            assert {t.findtext("name") for t in test.findall("testinput")} == {
                i.findtext("name") for i in inputs
            }
            assert {e.findtext("name") for e in test.findall("expected")} == {
                p.findtext("name") for p in prts
            }


def _reachable(nodes: dict[int, tuple[int, int]]) -> set[int]:
    seen: set[int] = set()
    pending = [0]
    while pending:
        n = pending.pop()
        if n == -1 or n in seen:
            continue
        seen.add(n)
        pending.extend(nodes[n])
    return seen


def _acyclic(nodes: dict[int, tuple[int, int]]) -> bool:
    state: dict[int, int] = {}

    def visit(n: int) -> bool:
        if n == -1 or state.get(n) == 2:
            return True
        if state.get(n) == 1:
            return False
        state[n] = 1
        ok = all(visit(m) for m in nodes[n])
        state[n] = 2
        return ok

    return visit(0)


def test_nothing_stacks_own_form_validation_refuses() -> None:
    """What STACK's validate_fromform refuses when a teacher saves the question: CAS strings (SAns,
    TAns, a teacher's answer, test inputs) over 255 characters or ending in ``;``, a description
    over 255, an answer note empty, repeated in its tree or holding ``|``, ``;`` or ``:``, a
    numeric score outside [0, 1], input and PRT names of the wrong form or over 18 characters,
    an input or validation placeholder not exactly once, nodes not reached from the first one or
    in a cycle."""
    for q in stack_questions():
        where = q.findtext("name/text", "")
        text = q.findtext("questiontext/text", "")
        for item in q.findall("input"):
            name = item.findtext("name", "")
            assert re.fullmatch(r"[a-zA-Z]+[0-9a-zA-Z_]*[0-9a-zA-Z]+", name), where
            assert len(name) <= 18, where
            assert text.count(f"[[input:{name}]]") == 1, where
            assert text.count(f"[[validation:{name}]]") == 1, where
            tans = item.findtext("tans", "")
            assert 0 < len(tans) <= 255, (where, tans)
        for prt in q.findall("prt"):
            assert len(prt.findtext("name", "")) <= 18
            notes: list[str] = []
            graph: dict[int, tuple[int, int]] = {}
            for node in prt.findall("node"):
                for field in ("sans", "tans", "testoptions"):
                    value = node.findtext(field, "")
                    assert len(value) <= 255, (where, field, value)
                    assert not value.strip().endswith(";"), (where, field)
                assert node.findtext("sans"), where
                assert node.findtext("tans"), where
                assert len(node.findtext("description", "")) <= 255, where
                for side in ("true", "false"):
                    answer_note = node.findtext(f"{side}answernote", "")
                    assert answer_note, where
                    assert not set(answer_note) & set("|;:"), (where, answer_note)
                    notes.append(answer_note)
                    score = node.findtext(f"{side}score", "")
                    if re.fullmatch(r"-?\d+(\.\d+)?", score):
                        assert 0 <= float(score) <= 1, (where, score)
                graph[int(node.findtext("name", ""))] = (
                    int(node.findtext("truenextnode", "")),
                    int(node.findtext("falsenextnode", "")),
                )
            assert len(notes) == len(set(notes)), (where, prt.findtext("name"), notes)
            assert _reachable(graph) == set(graph), where
            assert _acyclic(graph), where
        for test in q.findall("qtest"):
            for typed_in in test.findall("testinput/value"):
                assert 0 < len(typed_in.text or "") <= 255, where


def _tag_sequence(element: ET.Element) -> list[str]:
    return list(dict.fromkeys(child.tag for child in element))


def _value_kind(text: str | None) -> str:
    if text is None or not text.strip():
        return "empty"
    return "number" if re.fullmatch(r"-?\d+(\.\d+)?", text.strip()) else "text"


@needs_reference
def test_the_structure_is_stacks_own_samples_structure() -> None:
    """Every element STACK's own exports have, in the same order, with values of the same kind."""
    samples = [ET.parse(path).getroot() for path in sorted(SAMPLES.glob("*.xml"))]
    sample_questions = [q for root in samples for q in root.findall("question") if q.get("type") == "stack"]
    assert len(sample_questions) >= 10
    levels = {"": ".", "input": "input", "prt": "prt", "node": "prt/node", "qtest": "qtest"}
    ours = stack_questions()
    for level, path in levels.items():
        theirs = [e for q in sample_questions for e in ([q] if path == "." else q.findall(path))]
        mine = [e for q in ours for e in ([q] if path == "." else q.findall(path))]
        assert theirs, level
        assert mine, level
        expected = [t for t in _tag_sequence(theirs[0]) if t not in {"deployedseed", "qtest"}]
        kinds: dict[str, set[str]] = {}
        for element in theirs:
            for child in element:
                if len(child) == 0:
                    kinds.setdefault(child.tag, set()).add(_value_kind(child.text))
        for element in mine:
            sequence = _tag_sequence(element)
            present = [t for t in sequence if t in expected]
            assert present == expected, f"{level}: {sequence} against {expected}"
            for child in element:
                seen = kinds.get(child.tag, set()) - {"empty"}
                if len(child) == 0 and seen == {"number"} and not child.tag.endswith("score"):
                    assert _value_kind(child.text) in {"number", "empty"}, (level, child.tag, child.text)


def test_concept_questions_are_moodle_essays_as_the_moodle_export_writes_them() -> None:
    plan = plan_class(banks.load("week1"), students=1, master_seed=7, items=["why-scale-scores"])
    ours = ET.fromstring(stack.build(plan)[0]).findall("question[@type='essay']")
    theirs = ET.fromstring(moodle.build(plan).text).findall("question[@type='essay']")
    assert len(ours) == len(theirs) == 1
    assert _tag_sequence(ours[0]) == _tag_sequence(theirs[0])
    for tag in ("graderinfo", "responsefieldlines", "generalfeedback"):
        mine, moodles = ours[0].find(tag), theirs[0].find(tag)
        assert mine is not None, tag
        assert moodles is not None, tag
        assert ET.tostring(mine) == ET.tostring(moodles), tag


def test_one_category_per_item_holding_its_variants() -> None:
    root = exported("week2", 2)
    categories = root.findall("question[@type='category']")
    assert [c.findtext("category/text") for c in categories] == [
        f"$course$/week2/{item.id}" for item in banks.load("week2").items
    ]
    children = list(root)
    for n, element in enumerate(children):
        if element.get("type") == "category":
            assert all(c.get("type") != "category" for c in children[n + 1 : n + 3])


# ---------------------------------------------------------------------------------------------
# What the questions hold
# ---------------------------------------------------------------------------------------------


def _question(prompt: str, answer: object, mistakes: tuple[Mistake, ...] = ()) -> Question:
    variant = Variant(prompt=prompt, answer=answer, solution=["Because."], mistakes=mistakes)  # type: ignore[arg-type]
    return Question("hostile", "item", "source", "topic", 5, "0000-0005", variant)


def test_bank_text_never_runs_as_cas_text() -> None:
    """``{@...@}``, ``{#...#}`` and ``[[...]]`` in a bank's prompt or feedback are shown, not run."""
    evil = 'Compute {@system("rm")@} and {#x#} [[input:ans1]] [[feedback:prt1]] $x^{2}$.'
    mistake = Mistake("m", 3.0, "Not {@ans1@} [[validation:ans1]].")
    lines = stack.question_xml(_question(evil, NumericAnswer(2.0, Tolerance.decimals(1)), (mistake,)), [])
    xml = ET.fromstring("\n".join(lines))
    texts = [t.text or "" for t in xml.iter("text")]
    joined = "\n".join(texts)
    assert "{@system" not in joined
    assert "{#x#}" not in joined
    assert "{@ans1@}" not in joined
    assert joined.count("[[input:ans1]]") == 1
    assert joined.count("[[feedback:prt1]]") == 1
    assert "&#123;@system" in joined
    assert "x^&#123;2}" in joined  # shown as x^{2}: MathJax reads the decoded text


def test_formula_inputs_declare_their_symbols_and_nothing_else() -> None:
    answer = ExpressionAnswer("12*d_model^2 + 13*d_model", ("d_model",))
    xml = ET.fromstring("\n".join(stack.question_xml(_question("Count.", answer), [])))
    item = xml.find("input")
    assert item is not None
    assert item.findtext("type") == "algebraic"
    assert item.findtext("options") == "validator:qz_valid1"
    variables = xml.findtext("questionvariables/text", "")
    assert re.search(
        r"qz_valid1\(ex\):=if every\(lambda\(\[qz_v\], member\(qz_v, \[d_model,dmodel\]\)\), "
        r"listofvars\(ex\)\)",
        variables,
    )
    assert item.findtext("allowwords") == "d_model,dmodel"
    node = xml.find("prt/node")
    assert node is not None
    assert node.findtext("answertest") == "AlgEquiv"


@pytest.mark.parametrize("name", ["pi", "e", "numer", "simp", "fpprec", "batch", "ans1", "qz_t1", "PI"])
def test_a_name_maxima_or_stack_reads_as_its_own_is_renamed_and_the_question_says_so(name: str) -> None:
    notes: lms.Notes = []
    xml = ET.fromstring(
        "\n".join(
            stack.question_xml(_question("Count.", ExpressionAnswer(f"2*{name} + d", (name, "d"))), notes)
        )
    )
    written = mx.maxima_name(name)
    assert written != name
    assert not mx.reserved(written)
    variables = xml.findtext("questionvariables/text", "")
    assert f"[{written}," in variables
    assert re.search(rf"\b{name}\b", xml.findtext("input/tans", "")) is None
    assert f"Write {name} as {written}." in xml.findtext("questiontext/text", "")
    assert (stack_inputs.RENAMED, "item") in notes


def test_names_that_would_be_one_name_in_stack_are_an_error_naming_the_item() -> None:
    with pytest.raises(ExportError, match=r"item 'item'.*'numer' and 'numer_v'"):
        stack.question_xml(_question("Count.", ExpressionAnswer("numer + numer_v", ("numer", "numer_v"))), [])


def test_numbers_use_the_items_own_half_width() -> None:
    """NumAbsolute's tolerance is the half-width less STACK's own slack of 1e-9; a half-width too
    small for that is a relative tolerance (or, at 0, a test of quiz's own comparison)."""
    for value, tolerance, test, options in [
        (12.3456, Tolerance.decimals(2), "NumAbsolute", 0.0051 - 1e-9),
        (12.3456, Tolerance.sigfigs(3), "NumAbsolute", 0.051 - 1e-9),
        (12.3456, Tolerance.relative(1e-3), "NumRelative", 1e-3),
        (9.5367e-7, Tolerance.sigfigs(2), "NumAbsolute", 5.1e-9 - 1e-9),
        (9.5367e-10, Tolerance.sigfigs(2), "NumRelative", 5.1e-12 / 9.5367e-10),
        (0.0, Tolerance.decimals(9), "AlgEquiv", None),
    ]:
        xml = ET.fromstring(
            "\n".join(stack.question_xml(_question("x?", NumericAnswer(value, tolerance)), []))
        )
        node = xml.find("prt/node")
        assert node is not None
        assert node.findtext("answertest") == test
        if options is None:
            assert node.findtext("tans") == "true"
            assert "<= 5.1000000051" in node.findtext("sans", "")
        else:
            assert float(node.findtext("testoptions", "")) == pytest.approx(options, rel=1e-6)


def test_a_question_in_parts_has_an_input_and_a_weighted_prt_per_part() -> None:
    plan = plan_class(banks.load("week1"), students=1, master_seed=7, items=["params-chain"])
    (question,) = (q for _, qs in plan.by_item() for q in qs)
    assert isinstance(question.answer, PartsAnswer)
    xml = ET.fromstring("\n".join(stack.question_xml(question, [])))
    assert [i.findtext("name") for i in xml.findall("input")] == ["ans1", "ans2", "ans3", "ans4", "ans5"]
    prts = xml.findall("prt")
    assert [float(p.findtext("value", "")) for p in prts] == [p.weight for p in question.answer.parts]
    later = prts[1].findtext("feedbackvariables/text", "")
    assert "qz_t2:if integerp(qz_r1) then" in later  # recomputed from the count typed in (a)
    assert "qz_r1:ans1" in later
    descriptions = [n.findtext("description") for n in prts[1].findall("node")]
    assert descriptions[:3] == [
        "its own answer",
        "the earlier answers move its target",
        "right given the earlier answers",
    ]


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------

runner = CliRunner()


def test_quiz_export_format_stack(tmp_path: Path) -> None:
    out = tmp_path / "w2.xml"
    result = runner.invoke(
        app, ["export", "week2", "-f", "stack", "--variants", "2", "--seed", "3", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    root = ET.parse(out).getroot()
    assert len(root.findall("question[@type='stack']")) > 50
    warnings = [line for line in result.stderr.splitlines() if line.startswith("quiz: warning:")]
    assert any("STACK reads answers in its own syntax" in w for w in warnings)
    assert any("essay" in w for w in warnings)
    assert len(warnings) == len(set(warnings))  # one line per kind of note
    piped = runner.invoke(
        app, ["export", "week2", "-f", "stack", "--items", "pe-vector", "--seed", "3", "-o", "-"]
    )
    assert piped.exit_code == 0
    assert piped.stdout.startswith("<?xml")


def test_the_same_seed_gives_the_same_bytes() -> None:
    bank = banks.load("week2")
    one = stack.build(plan_class(bank, students=2, master_seed=11, items=[i.id for i in bank.items]))
    two = stack.build(plan_class(bank, students=2, master_seed=11, items=[i.id for i in bank.items]))
    assert one == two


def test_concept_only_export_says_nothing_about_syntax() -> None:
    plan = plan_class(banks.load("week1"), students=1, master_seed=1, items=["why-scale-scores"])
    _, notes = stack.build(plan)
    assert len(notes) == 1
    assert "essay" in notes[0]


def test_explain_answers_are_not_units() -> None:
    answer = ExplainAnswer("Because the scores grow.", ("one", "two"))
    with pytest.raises(TypeError):
        stack_inputs.units(lms_model.build(_question("Why?", answer)))
    replace(answer)  # a frozen struct stays usable


def test_every_chain_step_of_both_banks_has_its_maxima_form() -> None:
    """A part that uses earlier parts is carried forward in STACK too: a new chain whose step has no
    Maxima form fails here instead of quietly marking its later parts against their own answers."""
    from attnquiz.engine.export.lms.stack_carry import carry

    steps = 0
    for name in ("week1", "week2"):
        bank = banks.load(name)
        plan = plan_class(bank, students=2, master_seed=3, items=[i.id for i in bank.items])
        for _, questions in plan.by_item():
            for question in questions:
                if isinstance(question.answer, PartsAnswer):
                    for part in question.answer.parts:
                        if part.uses:
                            steps += 1
                            assert carry(part, ["x"] * len(part.uses)) is not None, (
                                question.item_id,
                                part.label,
                            )
    assert steps >= 20


def test_a_step_without_a_maxima_form_is_marked_on_its_own_and_said() -> None:
    from attnquiz.engine.answers.kinds import IntegerAnswer, Part

    first = Part("a", "How many?", IntegerAnswer(12))
    second = Part("b", "Twice that?", IntegerAnswer(24), uses=("a",), recompute=lambda a: 2 * int(a))
    question = _question("A chain.", PartsAnswer((first, second)))
    notes: list[tuple[str, str]] = []
    xml = ET.fromstring("\n".join(stack.question_xml(question, notes)))
    assert any("no Maxima form of this chain's carry-forward step" in message for message, _ in notes)
    later = xml.findall("prt")[1]
    assert "qz_t2" not in later.findtext("feedbackvariables/text", "")
    assert [n.findtext("description") for n in later.findall("node")] == ["the right answer"]
    for test in xml.findall("qtest"):  # the tests expect what this tree does: (b) on its own answer
        expected = {e.findtext("name"): e.findtext("expectedanswernote") for e in test.findall("expected")}
        assert expected["prt2"] in {"prt2-correct", "prt2-wrong"}


def test_answer_notes_keep_only_what_stack_allows() -> None:
    tricky = Mistake("a|b;c:d  e", 3.0, "No.")
    twice = Mistake("a|b;c:d  e", 5.0, "No again.")
    xml = ET.fromstring(
        "\n".join(
            stack.question_xml(
                _question("x?", NumericAnswer(2.0, Tolerance.decimals(1)), (tricky, twice)), []
            )
        )
    )
    notes = [n.findtext("trueanswernote") for n in xml.findall("prt/node")]
    assert notes == ["prt1-correct", "prt1-a-b-c-d-e", "prt1-a-b-c-d-e-2"]


def test_the_right_answer_stack_shows_is_rounded_as_the_question_asks() -> None:
    """STACK shows an input's teacher's answer as "a correct answer": 2.75 for 2 decimal places, not
    2.7517036633292; the PRT still tests against the exact value with the item's tolerance."""
    for answer, shown in [
        (NumericAnswer(2.7517036633292, Tolerance.decimals(2)), "2.75"),
        (NumericAnswer(9.5367431640625e-07, Tolerance.sigfigs(2)), "9.5e-7"),
        (VectorAnswer((0.88079707797788, 0.11920292202212), Tolerance.decimals(2)), "matrix([0.88,0.12])"),
    ]:
        xml = ET.fromstring("\n".join(stack.question_xml(_question("x?", answer), [])))
        assert xml.findtext("input/tans") == shown
        assert xml.findtext("prt/node/tans") != shown


def test_a_matrix_input_lets_a_small_number_be_typed_in_its_boxes() -> None:
    """A vector or matrix input allows STACK's inert ``displaysci``: without it, 5.12e-7, 5.12E-7 and
    0.000000512 typed in a box are invalid (STACK's matrix input checks its display copy, where such
    a number is ``displaysci(5.12, 2, -7)``, against the student's security rules)."""
    for answer in [
        VectorAnswer((5.12e-7, 1.6151), Tolerance.sigfigs(3)),
        NumericAnswer(5.12e-7, Tolerance.sigfigs(3)),
    ]:
        xml = ET.fromstring("\n".join(stack.question_xml(_question("x?", answer), [])))
        allowed = (xml.findtext("input/allowwords") or "").split(",")
        kind = xml.findtext("input/type")
        assert (stack_inputs.INERT_SCIENTIFIC in allowed) == (kind == "matrix"), kind


def test_a_carried_part_does_not_mark_entries_red_against_its_own_answer() -> None:
    """A matrix part worked from the student's own (b) differs entry by entry from the part's own
    answer: the first node's list test stays quiet, so STACK does not show those entries as wrong
    before the nodes that carry (b) forward mark the part right."""
    plan = plan_class(banks.load("week1"), students=1, master_seed=7, items=["sdpa-chain"])
    (question,) = (q for _, qs in plan.by_item() for q in qs)
    xml = ET.fromstring("\n".join(stack.question_xml(question, [])))
    prts = xml.findall("prt")
    for prt in prts:
        quiet = [node.findtext("quiet") for node in prt.findall("node")]
        carried = any(
            n.findtext("description") == "right given the earlier answers" for n in prt.findall("node")
        )
        assert quiet == (["1"] + ["0"] * (len(quiet) - 1) if carried else ["0"] * len(quiet))
    assert any(n.findtext("quiet") == "1" for n in xml.iter("node"))


def test_a_carried_part_says_which_earlier_values_it_matched() -> None:
    """After a slip, "Correct, given your (b) = 0.7674 (as you kept it unrounded)" where the part
    follows from the unrounded value, "(b) = 0.77" where from the one typed: the values shown are
    the matched target's (qz_g), the words in STACK's conditional block on qz_un."""
    entry = next(i for i in banks.load("week1").items if i.id == "additive-chain")
    xml = ET.fromstring("\n".join(stack.question_xml(entry.question(0), [])))
    prt = xml.findall("prt")[2]
    notes = {n.findtext("trueanswernote"): n.findtext("truefeedback/text", "") for n in prt.findall("node")}
    given = notes["prt3-carried-right"]
    assert given.startswith(
        '<p>Correct, given your (b) = {@qz_g3_2@}[[if test="qz_un3"]] (as you kept it unrounded)'
    )
    variables = prt.findtext("feedbackvariables/text", "")
    assert "qz_g3_2:if qz_un3 then qz_u2 else qz_r2" in variables
