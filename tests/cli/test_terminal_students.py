"""What a student reads in the terminal at 80 and 40 columns, under NO_COLOR and in ASCII (issue 26):
a skipped concept question's model answer rendered, code that keeps its tokens and indentation when
folded, and maths names that never run together."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain
from attnquiz.engine.markup import tex as markup
from attnquiz.markdown_terminal import CONTINUATION_INDENT, CONTINUED
from attnquiz.terminal import to_ascii
from tests.cli.test_run_piped import QUIZ, environment

SCREENS = [
    pytest.param(80, {"NO_COLOR": "1"}, id="80-no-color"),
    pytest.param(40, {"NO_COLOR": "1"}, id="40-no-color"),
    pytest.param(80, {"PYTHONIOENCODING": "ascii"}, id="80-ascii"),
    pytest.param(40, {"PYTHONIOENCODING": "ascii"}, id="40-ascii"),
]


def run(home: Path, columns: int, extra: dict[str, str], *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [*QUIZ, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment(home, COLUMNS=str(columns), **extra),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("columns", "extra"), SCREENS)
def test_a_skipped_concept_question_shows_its_model_answer_rendered(
    tmp_path: Path, columns: int, extra: dict[str, str]
) -> None:
    out = run(
        tmp_path,
        columns,
        extra,
        "run",
        "week1",
        "--item",
        "path-length-explained",
        "--seed",
        "1",
        stdin="s\n",
    )
    answer = banks.load("week1").get("path-length-explained").original().answer
    assert isinstance(answer, ExplainAnswer)
    shown = out[out.index("Skipped") :]
    assert "Model answer" in shown
    assert "Key points" in shown
    assert "$" not in shown  # TeX typeset, not raw
    assert "O(T)" in shown
    assert all(len(line) <= columns for line in out.splitlines()), out
    # The paragraphs are folded to the screen, not broken where the YAML broke them.
    rendered = plain.to_terminal(answer.value)
    expected = to_ascii(rendered) if "PYTHONIOENCODING" in extra else rendered
    first = words(expected.split("\n\n")[0])
    assert first in words(shown)
    yaml_lines = [line.strip() for line in answer.value.splitlines() if line.strip()]
    if columns == 40:
        assert not any(line.strip() == yaml_lines[1] for line in shown.splitlines())
    if "PYTHONIOENCODING" in extra:
        assert out.isascii()


def code_of(item: str, seed: int) -> list[str]:
    prompt = banks.load("week1").get(item).question(seed).variant.prompt
    (block,) = [b for b in md.blocks(prompt) if isinstance(b, md.CodeBlock)]
    return block.text.split("\n")


@pytest.mark.parametrize(("columns", "extra"), SCREENS)
def test_code_folds_between_tokens_keeps_its_indentation_and_marks_continuations(
    tmp_path: Path, columns: int, extra: dict[str, str]
) -> None:
    out = run(tmp_path, columns, extra, "show", "week1", "alignment-table-shape", "--seed", "3")
    lines = out.splitlines()
    assert all(len(line) <= columns for line in lines), out
    code = code_of("alignment-table-shape", 3)
    # Every code line, joined back from its folds, is the line itself: nothing cut, nothing lost.
    start = next(i for i, line in enumerate(lines) if line.strip() == code[0].strip())
    joined: list[str] = []
    indents: list[int] = []
    i = start
    while len(joined) < len(code):
        piece = lines[i][4:]
        first = piece
        while piece.endswith(CONTINUED):
            i += 1
            following = lines[i][4:]
            # A continuation is indented deeper than the line it continues (never a new statement).
            assert len(following) - len(following.lstrip()) >= len(first) - len(first.lstrip()) + 2
            piece = piece.removesuffix(CONTINUED) + " " + following.lstrip()
        joined.append(piece)
        indents.append(len(first) - len(first.lstrip()))
        i += 1
    for want, got, indent in zip(code, joined, indents, strict=True):
        assert words(got.replace("( ", "(").replace(", ", ",")) == words(
            want.replace("( ", "(").replace(", ", ",")
        ), (want, got)
        assert indent == len(want) - len(want.lstrip())  # Python's own indentation kept
    if columns == 40:
        assert any(line.endswith(CONTINUED) for line in lines)  # something had to fold at 40
        assert CONTINUATION_INDENT == 4
        numbers = re.search(r"hidden = (\d+), (\d+), (\d+)", " ".join(joined))
        assert numbers, joined
        hidden_line = next(line for line in code if line.startswith("T_source"))
        assert hidden_line.endswith(f"{numbers[1]}, {numbers[2]}, {numbers[3]}")


def all_texts() -> list[str]:
    """Every prompt, step, mistake feedback and model answer of the built-in banks, at a few seeds."""
    texts: list[str] = []
    for name in ("week1", "week2"):
        for entry in banks.load(name).items:
            for seed in (0, 1):
                variant = entry.question(seed).variant
                texts += [variant.prompt, variant.hint, *variant.solution]
                texts += [m.feedback for m in variant.mistakes]
                for part in variant.parts:
                    texts += [part.prompt, *part.solution, *(m.feedback for m in part.mistakes)]
                answer = entry.question(seed).answer
                if isinstance(answer, ExplainAnswer):
                    texts += [answer.value, *answer.points]
    return texts


# A subscript spelled with an underscore, run into the next name: "d_modeld_ff", "W_QW_K".
RUN_TOGETHER = re.compile(r"_(?:model|ff|text|source|target|Q|K|V|O)(?=[A-Za-z])")


def test_no_two_maths_names_run_together_in_any_bank_text() -> None:
    for text in all_texts():
        for segment in markup.parse(text):
            if not isinstance(segment, markup.Math):
                continue
            shown = markup.to_unicode(segment.tree, display=segment.display)
            for spelled in (shown, to_ascii(shown)):
                assert not RUN_TOGETHER.search(spelled), (segment.source, spelled)
                assert not re.search(r"sqrt\([^()]*\.\)", spelled), spelled


@pytest.mark.parametrize(("columns", "extra"), SCREENS)
def test_names_apart_and_roots_closed_on_screen(tmp_path: Path, columns: int, extra: dict[str, str]) -> None:
    out = run(tmp_path, columns, extra, "show", "week1", "ffn-params-formula", "--seed", "1", "--solution")
    assert "d_modeld_ff" not in out.replace("\n", "")
    assert not RUN_TOGETHER.search(out)
    why = run(tmp_path, columns, extra, "show", "week1", "why-scale-scores", "--seed", "1")
    if "PYTHONIOENCODING" in extra:
        assert "sqrt(d_k)" in why
        assert "sqrt(d_k.)" not in why
        assert why.isascii()
    else:
        assert "√dₖ" in why


def test_an_exam_says_a_revised_part_is_graded_with_the_later_parts_kept(tmp_path: Path) -> None:
    from attnquiz.engine.practice.planning import plan_practice

    plan = plan_practice(banks.load("week1"), seed=7, items=["additive-chain"], count=1, exam=True)
    rights = [p.answer.format() for p in plan.questions[0].build().variant.parts]
    stdin = "\n".join([*rights, "g 1", "0.5", "submit"]) + "\n"
    out = run(
        tmp_path,
        80,
        {"NO_COLOR": "1"},
        "run",
        "week1",
        "--item",
        "additive-chain",
        "--seed",
        "7",
        "--exam",
        stdin=stdin,
    )
    said = words(out)
    assert (
        f"Saved, and graded with your earlier answers to the later parts: (b) {rights[1]}; (c) {rights[2]}."
        in said
    )
    assert f"Your answer: 0.5 | {rights[1]} | {rights[2]}" in said  # the revision is what was graded


@pytest.mark.parametrize(("columns", "extra"), SCREENS)
def test_an_exam_with_nothing_answered_advises_nothing(
    tmp_path: Path, columns: int, extra: dict[str, str]
) -> None:
    out = run(
        tmp_path,
        columns,
        extra,
        "run",
        "week1",
        "--topic",
        "complexity",
        "--count",
        "3",
        "--exam",
        "--seed",
        "1",
        stdin="submit\n",
    )
    assert "Summary" in out
    assert "Topics to revisit" not in out
    assert "Practise what you missed" not in out


def test_a_review_that_leaves_nothing_due_says_so_instead_of_offering_one(tmp_path: Path) -> None:
    env = {"NO_COLOR": "1"}
    first = run(tmp_path, 80, env, "review", "--limit", "1", "--new", "1", stdin="s\n")
    assert "Summary" in first
    # The skipped item is due now: the next review goes on. Then nothing new is left for today.
    again = run(tmp_path, 80, env, "review", "--limit", "1", "--new", "0", stdin="12345\n")
    assert "Go on reviewing" not in again
    assert "Practise what you missed: quiz review" not in words(again)
    assert "Nothing else is due for review now; the next review is" in words(again)


def test_at_40_columns_the_choices_after_an_answer_are_folded_whole(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    from tests.cli.test_run_pty import finish, spawn

    child = spawn(tmp_path, "run", "demo", "--original", columns=40)
    child.expect(r"\[1/3\] › ")
    child.sendline("2")  # wrong: the solution is shown, then the choices
    child.expect(r"Enter next ·(\x1b\[[0-9;]*m|\s)+a another like this ·(\x1b\[[0-9;]*m|\s)+q quit")
    child.sendline("")
    child.expect(r"\[2/3\] › ")
    child.sendline("0")  # right
    gap = r"(\x1b\[[0-9;]*m|\s)+"  # folded between choices, never inside one
    child.expect(rf"Enter next · w solution ·{gap}g guessed{gap}\(\d+{gap}min\)")
    child.expect("› ")
    child.sendline("g")
    child.expect("A guess: rated again")
    child.sendline("q")
    text = finish(child)
    assert "Summary" in text
    assert pexpect is not None
