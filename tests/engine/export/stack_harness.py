"""Run exported STACK questions through STACK's own Maxima library, as Moodle's STACK would.

The library is the GPL reference copy beside the repository (``<repo>/../shared/reference/stack``),
never part of the project. A test module gathers every case it needs (a question's XML and the
inputs a student gives), and `run` evaluates them all in ONE Maxima process (loading the library
takes seconds): for each case the question variables, the inputs' validators, then each PRT's
feedback variables and its nodes, walked in Maxima from node 0 by the answer tests' results, exactly
as the XML says (answer test, SAns, TAns, options, scores, next nodes, answer notes).

What STACK's PHP side does before Maxima (parsing the typed text, inserting stars, its security
rules) is not run: inputs are given as the Maxima expressions STACK's validation would produce. As
in STACK, they are assigned unsimplified and the validators run with ``simp:false``; the feedback
variables and the answer tests (AlgEquiv, NumAbsolute, NumRelative) run simplified.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
# Beside the checkout, as CI places it; STACK_REFERENCE names another folder (a worktree elsewhere).
REFERENCE = Path(os.environ.get("STACK_REFERENCE") or REPO.parent / "shared" / "reference" / "stack")
LIBRARY = REFERENCE / "maxima"


def missing() -> str | None:
    """Why the Maxima tests cannot run here (None when they can)."""
    if not (LIBRARY / "stackmaxima.mac").is_file():
        return f"STACK's Maxima library is not at {LIBRARY}"
    if shutil.which("maxima") is None:
        return "maxima is not installed (Debian package maxima)"
    if not _share_library_loads():
        return "maxima's share library is not installed (Debian package maxima-share)"
    return None


@cache
def _share_library_loads() -> bool:
    """Whether Maxima finds its share library (STACK loads ``stringproc`` from it): Debian ships
    it apart, as maxima-share, which an install without recommended packages leaves out."""
    done = subprocess.run(
        ["maxima", "--very-quiet", "--batch-string", 'load("stringproc")$ print(sconcat("lo", "aded"))$'],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return "loaded" in done.stdout and "not found" not in done.stdout


@dataclass(frozen=True, slots=True)
class Branch:
    score: str
    note: str
    next_node: int


@dataclass(frozen=True, slots=True)
class Node:
    name: int
    test: str
    sans: str
    tans: str
    options: str
    true: Branch
    false: Branch


@dataclass(frozen=True, slots=True)
class Prt:
    name: str
    value: float
    variables: str
    nodes: dict[int, Node]


@dataclass(frozen=True, slots=True)
class InputSpec:
    name: str
    kind: str
    tans: str
    validator: str | None


@dataclass(frozen=True, slots=True)
class QTest:
    number: int
    description: str
    inputs: dict[str, str]
    expected: dict[str, tuple[float, str]]


@dataclass(frozen=True, slots=True)
class Question:
    name: str
    variables: str
    inputs: dict[str, InputSpec]
    prts: dict[str, Prt]
    tests: list[QTest]


def _text(element: ET.Element | None, path: str) -> str:
    if element is None:
        return ""
    found = element.find(path)
    return "" if found is None or found.text is None else found.text


def _branch(node: ET.Element, side: str) -> Branch:
    return Branch(
        _text(node, f"{side}score"),
        _text(node, f"{side}answernote").strip(),
        int(_text(node, f"{side}nextnode")),
    )


def parse(xml_text: str) -> list[Question]:
    """The STACK questions of an exported file, as the harness runs them."""
    questions = []
    for element in ET.fromstring(xml_text).findall("question"):
        if element.get("type") != "stack":
            continue
        inputs = {}
        for item in element.findall("input"):
            options = _text(item, "options")
            found = re.search(r"validator:(\w+)", options)
            name = _text(item, "name")
            inputs[name] = InputSpec(
                name, _text(item, "type"), _text(item, "tans"), found.group(1) if found else None
            )
        prts = {}
        for prt in element.findall("prt"):
            nodes = {}
            for node in prt.findall("node"):
                n = int(_text(node, "name"))
                nodes[n] = Node(
                    n,
                    _text(node, "answertest"),
                    _text(node, "sans"),
                    _text(node, "tans"),
                    _text(node, "testoptions"),
                    _branch(node, "true"),
                    _branch(node, "false"),
                )
            name = _text(prt, "name")
            prts[name] = Prt(name, float(_text(prt, "value")), _text(prt, "feedbackvariables/text"), nodes)
        tests = []
        for qtest in element.findall("qtest"):
            tests.append(
                QTest(
                    int(_text(qtest, "testcase")),
                    _text(qtest, "description"),
                    {_text(t, "name"): _text(t, "value") for t in qtest.findall("testinput")},
                    {
                        _text(e, "name"): (float(_text(e, "expectedscore")), _text(e, "expectedanswernote"))
                        for e in qtest.findall("expected")
                    },
                )
            )
        questions.append(
            Question(
                _text(element, "name/text"), _text(element, "questionvariables/text"), inputs, prts, tests
            )
        )
    return questions


@dataclass(frozen=True, slots=True)
class Case:
    """A question and the inputs a student gives (Maxima expressions, by input name)."""

    key: str
    question: Question
    inputs: dict[str, str]


@dataclass
class Outcome:
    """What STACK's Maxima made of a case: inputs found invalid, and each PRT's (score, final note)."""

    invalid: dict[str, str] = field(default_factory=dict)
    prts: dict[str, tuple[float, str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _statements(text: str) -> list[str]:
    """CAS statements separated by ``;`` at the top level (not inside strings or brackets)."""
    out: list[str] = []
    current: list[str] = []
    depth, quoted = 0, False
    for ch in text:
        if ch == '"' and (not current or current[-1] != "\\"):
            quoted = not quoted
        if not quoted:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == ";" and depth == 0:
                out.append("".join(current).strip())
                current = []
                continue
        current.append(ch)
    if "".join(current).strip():
        out.append("".join(current).strip())
    return [s for s in out if s]


def _locals(statements: Iterable[str]) -> list[str]:
    names: list[str] = []
    for statement in statements:
        found = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:(?!=)", statement)
        if found and found.group(1) not in names:
            names.append(found.group(1))
    return names


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _test_call(node: Node) -> str:
    if node.options:
        return f"AT{node.test}({node.sans}, {node.tans}, {node.options})"
    return f"AT{node.test}({node.sans}, {node.tans})"


def _score(text: str) -> str:
    return f"float({text})"


def _walk(prt: Prt) -> str:
    """Maxima code that walks ``prt`` from node 0 and prints its score and final note (for the case
    named by ``qz_key``)."""
    arms = []
    for n, node in sorted(prt.nodes.items()):
        t, f = node.true, node.false
        arms.append(
            f"if qz_n = {n} then (qz_res: errcatch({_test_call(node)}), "
            f"if qz_res = [] then (qz_err: true, qz_n: -1) "
            f"else if is(second(first(qz_res)) = true) then "
            f"(qz_score: {_score(t.score)}, qz_note: {_string(t.note)}, qz_n: {t.next_node}) "
            f"else (qz_score: {_score(f.score)}, qz_note: {_string(f.note)}, qz_n: {f.next_node}))"
        )
    chain = " else ".join(arms) + " else qz_n: -1"
    statements = _statements(prt.variables)
    names = _locals(statements)
    body = ", ".join(f"if errcatch({s}) = [] then qz_fverr: true" for s in statements)
    local = ", ".join(["qz_n", "qz_res", "qz_score", "qz_note", "qz_err", "qz_fverr", *names])
    name = _string(prt.name)
    return (
        f'block([{local}], qz_n: 0, qz_score: 0, qz_note: "", qz_err: false, qz_fverr: false'
        + (f", {body}" if body else "")
        + f', if qz_fverr then print("QZERR", qz_key, {name}, "feedback-variables") '
        + f"else (while qz_n >= 0 do ({chain}), "
        + f'if qz_err then print("QZERR", qz_key, {name}, "answer-test") '
        + f'else print("QZR", qz_key, {name}, qz_score, qz_note)))'
    )


def _validity(spec: InputSpec) -> str:
    """Maxima code that sets ``qz_bad_<input>`` when the input is invalid (its validator refuses it; a
    numerical input holds a name; a choice is not among the options). It runs with ``simp:false``,
    as STACK validates an input (``inputbase.class.php``: validation is unsimplified unless the input
    has the ``simp`` option): a set literal in a validator is then not in canonical order."""
    flag = f"qz_bad_{spec.name}"
    tests = []
    if spec.validator:
        tests.append(f'not(is({spec.validator}({spec.name}) = ""))')
    if spec.kind == "numerical":
        tests.append(f"not(is(listofvars({spec.name}) = []))")
    if spec.kind in {"checkbox", "radio"}:
        chosen = spec.name if spec.kind == "checkbox" else f"[{spec.name}]"
        tests.append(f"not(subsetp(setify({chosen}), setify(map(first, {spec.tans}))))")
    test = " or ".join(tests) if tests else "false"
    return (
        f"{flag}: block([qz_e, simp: false], qz_e: errcatch({test}), "
        "if qz_e = [] then true else first(qz_e))$"
    )


def _reads(prt: Prt, inputs: Iterable[str]) -> list[str]:
    """The inputs a PRT reads (STACK runs it only when all of them are valid)."""
    text = prt.variables + " ".join(n.sans + " " + n.tans for n in prt.nodes.values())
    return [name for name in inputs if re.search(rf"\b{name}\b", text)]


def _question_functions(number: int, q: Question) -> list[str]:
    """Maxima functions for one question: ``qz_vars<n>()`` runs its question variables, and
    ``qz_mark<n>(qz_key)`` checks the inputs and walks every PRT whose inputs are all valid."""
    statements = _statements(q.variables)
    variables = ", ".join(statements) if statements else "true"
    body = []
    for name, spec in q.inputs.items():
        body.append(_validity(spec).rstrip("$"))
        body.append(f'if qz_bad_{name} then print("QZINV", qz_key, {_string(name)})')
    for prt in q.prts.values():
        read = _reads(prt, q.inputs)
        bad = " or ".join(f"qz_bad_{name}" for name in read) or "false"
        body.append(f"if not({bad}) then {_walk(prt)}")
    flags = ", ".join(f"qz_bad_{name}" for name in q.inputs)
    return [
        f"qz_vars{number}() := ({variables})$",
        f"qz_mark{number}(qz_key) := block([{flags}], {', '.join(body)})$",
    ]


def script(cases: Sequence[Case]) -> str:
    """The Maxima batch file that runs every case: each question's functions once, then a few
    lines per case (its inputs, its question's variables and marking)."""
    out = [
        f'file_search_maxima: append(["{LIBRARY}/###.{{mac,mc}}"], file_search_maxima)$',
        f'file_search_lisp: append(["{LIBRARY}/###.{{lisp}}"], file_search_lisp)$',
        'load("stackmaxima.mac")$',
        "simp: true$",
        "display2d: false$",
    ]
    numbers: dict[int, int] = {}
    for case in cases:
        q = case.question
        if id(q) not in numbers:
            numbers[id(q)] = len(numbers)
            out += _question_functions(numbers[id(q)], q)
        n = numbers[id(q)]
        assigned = ", ".join(f"{name}: {value}" for name, value in case.inputs.items())
        names = _locals(_statements(q.variables))
        # The question variables first: a test input may name one of them. The inputs are assigned
        # unsimplified, as STACK puts them into a PRT's session (question.php: "Suppress
        # simplification of raw inputs"); the feedback variables and answer tests simplify.
        out.append(f"(qz_vars{n}(), simp: false, {assigned}, simp: true, qz_mark{n}({_string(case.key)}))$")
        out.append(f"kill({', '.join([*case.inputs, *names])})$")
    out.append('print("QZDONE")$')
    return "\n".join(out) + "\n"


def _maxima(text: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a batch file in Maxima with STACK's library on its search path (not loaded)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cases.mac"
        path.write_text(text, encoding="utf-8")
        return subprocess.run(
            ["maxima", "--very-quiet", "-b", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def printed(text: str, marker: str, timeout: float = 600) -> list[str]:
    """What a batch file's ``print(marker, value)`` lines printed, in order (the values)."""
    done = _maxima(text, timeout)
    return [
        line.split(None, 1)[1].strip() for line in done.stdout.splitlines() if line.startswith(marker + " ")
    ]


def run(cases: Sequence[Case], timeout: float = 3000) -> dict[str, Outcome]:
    """Every case's outcome, from one Maxima process."""
    done = _maxima(script(cases), timeout)
    outcomes = {case.key: Outcome() for case in cases}
    finished = False
    for line in done.stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "QZR" and len(parts) >= 5:
            outcomes[parts[1]].prts[parts[2]] = (float(parts[3]), parts[4])
        elif parts[0] == "QZERR" and len(parts) >= 4:
            outcomes[parts[1]].errors.append(f"{parts[2]}: {parts[3]}")
        elif parts[0] == "QZINV" and len(parts) >= 3:
            outcomes[parts[1]].invalid[parts[2]] = "invalid"
        elif parts[0] == "QZDONE":
            finished = True
    if not finished:
        raise RuntimeError("maxima stopped before the end:\n" + done.stdout[-3000:] + done.stderr[-2000:])
    return outcomes


__all__ = ["Case", "Outcome", "Question", "missing", "parse", "printed", "run", "script"]
