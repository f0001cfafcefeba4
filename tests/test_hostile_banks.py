"""Hostile banks: `quiz check` answers each with exit 1 and `file:line`, with bounded time and memory.

Each bank is a file someone could share (or leave in a folder): YAML that expands exponentially,
recursive structures, huge or deeply nested files, tabs, a symlink to a secret, plugin paths out of
the bank's folder, plugins that sleep or loop. `quiz` runs as a user runs it, in a child process
whose address space is capped (`RLIMIT_AS`), so a regression fails the test instead of eating the
machine; its peak memory (``ru_maxrss``) is asserted under 300 MB and its time printed (speed is
measured in bench/; only a plugin that sleeps for 60 s is held to being stopped well before that).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

QUIZ = [sys.executable, "-m", "attnquiz"]
MEMORY_CAP = 1_500_000_000
"""The child's address space (numpy and its BLAS reserve far more than they touch)."""
PEAK_LIMIT_MB = 300


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float


# Runs `quiz` under a capped address space and writes its peak memory (from wait4) to a file. A small
# process of its own, because Linux keeps a process's peak across fork and exec: measured straight
# from pytest (hundreds of MB by the end of the suite), every child would start at pytest's peak.
_MEASURE = """
import json, os, resource, subprocess, sys
cap, report, *command = sys.argv[1:]
resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))
child = subprocess.Popen(command)
_, status, usage = os.wait4(child.pid, 0)
with open(report, "w") as out:
    json.dump({"code": os.waitstatus_to_exitcode(status), "peak_kb": usage.ru_maxrss}, out)
"""


def quiz(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Run:
    """Run `quiz` with capped memory: its exit code, output, time and peak memory."""
    report = cwd / ".measure.json"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(MEMORY_CAP), str(report), *QUIZ, *args],
        cwd=cwd,
        env={**os.environ, **(env or {}), "COLUMNS": "200"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    measured = json.loads(report.read_text(encoding="utf-8"))
    report.unlink()
    return Run(
        measured["code"], done.stdout.decode(), done.stderr.decode(), seconds, measured["peak_kb"] / 1024
    )


def laughs(levels: int = 9) -> str:
    """The classic "billion laughs": nine lists of nine aliases of the level below (699 bytes)."""
    lines = ["bank: lol", 'title: "lol"', 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghi"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines.append(f"items: [*{previous}]")
    return "\n".join(lines) + "\n"


GOOD_ITEM = """\
  - id: score
    source: "2026 T1 Quiz 1, Q13"
    topic: additive-attention
    generator: additive_score
"""

# name → (file contents, the line the first error must be at)
HOSTILE: dict[str, tuple[str | bytes, int]] = {
    "alias-46-bytes": ("- &r [*r, *r]\n", 1),
    "recursive-mapping": ("bank: r\ntitle: r\nitems:\n  - &i\n    id: a\n    params: *i\n", 6),
    "billion-laughs": (laughs(), 4),
    "items-alias-of-items": ("bank: r\ntitle: r\nitems: &i\n  - *i\n", 4),
    "huge-file": ("bank: big\ntitle: big\nitems:\n" + "# padding\n" * 200_000, 1),
    "many-values": ("bank: many\ntitle: t\nitems: [" + ",".join(["1"] * 250_000) + "]\n", 1),
    "deep-nesting": ("bank: deep\ntitle: t\nitems: " + "[" * 100_000 + "]" * 100_000 + "\n", 3),
    "tab-indent": ("bank: tab\ntitle: t\nitems:\n  - id: a\n\tsource: s\n", 5),
    "not-utf8": (b"bank: x\ntitle: \xff\xfe\nitems: []\n", 1),
    "binary": (bytes(range(256)) * 100, 1),
    "plugin-traversal": (
        "bank: p\ntitle: p\nplugins: [../../../../etc/hostname]\nitems:\n" + GOOD_ITEM,
        3,
    ),
    "plugin-absolute": ("bank: p\ntitle: p\nplugins:\n  - /etc/passwd.py\nitems:\n" + GOOD_ITEM, 4),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_check_answers_a_hostile_bank_with_exit_1_and_file_line(tmp_path: Path, name: str) -> None:
    content, line = HOSTILE[name]
    path = tmp_path / f"{name}.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    run = quiz("check", path.name, cwd=tmp_path)
    assert run.code == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    first = (run.stdout + run.stderr).splitlines()[0]
    assert re.match(rf"^{re.escape(path.name)}:{line}(:\d+)?: ", first), first
    assert run.peak_mb < PEAK_LIMIT_MB, f"{name}: {run.peak_mb:.0f} MB"
    print(f"{name}: exit {run.code} in {run.seconds:.2f} s, peak {run.peak_mb:.0f} MB")


@pytest.mark.parametrize("command", [["list"], ["review", "--limit", "1"]])
def test_a_hostile_bank_in_quiz_path_does_not_hang_the_other_banks(
    tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "banks"
    folder.mkdir()
    (folder / "laughs.yaml").write_text(laughs(), encoding="utf-8")
    (folder / "alias.yaml").write_text("- &r [*r, *r]\n", encoding="utf-8")
    run = quiz(*command, cwd=tmp_path, env={"QUIZ_PATH": str(folder), "QUIZ_HOME": str(tmp_path / "home")})
    assert "Traceback" not in run.stderr
    assert "week1" in run.stdout + run.stderr or command[0] == "review"
    assert run.peak_mb < PEAK_LIMIT_MB
    if command == ["list"]:
        assert run.code == 0, run.stderr
        assert re.search(r"laughs\s+1 error", run.stdout), run.stdout


def test_a_symlink_to_a_secret_file_is_not_quoted(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text(
        "aws_access_key_id: AKIASECRET\naws_secret_access_key: hunter2hunter2\n", encoding="utf-8"
    )
    (tmp_path / "bank.yaml").symlink_to(secret)
    for command in (["check", "bank.yaml"], ["run", "bank.yaml"], ["list", "bank.yaml"]):
        run = quiz(*command, cwd=tmp_path)
        assert run.code == 1
        shown = run.stdout + run.stderr
        for part in ("AKIA", "hunter2", "aws_"):
            assert part not in shown, shown
        assert shown.startswith("bank.yaml:1: not a question bank")


# ---------------------------------------------------------------------------------------------
# Bare names, QUIZ_PATH shadowing
# ---------------------------------------------------------------------------------------------

PLUGIN = '''"""Generators that announce themselves."""
import pathlib
import time

import numpy as np

from attnquiz.engine.answers.kinds import IntegerAnswer
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

pathlib.Path(__file__).with_name("imported").write_text("plugin code ran")
{at_import}


@generator
def hostile_entries(rng: np.random.Generator, /, *, t: int = 3) -> Variant:
    """Count entries."""
    {in_generation}
    return Variant(prompt="How many entries has a $t \\\\times t$ matrix for t = " + str(t) + "?",
                   answer=IntegerAnswer(t * t), solution=["$t^2$"])
'''

PLUGIN_BANK = """bank: {name}
title: "A bank with a plugin"
plugins: [gens.py]
items:
  - id: entries
    source: "My problem"
    topic: counts
    generator: hostile_entries
    params: {{t: 4}}
"""


def plugin_bank(
    folder: Path, name: str = "mine", *, at_import: str = "", in_generation: str = "pass"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gens.py").write_text(
        PLUGIN.format(at_import=at_import, in_generation=in_generation), encoding="utf-8"
    )
    path = folder / f"{name}.yaml"
    path.write_text(PLUGIN_BANK.format(name=name), encoding="utf-8")
    return path


def test_a_bare_name_never_means_a_file_in_the_current_folder(tmp_path: Path) -> None:
    bank = plugin_bank(tmp_path, "week1-file")
    bank.rename(tmp_path / "week1")  # no suffix: as a bare name it must stay the built-in bank
    run = quiz("list", "week1", cwd=tmp_path)
    assert run.code == 0
    assert "Week 1" in run.stdout
    assert not (tmp_path / "imported").exists()
    run = quiz("show", "week1", "additive-score", "--original", cwd=tmp_path)
    assert run.code == 0
    assert not (tmp_path / "imported").exists()
    run = quiz("show", "./week1", "entries", "--seed", "1", cwd=tmp_path)  # as a path it is used
    assert run.code == 0, run.stderr
    assert (tmp_path / "imported").exists()


def test_a_quiz_path_bank_that_hides_a_builtin_is_said(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    week1 = (Path(__file__).resolve().parent.parent / "questions" / "week1.yaml").read_text(encoding="utf-8")
    (folder / "week1.yaml").write_text(week1.replace('title: "', 'title: "Shadow: ', 1), encoding="utf-8")
    env = {"QUIZ_PATH": str(folder), "QUIZ_HOME": str(tmp_path / "home")}
    run = quiz("run", "week1", "--count", "1", "--seed", "1", "--no-history", cwd=tmp_path, env=env)
    notices = [line for line in run.stderr.splitlines() if "QUIZ_PATH" in line]
    assert len(notices) == 1, run.stderr
    assert str(folder / "week1.yaml") in notices[0]
    assert "(mine/week1.yaml)" in run.stdout.splitlines()[0]  # the session header names the file
    run = quiz("run", "week2", "--count", "1", "--seed", "1", "--no-history", cwd=tmp_path, env=env)
    assert "QUIZ_PATH" not in run.stderr


# ---------------------------------------------------------------------------------------------
# Plugins: only commands that build variants import them, with one notice; quiz check limits them
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "imports"),
    [
        (["list"], False),
        (["list", "mine.yaml"], False),
        (["list", "mine.yaml", "--json"], False),
        (["show", "mine.yaml", "entries", "--seed", "2"], True),
        (["answer", "mine.yaml", "entries", "--seed", "2", "16"], True),
        (["run", "mine.yaml", "--count", "1", "--seed", "1", "--no-history"], True),
        (["check", "mine.yaml", "--variants", "3"], True),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_plugins_run_only_where_variants_are_built_and_are_announced(
    tmp_path: Path, command: list[str], imports: bool
) -> None:
    bank = plugin_bank(tmp_path / "banks")
    env = {"QUIZ_PATH": str(bank.parent), "QUIZ_HOME": str(tmp_path / "home")}
    run = quiz(*command, cwd=bank.parent, env=env)
    assert run.code == 0, run.stdout + run.stderr
    notices = [line for line in run.stderr.splitlines() if "runs Python code from its plugins" in line]
    assert (bank.parent / "imported").exists() is imports
    assert len(notices) == (1 if imports else 0), run.stderr
    if imports:
        assert "mine.yaml" in notices[0]
        assert "gens.py" in notices[0]


def test_check_stops_a_plugin_that_sleeps_in_generation_and_says_where(tmp_path: Path) -> None:
    bank = plugin_bank(tmp_path, in_generation="time.sleep(60)")
    run = quiz("check", bank.name, "--time-limit", "1", "--variants", "3", cwd=tmp_path)
    assert run.code == 1
    assert "Traceback" not in run.stdout + run.stderr
    assert re.search(r"gens\.py:18: building a variant took longer than 1 s: stopped there", run.stdout), (
        run.stdout
    )
    assert "runs Python code from its plugins: gens.py" in run.stderr
    assert run.seconds < 30, run.seconds  # not the sleep's 60 s (a generous bound, not a benchmark)
    print(f"sleeping plugin: exit {run.code} in {run.seconds:.2f} s")


@pytest.mark.parametrize(
    ("at_import", "expected"),
    [
        (
            "time.sleep(60)",
            r"^mine\.yaml:3: plugins: gens\.py:12: importing the bank's plugins took longer than 1 s",
        ),
        (
            "while True:\n    pass",
            r"^mine\.yaml:3: plugins: gens\.py:1[23]: importing the bank's plugins took longer",
        ),
        ("raise SystemExit(3)", r"^mine\.yaml:3: plugins\[0\]: gens\.py:12: SystemExit: 3"),
    ],
    ids=["sleeps", "loops", "exits"],
)
def test_check_stops_a_plugin_that_hangs_at_import(tmp_path: Path, at_import: str, expected: str) -> None:
    bank = plugin_bank(tmp_path, at_import=at_import)
    run = quiz("check", bank.name, "--time-limit", "1", cwd=tmp_path)
    assert run.code == 1
    assert re.search(expected, run.stdout, re.MULTILINE), run.stdout + run.stderr
    assert run.seconds < 30


def test_check_goes_on_after_a_stopped_item(tmp_path: Path) -> None:
    bank = plugin_bank(tmp_path, in_generation="while t == 4 and rng.integers(0, 2) >= 0:\n        pass")
    text = bank.read_text(encoding="utf-8")
    bank.write_text(
        text + text[text.index("  - id:") :].replace("id: entries", "id: entries-ok").replace("t: 4", "t: 5"),
        encoding="utf-8",
    )
    run = quiz("check", bank.name, "--time-limit", "1", "--variants", "2", "--json", cwd=tmp_path)
    assert run.code == 1
    report = json.loads(run.stdout)
    stuck, fine = report["items"]
    assert stuck["failures"][0]["check"] == "time"
    assert fine["ok"] is True


def test_a_plugins_key_spelt_with_an_escape_is_still_a_plugins_key(tmp_path: Path) -> None:
    # "\u0070lugins" hides the key from grep, not from quiz: the parsed key decides, everywhere.
    bank = plugin_bank(tmp_path / "banks")
    text = bank.read_text(encoding="utf-8").replace("plugins:", '"\\u0070lugins":')
    bank.write_text(text, encoding="utf-8")
    env = {"QUIZ_HOME": str(tmp_path / "home")}
    listed = quiz("list", bank.name, cwd=bank.parent, env=env)
    assert listed.code == 0, listed.stderr
    assert not (bank.parent / "imported").exists()
    shown = quiz("show", bank.name, "entries", "--seed", "1", cwd=bank.parent, env=env)
    assert shown.code == 0, shown.stderr
    assert "runs Python code from its plugins: gens.py" in shown.stderr
    cache = tmp_path / "home" / "cache" / "banks"
    assert not cache.exists() or not list(cache.glob("*.pickle"))  # a bank with plugins is never cached
