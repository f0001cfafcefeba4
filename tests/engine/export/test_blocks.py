"""Tables, fenced code blocks and images in bank text: the block tree, what is refused at load, and
each renderer's output (golden files), with hostile input in bounded time."""

from __future__ import annotations

import time

import pytest

from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.pdf import typst
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain
from attnquiz.engine.markup import tex as markup

from .golden import check_golden

SAMPLE = r"""Scores of the query against three keys, with $d_k = 4$:

| key | score $s_i$ | weight $\alpha_i$ |
|:----|:-----------:|------------------:|
| $k_1$ | **2.0** | 0.665 |
| `k_2` | 1.0 | 0.245 |
| $k_3$ | 0.0 | 0.090 |

Run this and give the printed shape:

```python
import torch
x = torch.randn(2, 5, 64)   # costs $5; a <b> & "c" stay as written
w = x @ x.transpose(-2, -1) # **not bold**, $not maths$
print(w.shape)
```

Then $\text{softmax}$ each row."""


def test_tables_hold_header_alignment_rows_and_formulas() -> None:
    blocks = md.blocks(SAMPLE)
    table = next(b for b in blocks if isinstance(b, md.Table))
    assert table.align == ("left", "center", "right")
    assert len(table.header) == 3
    assert len(table.rows) == 3
    assert all(len(row) == 3 for row in table.rows)
    assert isinstance(table.rows[0][0][0], md.Formula)
    assert isinstance(table.rows[0][1][0], md.Strong)
    assert isinstance(table.rows[1][0][0], md.Code)


def test_code_blocks_are_verbatim_and_never_read_for_maths_or_markdown() -> None:
    code = next(b for b in md.blocks(SAMPLE) if isinstance(b, md.CodeBlock))
    assert code.language == "python"
    assert code.text.splitlines()[1] == 'x = torch.randn(2, 5, 64)   # costs $5; a <b> & "c" stay as written'
    assert "$not maths$" in code.text
    assert code.text.count("\n") == 3
    md.check(SAMPLE)  # the dollars inside the code are not formulas


@pytest.mark.parametrize(
    ("source", "language", "text"),
    [
        ("```\nplain\n```", "", "plain"),
        ("~~~sh\n$ ls\n~~~", "sh", "$ ls"),
        ("````md\n```\ninner\n```\n````", "md", "```\ninner\n```"),
        ("```py\n\n  indented\n\n```", "py", "\n  indented\n"),
    ],
)
def test_fences_of_backticks_or_tildes(source: str, language: str, text: str) -> None:
    (block,) = md.blocks(source)
    assert block == md.CodeBlock(language, text)


def test_an_image_on_a_line_of_its_own() -> None:
    blocks = md.blocks("Look:\n\n![The *attention* map](figures/map.png)\n\nThen answer.")
    assert blocks[1] == md.Image("The *attention* map", "figures/map.png")
    assert md.image_sources("![a](x.png)\n![b](y.svg)") == [("a", "x.png"), ("b", "y.svg")]


# Each construct outside the subset, and the words of its refusal.
REFUSED = [
    ("# Heading", "headings"),
    ("## Sub heading", "headings"),
    ("Title\n=====", "headings"),
    ("> quoted", "block quotes"),
    ("---", "horizontal rules"),
    ("***", "horizontal rules"),
    ("see [the notes](https://example.org)", "links"),
    ("see [the notes][1]", "reference links"),
    ("[1]: https://example.org", "link definitions"),
    ("see <https://example.org>", "autolinks"),
    ("mail <me@example.org>", "autolinks"),
    ("a <b>bold</b> word", "raw HTML"),
    ("<script>alert(1)</script>", "raw HTML"),
    ('<img src=x onerror="alert(1)">', "raw HTML"),
    ("<!-- hidden -->", "raw HTML"),
    ("AT&amp;T", "HTML entities"),
    ("&#106;avascript", "HTML entities"),
    ("| a | b |\n|---|---|\n| 1 |", "row 1 of the table has 1 cells"),
    ("| a | b |\n|---|---|---|\n| 1 | 2 |", "--- row has 3"),
    ("```python\nprint(1)", "never closed"),
    ("see ![a map](map.png) here", "on a line of its own"),
    ("Look:\n![a map](map.png)", "on a line of its own"),
    ("![a map](https://example.org/map.png)", "URL"),
    ("![a map](/etc/map.png)", "relative"),
    ("![a map](../other/map.png)", "leave the bank's folder"),
    ("![a map](map.gif)", "PNG, JPEG or SVG"),
    ("| " + " | ".join("c" for _ in range(30)) + " |\n|" + "---|" * 30, "at most 24 columns"),
]


@pytest.mark.parametrize(("source", "words"), REFUSED, ids=[s[:30] for s, _ in REFUSED])
def test_markdown_outside_the_subset_is_refused(source: str, words: str) -> None:
    with pytest.raises(markup.MarkupError) as caught:
        md.check(source)
    assert words in str(caught.value)


@pytest.mark.parametrize(
    "source",
    [
        "if $p < 0.5$ then p < 0.5 and x<1, y > 2",
        "the interval [0.5, 1] and a [T, 512] tensor, f(x)[i]",
        "a `<b>` tag and `[x](y)` in code, `# not a heading`",
        r"an escaped \# and \> and \[x\](y)",
        "- a list\n- of items\n\n1. numbered",
        "5 - 3 = 2 and a*b*c",
        "C# and F# are languages; 3 > 2",
        "| not a table, one bar",
    ],
)
def test_text_the_banks_use_is_not_refused(source: str) -> None:
    md.check(source)


def test_renderers_show_refused_markdown_as_text_rather_than_failing() -> None:
    # A text that skipped the load checks (a generator's own text) still renders, escaped.
    for source in ("# Heading", "```python\nunclosed", "| a | b |\n|---|---|\n| 1 |", "<b>x</b>"):
        assert "<b>" not in html.content(source)
        typst.content(source)
        markdown.tex(source)
        lms.tex_html(source)


@pytest.mark.parametrize(
    ("name", "render"),
    [
        ("blocks.html", html.content),
        ("blocks.typ", typst.content),
        ("blocks.md", markdown.tex),
        ("blocks-lms.html", lms.tex_html),
        ("blocks-terminal.txt", plain.to_terminal),
    ],
)
def test_tables_and_code_in_every_format(name: str, render: object) -> None:
    assert callable(render)
    check_golden(name, render(SAMPLE) + "\n")


def test_html_escapes_code_and_cells() -> None:
    out = html.content('| a |\n|---|\n| x & y |\n\n```\n</pre><script>alert("x")</script>\n```')
    assert "<script>" not in out
    assert "&lt;/pre&gt;&lt;script&gt;" in out
    assert "x &amp; y" in out


def test_lms_code_keeps_no_tex_delimiters_for_mathjax() -> None:
    out = lms.tex_html("```\ncost = $5 and \\(x\\)\n```")
    assert "$" not in out
    assert "\\(" not in out
    assert "&#36;5" in out


def test_typst_code_is_one_line_with_escapes() -> None:
    out = typst.content('```python\na = "b\\\\c"\n\tz\x1b[31m\n```')
    assert "\n" not in out
    assert 'lang: "python"' in out
    assert "\\x1b" in out  # a control character is shown, not passed to Typst
    assert "\x1b" not in out


def test_markdown_fence_outgrows_backticks_inside() -> None:
    out = markdown.tex("````\nuse ``` to fence\n````")
    assert out.startswith("````\n")
    assert out.endswith("\n````")
    assert md.blocks(out) == md.blocks("````\nuse ``` to fence\n````")


def test_tables_round_trip_through_the_markdown_export() -> None:
    written = markdown.tex(SAMPLE)
    table = next(b for b in md.blocks(written) if isinstance(b, md.Table))
    original = next(b for b in md.blocks(SAMPLE) if isinstance(b, md.Table))
    assert table == original


# ---------------------------------------------------------------------------------------------
# Hostile text: bounded time, no traceback
# ---------------------------------------------------------------------------------------------

HOSTILE = [
    "| " + " | ".join(str(i) for i in range(10_000)) + " |\n|" + "---|" * 10_000 + "\n| x |",
    "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 5_000,
    "`" * 10_000 + "\ncode\n" + "`" * 10_000,
    "`" * 10_000,
    "```\n" + "\x00\x01\x1b[2J\x7f\ufffd" * 2_000 + "\n```",
    "\n".join("  " * i + "- item" for i in range(2_000)),
    "*" * 20_000,
    "*a " * 5_000,
    "**" * 5_000,
    "_" * 20_000,
    "[" * 5_000 + "](" * 5_000,
    "<" * 10_000 + "a" + ">" * 10_000,
    "![" * 5_000,
    "|" * 20_000 + "\n" + "|-" * 5_000,
    "&" * 10_000 + "#" * 10_000,
    "~~~\n" * 3_000,
]


@pytest.mark.parametrize("source", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_hostile_markdown_is_read_or_refused_quickly(source: str) -> None:
    start = time.perf_counter()
    message = ""
    try:
        md.check(source)
    except markup.MarkupError as exc:
        message = str(exc)
    assert len(message) < 2_000  # a message, not the whole text
    for render in (html.content, typst.content, markdown.tex, lms.tex_html, plain.to_terminal):
        render(source)
    assert time.perf_counter() - start < 10
