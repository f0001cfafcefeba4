"""What the value types compare: the fields that were never part of their value are still ignored.

The answer kinds, formulas, variants and questions are msgspec structs (they were dataclasses whose
fields marked ``compare=False`` were left out of equality and hashing): a shape's spellings, a
part's recompute function, a formula's tree, a variant's stem and listed mistakes, a question's
folder. Two values that differ only there are equal and hash alike; any other field tells them apart.
"""

from __future__ import annotations

from msgspec.structs import replace

from attnquiz.engine.answers.kinds import NumericAnswer, Part, ShapeAnswer
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.bank import finding as banks


def test_a_shapes_spellings_are_not_its_value() -> None:
    one = ShapeAnswer(("T", 512), symbols=(("d_model", 512),))
    other = ShapeAnswer(("T", 512), symbols=(("d_model", 512), ("h", 8)), products=(("d_model", "h*d_k"),))
    assert one == other
    assert hash(one) == hash(other)
    assert one != ShapeAnswer(("T", 256))


def test_a_parts_recompute_function_is_not_its_value() -> None:
    def first(a: float) -> float:
        return a

    def second(a: float) -> float:
        return 2 * a

    one = Part("b", "Then?", NumericAnswer(1.0), uses=("a",), recompute=first)
    other = Part("b", "Then?", NumericAnswer(1.0), uses=("a",), recompute=second)
    assert one == other
    assert hash(one) == hash(other)
    assert one != replace(one, prompt="Then what?")


def test_a_formulas_tree_is_not_its_value() -> None:
    assert Formula("2*d", ("tree",)) == Formula("2*d", ("another",))
    assert hash(Formula("2*d", ())) == hash(Formula("2*d", ("x",)))
    assert Formula("2*d", ()) != Formula("3*d", ())


def test_a_questions_folder_is_not_its_value_and_its_variant_is() -> None:
    question = banks.load("week1").get("additive-score").question(7)
    assert question == replace(question, folder="/elsewhere")
    assert question != replace(question, seed=8)
    assert question.variant == replace(question.variant, stem="ignored: made again from the prompt")
    assert question.variant != replace(question.variant, hint="another hint")
