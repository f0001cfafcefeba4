"""The Markdown reader the renderers share: blocks, inline spans, formulas kept whole."""

from __future__ import annotations

import pytest

from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup


def _plain(source: str) -> str:
    (block,) = md.blocks(source)
    assert isinstance(block, md.Paragraph)
    return md.plain_text(block.inlines, lambda m: f"<{m.source}>")


def test_paragraphs_split_on_blank_lines_and_join_single_newlines() -> None:
    blocks = md.blocks("one\ntwo\n\n  \nthree")
    texts = [md.plain_text(b.inlines, str) for b in blocks if isinstance(b, md.Paragraph)]
    assert texts == ["one two", "three"]


def test_lists_bulleted_and_numbered_with_continuation_lines() -> None:
    bullets, numbers = md.blocks("- a\n  more\n- $x$\n\n1. first\n2) second")
    assert isinstance(bullets, md.ListBlock)
    assert not bullets.ordered
    assert isinstance(numbers, md.ListBlock)
    assert numbers.ordered
    assert md.plain_text(bullets.items[0], str) == "a more"
    assert isinstance(bullets.items[1][0], md.Formula)
    assert len(numbers.items) == 2


def test_bold_italic_and_code_nest_and_keep_formulas() -> None:
    (block,) = md.blocks(r"**bold $x^2$** and *it* and `a_b` and _also_")
    assert isinstance(block, md.Paragraph)
    kinds = [type(node).__name__ for node in block.inlines]
    assert kinds == ["Strong", "Plain", "Emph", "Plain", "Code", "Plain", "Emph"]
    strong = block.inlines[0]
    assert isinstance(strong, md.Strong)
    assert isinstance(strong.children[1], md.Formula)
    assert strong.children[1].math.source == "x^2"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("snake_case and d_model stay", "snake_case and d_model stay"),
        (r"costs \$5 and 2 \* 3", "costs $5 and 2 * 3"),
        ("a * b * c", "a * b * c"),
        (r"scores $e_{t1}$ here", "scores <e_{t1}> here"),
    ],
)
def test_text_that_is_not_markup_stays_text(source: str, expected: str) -> None:
    assert _plain(source) == expected


def test_tex_outside_the_subset_is_refused() -> None:
    with pytest.raises(markup.MarkupError):
        md.blocks(r"$\foo{x}$")
