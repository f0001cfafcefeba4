"""Markdown worksheets and keys: TeX maths in tight dollars, a page break per student, identical reruns."""

from __future__ import annotations

from attnquiz.engine.export.text import markdown
from attnquiz.engine.markup import markdown as md

from .golden import check_golden
from .samples import sample_plan


def test_worksheets_match_the_golden_file() -> None:
    plan = sample_plan(2)
    check_golden("samples-worksheets.md", markdown.worksheets(plan, plan.sheets))


def test_keys_match_the_golden_files() -> None:
    plan = sample_plan(2)
    check_golden("samples-key.md", markdown.key(plan, plan.sheets))
    check_golden("samples-key-brief.md", markdown.key(plan, plan.sheets, "brief"))


def test_formulas_get_tight_dollars_and_text_passes_through() -> None:
    written = markdown.tex(r"Take $ x + 1 $ and $$ \frac{a}{b} $$ **now**")
    assert written == r"Take $x + 1$ and $$\frac{a}{b}$$ **now**"


def test_a_page_break_between_students_and_every_code_once() -> None:
    plan = sample_plan(3)
    text = markdown.worksheets(plan, plan.sheets)
    assert text.count("\\newpage") == 2
    for sheet in plan.sheets:
        assert text.count(f"`{sheet.code}`") == 1
    for question in plan.sheets[0].questions:
        md.check(markdown.tex(question.variant.prompt))  # rewritten formulas stay in the subset
    assert text == markdown.worksheets(plan, plan.sheets)
