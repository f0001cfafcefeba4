"""Every example of the authoring guide runs: each YAML block loads and passes `quiz check`."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.check.checks import check_bank

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "authoring.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
VARIANTS = 40


def blocks(language: str) -> list[tuple[int, str]]:
    """The code blocks of one language in the guide, with the line each starts on."""
    text = GUIDE.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) == language
    ]


YAML = blocks("yaml")
PYTHON = blocks("python")
SVG = blocks("svg")


def as_bank(source: str, line: int) -> str:
    """A YAML block as a bank: whole banks as they are, a list of items inside a small bank."""
    if re.search(r"^bank:", source, re.MULTILINE):
        return source
    assert source.startswith("- "), f"the YAML block at line {line} is neither a bank nor a list of items"
    return f"bank: guide-line-{line}\ntitle: Guide example\nitems:\n" + textwrap.indent(source, "  ")


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    """A folder holding every Python module of the guide (named by its first line, ``# name.py``)."""
    for _, source in PYTHON:
        first = source.splitlines()[0]
        match = re.fullmatch(r"# (\w+\.py)", first)
        assert match, f"a Python example starts with its file name as a comment, not {first!r}"
        (tmp_path / match.group(1)).write_text(source, encoding="utf-8")
    for _, source in SVG:
        # An image file of the guide, named by its first line: <!-- figures/name.svg -->.
        named = re.fullmatch(r"<!-- ([\w/-]+\.svg) -->", source.splitlines()[0])
        assert named, f"an SVG example starts with its file name as a comment, not {source.splitlines()[0]!r}"
        (tmp_path / named.group(1)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / named.group(1)).write_text(source, encoding="utf-8")
    return tmp_path


def test_the_guide_has_examples_of_every_kind() -> None:
    text = "\n".join(source for _, source in YAML)
    for needle in ("kind: formula", "generator: statements", "plugins:", "where:", "range:", "original:"):
        assert needle in text, f"the guide has no YAML example with {needle!r}"
    for kind in ("integer", "vector", "shape"):
        assert f"kind: {kind}" in text, f"the guide has no example of a {kind} answer"
    assert PYTHON, "the guide shows no generator module"
    for needle in ("|:----|", "```python", "![", "figures/"):
        assert needle in text, f"the guide has no YAML example with {needle!r} (a table, code block or image)"
    assert SVG, "the guide shows no image file"
    assert "kind: explain" in text, "the guide has no concept question (kind: explain)"


@pytest.mark.parametrize(("line", "source"), YAML, ids=[f"line-{line}" for line, _ in YAML])
def test_every_yaml_example_loads_and_passes_quiz_check(line: int, source: str, plugin_dir: Path) -> None:
    path = plugin_dir / f"example-{line}.yaml"
    path.write_text(as_bank(source, line), encoding="utf-8")
    bank = load_bank_file(path, shown_as=f"docs/authoring.md (block at line {line})", plugins=True)
    report = check_bank(bank, VARIANTS)
    problems = [f"{i.item} [{f.check}] seed {f.seed}: {f.message}" for i in report.items for f in i.failures]
    assert report.ok, "\n".join(problems)
    for item in report.items:
        # An item that needs an optional package (PyTorch) missing here is checked without its
        # sandbox run, and `quiz check` says so: the one warning such an example may give.
        missing_extra = bank.get(item.item).unavailable
        unexpected = [w for w in item.warnings if not (missing_extra and w.startswith(missing_extra))]
        assert not unexpected, f"{item.item}: {unexpected}"


def test_every_original_in_the_guide_gives_the_papers_answer(plugin_dir: Path) -> None:
    # The guide quotes the papers' answers; the examples' originals must reproduce them.
    expected = {
        "w-o-params": "589,824",
        "padded-batch-volume": "6,400",
        "scaled-weights": "[0.731, 0.269]",
        "encoder-output-shape": "[50, 512]",
        "ffn-params": "2,099,712",
        "additive-score": "1.93",
        # The notes' 12d² + 13d at d = 512 (Key results), and six such blocks.
        "block-count-chain": "(a) 4*d^2 + 4*d | (b) 3,152,384 | (c) 18,914,304",
    }
    seen: dict[str, str] = {}
    for line, source in YAML:
        path = plugin_dir / f"example-{line}.yaml"
        path.write_text(as_bank(source, line), encoding="utf-8")
        for entry in load_bank_file(path).items:
            if entry.id in expected and entry.has_original:
                seen[entry.id] = entry.original().answer.format()
    assert seen == expected


def test_the_guide_shows_a_question_in_parts_and_a_formula_answer() -> None:
    python = "\n".join(source for _, source in PYTHON)
    for needle in ("PartsAnswer(", "uses=(", "recompute=", "checked(", "Formula.of("):
        assert needle in python, f"the guide's generators never use {needle!r}"
    guide = GUIDE.read_text(encoding="utf-8")
    for heading in (
        "### A question in parts",
        "### A formula answer",
        "### Parts and formula answers in YAML",
    ):
        assert heading in guide
    yaml = "\n".join(source for _, source in YAML)
    for needle in ("parts:", "name: block", "n*block", "kind: expression", "symbols: [d]"):
        assert needle in yaml, f"the guide's YAML never writes {needle!r}"


def test_the_guide_documents_figures_in_yaml_and_in_plugins() -> None:
    yaml = "\n".join(source for _, source in YAML)
    for needle in (
        "figures:",
        "kind: heatmap",
        "kind: line",
        "series:",
        "where: prompt",
        "{width=",
        "{exact: true}",
    ):
        assert needle in yaml, f"the guide's YAML never writes {needle!r}"
    python = "\n".join(source for _, source in PYTHON)
    for needle in ("Heatmap(", "LinePlot(", "Series(", "figures=[", 'where="solution"', r"$1/\sqrt{d_k}$"):
        assert needle in python, f"the guide's generators never use {needle!r}"
    guide = GUIDE.read_text(encoding="utf-8")
    assert "## Figures drawn from each variant" in guide


def test_the_guides_yaml_figures_are_drawn_from_the_parameters(plugin_dir: Path) -> None:
    from attnquiz.engine.figures import Heatmap, LinePlot

    drawn = {}
    for line, source in YAML:
        if "figures:" not in source and "figure_generators.py" not in source:
            continue
        path = plugin_dir / f"example-{line}.yaml"
        path.write_text(as_bank(source, line), encoding="utf-8")
        for entry in load_bank_file(path, plugins=True).items:
            figures = entry.question(3).variant.figures
            if figures:
                drawn[entry.id] = figures[0]
    assert isinstance(drawn["pe-pair-figure"], LinePlot)
    assert len(drawn["pe-pair-figure"].x) == 21
    assert isinstance(drawn["two-token-weights"], Heatmap)
    assert drawn["two-token-weights"].rows == (
        "$q_1$",
        "$q_2$",
    )
    assert isinstance(drawn["largest-weight"], Heatmap)
