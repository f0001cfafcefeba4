"""A session's opening and question screens without rich's console print the very bytes rich prints.

`quiz run` draws its header and its first question before it has needed rich's console
(`attnquiz.session_view.SessionView._draw`): the light writer must print what rich prints, or
decline. Each screen of practice, exam and original sessions of the shipped banks is drawn both
ways under the settings of `test_question_lines`, narrow ones too (where the rule gives way to a
folded title); and in a pseudo-terminal `quiz run` shows its first question before rich's console
is imported.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

import pexpect
import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.session import Session
from attnquiz.question_lines import Writer
from attnquiz.session_lines import draw_header, draw_question_screen
from tests.cli.test_item_listing import DECIDING
from tests.cli.test_question_lines import SETTINGS, both

PLANS = {
    "practice": {"seed": 1, "count": 12},
    "exam": {"seed": 2, "count": 6, "time_limit": 1500.0},
    "originals": {"seed": 3, "count": 8, "original": True},
}


@cache
def session(bank: str, kind: str) -> Session:
    """A session of ``bank`` as `quiz run` would start it (``kind``: practice, exam or originals)."""
    return Session(plan_practice(banks.load(bank, plugins=True), **PLANS[kind]))  # type: ignore[arg-type]


@pytest.mark.skipif(os.name == "nt", reason="the light writer leaves Windows to rich")
@pytest.mark.parametrize("kind", list(PLANS))
@pytest.mark.parametrize(
    "setting",
    [*SETTINGS, ("forced colour", 30, "utf-8", True), ("no colour", 52, "ascii", True)],
    ids=lambda s: f"{s[0]}-{s[1]}-{s[2]}-{'tty' if s[3] else 'pipe'}",
)
def test_a_sessions_screens_print_what_rich_prints(
    monkeypatch: pytest.MonkeyPatch, kind: str, setting: tuple[str, int | None, str, bool]
) -> None:
    running = session("week1", kind)
    screens = 0
    light_paths = 0
    for history in (None, "history.sqlite3"):

        def header(out: Writer, history: str | None = history) -> None:
            draw_header(out, running.plan, history=history)

        light, drawn = both(monkeypatch, header, setting)
        screens += 1
        light_paths += light is not None
        assert light is None or light == drawn
    for slot in running.slots:
        question = running.question(slot)

        def screen(out: Writer, slot: object = slot, question: object = question) -> None:
            draw_question_screen(out, running, slot, question)  # type: ignore[arg-type]

        light, drawn = both(monkeypatch, screen, setting)
        screens += 1
        light_paths += light is not None
        assert light is None or light == drawn, question.item_id
    if setting[1] not in (30, 44):  # narrow lines: an unbreakable formula may be wider than the line
        assert light_paths >= 0.6 * screens, (light_paths, screens)


def test_the_first_question_of_quiz_run_is_shown_before_richs_console_is_imported(tmp_path: Path) -> None:
    """The real thing: `quiz run` in a pseudo-terminal. When the first question's precision line is
    written, rich's console is not imported yet; it is by the prompt, and the session goes on."""
    env = {k: v for k, v in os.environ.items() if k not in DECIDING and not k.startswith("QUIZ_")}
    env.update({"QUIZ_HOME": str(tmp_path), "TERM": "xterm-256color"})
    probe = (
        "import sys\n"
        "class Watch:\n"
        "    def __init__(self, stream): self.stream, self.said = stream, False\n"
        "    def write(self, text):\n"
        "        if not self.said and 'Give ' in text:\n"
        "            self.said = True\n"
        "            self.stream.write('[rich console: %s]' % ('rich.console' in sys.modules))\n"
        "        return self.stream.write(text)\n"
        "    def __getattr__(self, name): return getattr(self.stream, name)\n"
        "sys.stdout = Watch(sys.stdout)\n"
        "from attnquiz.main import main\n"
        "main()\n"
    )
    for first in (True, False):  # the first run builds the bank cache
        child = pexpect.spawn(
            sys.executable,
            ["-c", probe, "run", "week1", "--seed", "1", "--item", "additive-score"],
            env=env,
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 100),
        )
        child.expect(r"\[rich console: (True|False)\]")
        seen = child.match.group(1)
        child.expect("Give a number")
        child.expect("› ")
        child.sendline("q")
        child.expect("Summary")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        if not first:
            assert seen == "False"
