"""Bank text in a STACK export is text: whatever a bank says, the only STACK blocks, inputs,
feedback tags and CAS expressions of the question text, the general feedback and the PRT feedback
are quiz's own. STACK runs ``[[javascript]]`` in the student's page and evaluates ``[[define]]``,
``[[if test]]`` and ``{@...@}`` as Maxima on the server, so a single surviving opener is a hole."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from attnquiz.engine.answers.kinds import ChoiceAnswer, Mistake, NumericAnswer, Option
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import stack
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.variant import Question, Variant

HOSTILE_BANK = Path(__file__).resolve().parents[2] / "data" / "hostile_stack" / "stack_blocks.yaml"

# Every sequence that opens something in STACK's CAS text.
_OPENER = re.compile(r"\[\[|\{@|\{#")
# quiz's own: one input, its validation and its PRT's feedback per part, and the carried-forward
# feedback's CAS expressions of quiz's own variables (qz_...).
_OWN = re.compile(r"\[\[(?:input|validation):ans\d+\]\]|\[\[feedback:prt\d+\]\]|\{@qz_\w+@\}")
_CASTEXT = ("questiontext/text", "generalfeedback/text", ".//truefeedback/text", ".//falsefeedback/text")


def _castexts(question: ET.Element) -> list[str]:
    return [t.text or "" for path in _CASTEXT for t in question.findall(path)]


def _foreign(question: ET.Element) -> list[str]:
    """The openers that are not part of one of quiz's own tags."""
    return [m for text in _castexts(question) for m in _OPENER.findall(_OWN.sub("", text))]


def _own_tags(question: ET.Element) -> list[str]:
    return sorted(m for text in _castexts(question) for m in _OWN.findall(text))


def _expected_tags(question: ET.Element) -> list[str]:
    """The tags quiz writes for the inputs and PRTs the question declares, once each."""
    inputs = [n.findtext("name", "") for n in question.findall("input")]
    prts = [p.findtext("name", "") for p in question.findall("prt")]
    tags = [f"[[{kind}:{name}]]" for name in inputs for kind in ("input", "validation")]
    return sorted(tags + [f"[[feedback:{name}]]" for name in prts])


def test_the_third_bracket_bank_exports_no_foreign_block() -> None:
    bank = banks.load(str(HOSTILE_BANK))
    plan = plan_class(bank, students=3, master_seed=11, items=[i.id for i in bank.items])
    root = ET.fromstring(stack.build(plan)[0])
    questions = root.findall("question[@type='stack']")
    assert len(questions) == 6
    for question in questions:
        assert _foreign(question) == []
        blocks = sorted(m for text in _castexts(question) for m in re.findall(r"\[\[[^\]]*\]\]", text))
        assert blocks == _expected_tags(question)
        # The text is shown as written: a reader sees the brackets the author typed.
        shown = html.unescape("\n".join(_castexts(question)))
        assert "[[[javascript]]alert(" in shown


def _question(text: str) -> Question:
    numeric = Variant(
        prompt=f"Compute. {text}",
        answer=NumericAnswer(2.0, Tolerance.decimals(1)),
        solution=[f"Because {text}", text],
        mistakes=(Mistake("m", 3.0, f"Not so. {text}"), Mistake("n", 5.0, text)),
    )
    return Question("hostile", "item", "source", "topic", 5, "0000-0005", numeric)


def _choice(text: str) -> Question:
    choice = Variant(
        prompt=text,
        answer=ChoiceAnswer(
            (Option(f"Yes {text}", True), Option(text, False, f"Why not {text}"), Option("No", False, text)),
            multiple=True,
        ),
        solution=[text],
    )
    return Question("hostile", "which", "source", "topic", 5, "0000-0005", choice)


def _element(question: Question) -> ET.Element:
    return ET.fromstring("\n".join(stack.question_xml(question, [])))


# Text made of the characters STACK's openers and closers are made of, with HTML's and Markdown's
# own, and of whole openers, so that overlaps ([[[, {{@, [{#, ...) and openers split across an
# escape are drawn often.
_PIECES = [
    "[[[javascript]]",
    "[[[if test='true']]",
    "{{@x@}}",
    "[{#x#}]",
    "&#91;[",
    "[[input:ans1]]",
    "@}",
    "$x^{2}$",
]
_TEXT = st.lists(
    st.sampled_from(_PIECES) | st.text(alphabet="[]{}@#&;:/ aif=<>*`_", max_size=12), max_size=6
).map("".join)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_TEXT)
def test_no_bank_text_opens_a_stack_block(text: str) -> None:
    for make in (_question, _choice):
        element = _element(make(text))
        assert _foreign(element) == []
        assert _own_tags(element) == _own_tags(_element(make("plain")))
