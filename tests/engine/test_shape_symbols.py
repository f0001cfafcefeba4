"""Symbolic shapes (issue 13, defect 3): every dimension a prompt names is readable, in every spelling
the tool prints, and then graded right or wrong; the d_k/d_v mix-up is named."""

from __future__ import annotations

import pytest

from attnquiz.engine.answers.kinds import Mistake, ShapeAnswer, symbols
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade, grade_answer

SPELLINGS = {
    "d_k": ["d_k", "dk", "d_{k}", "dₖ", "d_\\text{k}"],
    "d_v": ["d_v", "dv", "d_{v}", "dᵥ"],
    "d_model": [
        "d_model", "dmodel", "d_{model}", "d_{\\text{model}}", "d_\\text{model}", "d_{\\mathrm{model}}",
    ],
    "d_ff": ["d_ff", "dff", "d_{ff}", "d_{\\text{ff}}"],
}  # fmt: skip
SYMBOLIC = ShapeAnswer(("B", "T", "d_v"), symbols=symbols(B=None, T=None, d_model=None, d_k=None, d_v=None))


@pytest.mark.parametrize(
    ("name", "spelling"), [(name, s) for name, spellings in SPELLINGS.items() for s in spellings]
)
def test_every_spelling_of_a_declared_name_is_that_name(name: str, spelling: str) -> None:
    answer = ShapeAnswer(("T", name), symbols=symbols(T=None, d_k=None, d_v=None, d_model=None, d_ff=None))
    assert grade_answer(answer, f"[T, {spelling}]").status == "correct", spelling
    assert grade_answer(answer, f"({spelling}, T)").mistake is not None  # reversed, and read
    assert grade_answer(answer, f"T x {spelling}").status == "correct"


@pytest.mark.parametrize(
    ("response", "status", "tag"),
    [
        ("[B, T, d_v]", "correct", None),
        ("[B, T, dᵥ]", "correct", None),
        ("[B, T, d_k]", "wrong", "dk-for-dv"),
        ("[B, T, dₖ]", "wrong", "dk-for-dv"),
        ("[B, T, dk]", "wrong", "dk-for-dv"),
        ("[B, T, d_model]", "wrong", None),
        ("[T, B, d_v]", "wrong", None),
        ("[d_v, T, B]", "wrong", "dims-reversed"),
        ("[B, T, d_ff]", "invalid", None),  # the prompt never names d_ff
        ("[b, T, d_v]", "invalid", None),  # names are case-sensitive
        ("[B, T, banana]", "invalid", None),
    ],
)
def test_declared_names_are_graded_and_others_are_unreadable(
    response: str, status: str, tag: str | None
) -> None:
    mix_up = Mistake("dk-for-dv", ("B", "T", "d_k"), "That uses d_k.")
    result = grade_answer(SYMBOLIC, response, [mix_up])
    assert result.status == status, result
    assert (result.mistake.tag if result.mistake else None) == tag


def test_a_name_with_a_given_value_counts_as_that_value() -> None:
    answer = ShapeAnswer(("T", 512), symbols=symbols(T=None, d_model=512, h=8, d_v=64))
    one_head = Mistake("one-head", ("T", 64), "One head.")
    assert grade_answer(answer, "[T, d_model]").status == "correct"
    assert grade_answer(answer, "[T, 512]").status == "correct"
    result = grade_answer(answer, "[T, d_v]", [one_head])
    assert result.mistake is not None
    assert result.mistake.tag == "one-head"
    assert grade_answer(answer, "[T, h]").status == "wrong"
    assert grade_answer(answer, "[T, d_model]").read_as == "[T, d_model]"


def test_a_size_to_work_out_kept_as_a_name_is_asked_for_its_value() -> None:
    answer = ShapeAnswer((32, 8, 50, 64), symbols=symbols(B=32, T=50, d_model=512, h=8, d_k=None))
    assert grade_answer(answer, "[B, h, T, 64]").status == "correct"
    result = grade_answer(answer, "[B, h, T, d_k]")
    assert result.status == "invalid"
    assert "d_k is one to work out" in result.feedback
    assert "every size" in grade_answer(ShapeAnswer((50, 512)), "[T, 512]").feedback


# -- the items ----------------------------------------------------------------------------

WEEK1 = {entry.id: entry for entry in banks.load("week1").items}


@pytest.mark.parametrize("seed", [8, 11])
def test_attention_shapes_reads_every_name_its_prompt_defines(seed: int) -> None:
    question = WEEK1["attention-shapes"].question(seed)
    answer = question.answer
    assert isinstance(answer, ShapeAnswer)
    assert answer.symbolic
    other = {"d_v": "d_k", "d_k": "d_v"}[str(answer.dims[-1])]
    for spelling in (other, other.replace("_", ""), other[0] + "_{" + other[2] + "}"):
        result = grade(question, f"[B, T, {spelling}]")
        assert result.status == "wrong", (spelling, result)
        assert result.mistake is not None
        assert result.mistake.tag in {"dk-for-dv", "dv-for-dk"}
    assert grade(question, "[B, T, d_model]").status == "wrong"


def test_every_symbolic_attention_shape_names_the_dk_dv_mix_up() -> None:
    seen: set[str] = set()
    for seed in range(300):
        question = WEEK1["attention-shapes"].question(seed)
        answer = question.answer
        assert isinstance(answer, ShapeAnswer)
        if not answer.symbolic or answer.dims[-1] not in {"d_k", "d_v"}:
            continue
        swapped = {"d_k": "dᵥ", "d_v": "dₖ"}[str(answer.dims[-1])]
        result = grade(question, "[" + ", ".join([*map(str, answer.dims[:-1]), swapped]) + "]")
        assert result.mistake is not None, (seed, result)
        seen.add(result.mistake.tag)
    assert seen == {"dk-for-dv", "dv-for-dk"}


def test_concat_width_original_reads_d_model_as_its_value() -> None:
    question = WEEK1["concat-width"].original()
    assert question.answer.format() == "[T, 512]"
    for response in ("[T, d_model]", "[T, dmodel]", "[T, d_{model}]", "T × d_model"):
        assert grade(question, response).status == "correct", response
    one_head = grade(question, "[T, d_v]")
    assert one_head.mistake is not None
    assert one_head.mistake.tag == "one-head"


@pytest.mark.parametrize("item", ["attention-shapes", "concat-width", "mha-head-shapes"])
def test_every_name_a_shape_prompt_declares_is_readable(item: str) -> None:
    for seed in range(60):
        question = WEEK1[item].question(seed)
        answer = question.answer
        assert isinstance(answer, ShapeAnswer)
        for name, _ in answer.symbols:
            dims = [str(d) for d in answer.dims]
            dims[0] = name
            result = grade(question, "[" + ", ".join(dims) + "]")
            assert result.status != "invalid" or "to work out" in result.feedback, (seed, name, result)


def _shape_items() -> list[tuple[str, str]]:
    found = []
    for bank_name in ("week1", "week2"):
        for entry in banks.load(bank_name).items:
            if isinstance(entry.question(0).answer, ShapeAnswer):
                found.append((bank_name, entry.id))
    return found


@pytest.mark.parametrize(("bank_name", "item"), _shape_items())
def test_a_name_the_prompt_gives_a_number_may_stand_for_it(bank_name: str, item: str) -> None:
    entry = banks.load(bank_name).get(item)
    for seed in range(40):
        question = entry.question(seed)
        answer = question.answer
        assert isinstance(answer, ShapeAnswer)
        assert answer.symbols, (item, seed)  # every shape prompt names some dimension
        for name, value in answer.symbols:
            if value is None or value not in answer.dims:
                continue
            dims = [str(d) for d in answer.dims]
            dims[answer.dims.index(value)] = name
            result = grade(question, "[" + ", ".join(dims) + "]")
            assert result.status == "correct", (item, seed, name, result)
