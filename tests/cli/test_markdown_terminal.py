"""Tables, code blocks and images in the terminal, as `quiz show` prints them: 80 and 40 columns,
syntax colour only on a colour terminal (never under NO_COLOR), ASCII where the output needs it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_run_piped import QUIZ, environment
from tests.engine.test_images import png

BANK = """\
bank: terminal-blocks
title: Terminal blocks
items:
  - id: shapes
    kind: formula
    source: "test"
    topic: demo
    params:
      t: {range: [3, 9]}
    prompt: |
      The scores of the first query, for $T = {{t}}$:

      | key | score $s_i$ | weight $\\alpha_i$ |
      |:----|:-----------:|------------------:|
      | $k_1$ | 2.0 | 0.665 |
      | $k_2$ | 1.0 | 0.245 |

      ```python
      x = torch.randn({{t}}, 64)  # a line long enough to need more than forty columns to show
      print((x @ x.T).shape)
      ```

      ![the attention map of the first head](figures/map.png)

      How many entries has the printed matrix?
    answer: {kind: integer, value: "t^2"}
    solution:
      - |
        The product is $T \\times T$:

        | rows | columns |
        |---:|---:|
        | {{t}} | {{t}} |
"""
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "map.png").write_bytes(png())
    path = tmp_path / "blocks.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


def show(bank: Path, columns: int, **extra: str) -> str:
    env = environment(bank.parent / "home", COLUMNS=str(columns), **extra)
    env = {k: v for k, v in env.items() if v != ""}
    done = subprocess.run(
        [*QUIZ, "show", str(bank), "shapes", "--seed", "2", "--solution"],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert not done.stderr.strip() or b"Traceback" not in done.stderr
    return done.stdout.decode("utf-8")


@pytest.mark.parametrize("columns", [80, 40])
def test_tables_code_and_images_fit_the_width(bank: Path, columns: int) -> None:
    out = show(bank, columns)
    lines = out.splitlines()
    table = [line for line in lines if "│" in line]
    assert table, out
    assert all(len(line) <= columns for line in lines if "│" in line or line.startswith(("┌", "  ┌")))
    assert any(re.search(r"│ k₁\s+│\s+2\.0\s+│\s+0\.665 │", line) for line in table) or columns < 60
    assert "0.665" in out
    words = " ".join(out.split())
    assert "[image: the attention map of the first head]" in words
    assert str(bank.parent / "figures" / "map.png") in out.replace("\n", "")
    # Code keeps its lines: nothing of it is lost at 40 columns (a long line wraps, plain).
    assert "print((x @ x.T).shape)" in out
    assert "x = torch.randn(" in out
    assert "$" not in out.split("```")[0].replace("$5", "")  # no stray dollars: the formulas were typeset


def test_right_aligned_columns_line_up(bank: Path) -> None:
    out = show(bank, 80)
    weights = [line for line in out.splitlines() if "0.665" in line or "0.245" in line]
    assert len(weights) == 2
    assert weights[0].index("0.665") == weights[1].index("0.245")


def test_code_is_coloured_on_a_colour_terminal_and_plain_under_no_color(bank: Path) -> None:
    coloured = show(bank, 80, FORCE_COLOR="1", TERM="xterm-256color")
    code_line = next(line for line in coloured.splitlines() if "print" in line and "shape" in line)
    assert ANSI.search(code_line), code_line
    plain = show(bank, 80, FORCE_COLOR="1", TERM="xterm-256color", NO_COLOR="1")
    code_line = next(line for line in plain.splitlines() if "print" in line and "shape" in line)
    assert not re.search(r"\x1b\[[0-9;]*3[0-9](;|m)", code_line)  # no foreground colour
    assert "print((x @ x.T).shape)" in ANSI.sub("", code_line)


def test_ascii_output_draws_ascii_boxes(bank: Path) -> None:
    out = show(bank, 80, PYTHONIOENCODING="ascii")
    assert out.isascii()
    assert re.search(r"\| k_1\s+\|\s+2\.0\s+\|", out), out
    assert "alpha_i" in out
    assert "print((x @ x.T).shape)" in out


def test_control_sequences_in_code_never_reach_the_terminal(tmp_path: Path) -> None:
    # A YAML double-quoted string can hold escapes: the code block of this step has an OSC 52
    # clipboard write, a bell and a clear-screen.
    step = '      - "```python\\nprint(1)  \\x1b]52;c;AAAA\\x07\\x1b[2J\\n```"\n'
    path = tmp_path / "hostile.yaml"
    path.write_text(BANK + step, encoding="utf-8")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "map.png").write_bytes(png())
    for extra in ({}, {"FORCE_COLOR": "1", "TERM": "xterm-256color"}):
        out = show(path, 80, **extra)
        assert "print(1)" in ANSI.sub("", out)
        assert "\x1b]52" not in out
        assert "\x1b[2J" not in out
        assert "\x07" not in out


def test_a_code_line_of_wide_characters_is_cut_by_terminal_cells(tmp_path: Path) -> None:
    """A comment in Chinese takes two cells a character: cut by characters, its pieces overflowed
    a 40-column terminal and the terminal's own wrapping broke the indentation."""
    from rich.cells import cell_len

    comment = "注意力机制把查询与每个键比较，然后对值加权求和，得到输出向量"
    step = f'      - "```python\\nx = 1  # {comment}\\n```"\n'
    path = tmp_path / "wide.yaml"
    path.write_text(BANK + step, encoding="utf-8")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "map.png").write_bytes(png())
    out = show(path, 40, NO_COLOR="1")
    pieces = [line for line in out.splitlines() if any("\u4e00" <= ch <= "\u9fff" for ch in line)]
    assert len(pieces) >= 2, out
    assert all(cell_len(line) <= 40 for line in pieces), pieces
    joined = "".join(line.strip().removesuffix("\\") for line in pieces)  # each fold is marked
    assert comment in joined.replace(" ", "")
    assert all(line.endswith(" \\") for line in pieces[:-1]), pieces
