"""`quiz list BANK` without rich's console prints the very bytes rich prints, or leaves the drawing to rich.

The listing is drawn twice from the same rows, by `attnquiz.light_lines` and by rich
(`attnquiz.display.RichLines`), under the variables and streams that decide width, colour and
encoding; where the light writer does not decline, the bytes must be equal. The shipped banks must
take the light path at ordinary widths (else the start-up it exists for is lost without a sound).
"""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from attnquiz.display import RichLines, TerminalConsole
from attnquiz.engine.bank import finding as banks
from attnquiz.item_listing import draw_items
from attnquiz.light_lines import LightLines
from attnquiz.lookup import listing_rows
from attnquiz.terminal import ERRORS

DECIDING = ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TERM", "QUIZ_PLAIN")
"""The variables that decide the width, colour and escapes of what is printed."""
ENVIRONMENTS = {
    "pipe": {},
    "forced colour": {"FORCE_COLOR": "1"},
    "no colour": {"FORCE_COLOR": "1", "NO_COLOR": "1"},
    "dumb terminal": {"FORCE_COLOR": "1", "TERM": "dumb"},
    "dumb with lines": {"FORCE_COLOR": "1", "TERM": "dumb", "LINES": "40"},
    "not a tty": {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},
    "a tty by name": {"TTY_COMPATIBLE": "1"},
    "empty force": {"FORCE_COLOR": ""},
    "plain": {"FORCE_COLOR": "1", "QUIZ_PLAIN": "1"},
}
CONTROLS = """bank: controls
title: Sources with control characters
items:
  - id: tabbed
    source: "before\\tafter"
    topic: first-topic
    generator: additive_score
  - id: controlled
    source: "a bell \\a and a return \\r here"
    topic: first-topic
    generator: additive_score
"""
WIDTHS = [None, 10, 20, 30, 44, 61, 80, 132, 250]
ODD = """bank: odd
title: "Odd sources: § → — ², ＷＩＤＥ and 😀"
items:
  - id: a-rather-long-identifier-for-an-item-of-this-bank
    source: "ELI12 Week 1 §2, worked example → the answer — twice²"
    topic: first-topic
    generator: additive_score
  - id: wide
    source: "全角の出典 ＷＩＤＥ ｓｏｕｒｃｅ and an emoji 😀 here"
    topic: second-topic
    generator: additive_score
  - id: unbreakable
    source: "https://example.org/a/long/address/with/no/space/in/it/at/all"
    topic: second-topic
    generator: additive_score
"""


def rows_of(bank: str) -> tuple[str, list[dict[str, Any]]]:
    """The title and rows `attnquiz.lookup.list_bank` draws for ``bank``."""
    listed = banks.listing(bank)
    rows = listing_rows(listed)
    # One row that is not offered, whether or not PyTorch is installed here (its footnote is yellow).
    rows.append(
        {**rows[-1], "id": "needs-torch", "unavailable": "needs PyTorch (pip install 'attnquiz[torch]')"}
    )
    return listed.title, rows


class Stream(io.TextIOWrapper):
    """Standard output as quiz sets it up (`attnquiz.terminal.prepare_streams`), a terminal or not."""

    def __init__(self, encoding: str, tty: bool) -> None:
        self.raw_bytes = io.BytesIO()
        super().__init__(self.raw_bytes, encoding=encoding, errors=ERRORS, newline="\n")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def written(self) -> bytes:
        self.flush()
        return self.raw_bytes.getvalue()


def both(
    monkeypatch: pytest.MonkeyPatch,
    title: str,
    rows: list[dict[str, Any]],
    env: dict[str, str],
    *,
    encoding: str,
    tty: bool,
) -> tuple[bytes | None, bytes]:
    """What the light writer prints (None: it declines) and what rich prints, under ``env``."""
    for name in DECIDING:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    light_out, rich_out = Stream(encoding, tty), Stream(encoding, tty)
    monkeypatch.setattr(sys, "stdout", light_out)
    light = LightLines.for_stdout()
    assert light is not None  # never declined outright on this system
    draw_items(light, title, rows)
    text = light.text()
    if text is not None:
        light_out.write(text)
    monkeypatch.setattr(sys, "stdout", rich_out)
    draw_items(RichLines(TerminalConsole(soft_wrap=False)), title, rows)
    return (light_out.written() if text is not None else None), rich_out.written()


@pytest.mark.skipif(os.name == "nt", reason="the light writer leaves Windows to rich")
@pytest.mark.parametrize("bank", ["week1", "week2", "code", "odd", "controls"])
@pytest.mark.parametrize("environment", list(ENVIRONMENTS))
def test_the_light_listing_prints_what_rich_prints(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bank: str, environment: str
) -> None:
    shipped = bank not in ("odd", "controls")
    if not shipped:
        path = tmp_path / f"{bank}.yaml"
        path.write_text(ODD if bank == "odd" else CONTROLS, encoding="utf-8")
    title, rows = rows_of(bank if shipped else str(path))
    light_paths = 0
    for width in WIDTHS:
        for encoding, tty in (("utf-8", False), ("utf-8", True), ("ascii", True), ("latin-1", False)):
            env = dict(ENVIRONMENTS[environment])
            if width is not None:
                env["COLUMNS"] = str(width)
            light, drawn = both(monkeypatch, title, rows, env, encoding=encoding, tty=tty)
            if light is not None:
                light_paths += 1
                assert light == drawn, (width, encoding, tty)
            elif shipped:
                assert width is not None, (encoding, tty)
                assert width < 40, (width, encoding, tty)  # only for a word wider than the line
    if bank == "controls":
        assert light_paths == 0  # a tab, a bell and a carriage return: rich draws this bank
    else:  # the odd bank's address is wider than most lines: only the widest are drawn without rich
        assert light_paths >= (20 if shipped else 8)


def test_the_light_writer_declines_styles_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    for style, declined in [
        ("bold", False),
        ("bold cyan", False),
        ("dim yellow", False),
        ("italic", False),
        ("bold italic green", False),
        ("underline", True),
        ("bright_red", True),
        ("red on white", True),
        ("red green", True),
    ]:
        light = LightLines(80, styled=True, colour=True, stream=None)
        light.put([("text", style)])
        assert (light.text() is None) is declined, style


def test_a_listing_in_a_terminal_is_drawn_without_rich_and_in_colour(tmp_path: Path) -> None:
    """The real thing: `quiz list week1` in a pseudo-terminal, as a student's shell runs it."""
    env = {k: v for k, v in os.environ.items() if k not in DECIDING}
    env.update({"QUIZ_HOME": str(tmp_path), "COLUMNS": "100", "LINES": "40", "TERM": "xterm-256color"})
    env.pop("QUIZ_NO_CACHE", None)
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: sys.stderr.write('RICH %s\\n' % ('rich.console' in sys.modules)))\n"
        "from attnquiz.main import main\n"
        "main()\n"
    )
    outputs = []
    for _ in range(2):  # the first run builds the listing index
        leader, follower = pty.openpty()
        done = subprocess.run(
            [sys.executable, "-c", probe, "list", "week1"],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
            check=False,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal is closed once everything written is read
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.returncode == 0, done.stderr
        assert b"RICH False" in done.stderr
        outputs.append(b"".join(chunks))
    assert outputs[0] == outputs[1]
    assert b"\x1b[1;36madditive-attention\x1b[0m" in outputs[1]
