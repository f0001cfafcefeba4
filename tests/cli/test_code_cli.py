"""Code questions at the command line, as a student uses them: `quiz show` prints the task and the stub,
`quiz answer --file` grades a .py file, and `quiz run` opens the editor on the stub (in a
pseudo-terminal) or reads a file named at the prompt (from a pipe), keeping the code beside the history."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
RIGHT = """import numpy as np

def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True) @ V
"""
OVER_QUERIES = RIGHT.replace("axis=-1", "axis=0")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_")}
    env.update(QUIZ_HOME=str(home), NO_COLOR="1")
    return env


def _quiz(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QUIZ, *args], input=stdin, capture_output=True, text=True, env=_env(home), timeout=300, check=False
    )


def test_show_prints_the_task_and_the_stub(tmp_path: Path) -> None:
    done = _quiz(tmp_path, "show", "code", "attention", "--seed", "4")
    assert done.returncode == 0, done.stderr
    assert "def attention(Q, K, V):" in done.stdout
    assert "Start from this stub" in done.stdout


def test_answer_file_right_and_wrong(tmp_path: Path) -> None:
    right, wrong = tmp_path / "right.py", tmp_path / "wrong.py"
    right.write_text(RIGHT)
    wrong.write_text(OVER_QUERIES)
    done = _quiz(tmp_path, "answer", "code", "attention", "--seed", "4", "--file", str(right), "--json")
    assert done.returncode == 0, done.stderr
    assert '"status": "correct"' in done.stdout
    done = _quiz(tmp_path, "answer", "code", "attention", "--seed", "4", "--file", str(wrong))
    assert "mistake: softmax-over-queries" in done.stdout
    assert "Softmax runs over the keys for each query" in done.stdout


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.py", None, "cannot read"),
        ("folder", "dir", "is a folder"),
        ("binary.py", b"\xff\xfe\x00bad", "not UTF-8"),
    ],
)
def test_answer_file_that_cannot_be_read_is_one_clear_line(
    tmp_path: Path, name: str, content: bytes | str | None, message: str
) -> None:
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    done = _quiz(tmp_path, "answer", "code", "attention", "--seed", "4", "--file", str(path))
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_answer_code_piped_on_stdin(tmp_path: Path) -> None:
    done = _quiz(tmp_path, "answer", "code", "attention", "--seed", "4", stdin=RIGHT)
    assert "Correct" in done.stdout, done.stdout + done.stderr


def test_run_reads_a_file_named_at_the_prompt_and_keeps_it(tmp_path: Path) -> None:
    wrong = tmp_path / "mine.py"
    wrong.write_text(OVER_QUERIES)
    done = _quiz(tmp_path, "run", "code", "--item", "attention", "--seed", "4", stdin=f"{wrong}\nq\n")
    assert "mistake: softmax-over-queries" in done.stdout, done.stdout + done.stderr
    kept = list((tmp_path / "code").glob("code-attention-*.py"))
    assert len(kept) == 1
    assert kept[0].read_text() == OVER_QUERIES
    db = sqlite3.connect(tmp_path / "history.sqlite3")
    rows = db.execute("SELECT item, status FROM attempts").fetchall()
    db.close()
    assert rows == [("attention", "wrong")]


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
def test_run_opens_the_editor_on_the_stub(tmp_path: Path) -> None:
    source = tmp_path / "answer.py"
    source.write_text(RIGHT)
    editor = tmp_path / "editor.py"
    # The "editor" checks it was given the stub, then writes the student's code into the file.
    editor.write_text(
        "import sys, shutil\n"
        "path = sys.argv[1]\n"
        "assert 'def attention(Q, K, V):' in open(path).read()\n"
        f"shutil.copy({str(source)!r}, path)\n"
    )
    env = _env(tmp_path)
    env.update(EDITOR=f"{sys.executable} {editor}", TERM="xterm-256color")
    child = pexpect.spawn(
        sys.executable,
        [*QUIZ[1:], "run", "code", "--item", "attention", "--seed", "4"],
        env=env,
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 100),
    )
    child.expect("Press Enter to write the function in your editor")
    child.expect("› ")
    child.sendline("")
    child.expect("Correct")
    child.expect("› ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    kept = list((tmp_path / "code").glob("code-attention-*.py"))
    assert [p.read_text() for p in kept] == [RIGHT]


def test_an_exam_takes_a_code_file_and_grades_it_at_submission(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text(RIGHT.replace("Q @ K.T", "Q @ K"))
    done = _quiz(
        tmp_path, "run", "code", "--item", "attention", "--seed", "4", "--exam", stdin=f"{mine}\nsubmit\n"
    )
    assert "no-transpose" in done.stdout, done.stdout + done.stderr
    assert "Score 0 / 1" in done.stdout


def test_list_marks_the_pytorch_item_where_pytorch_is_missing_and_run_says_why(tmp_path: Path) -> None:
    # PyTorch made to look missing, whether or not it is installed here.
    missing = "import attnquiz.engine.extras as e; e.installed = lambda p: False; "

    def quiz(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", missing + "from attnquiz.main import main; main()", *args],
            input="q\n",
            capture_output=True,
            text=True,
            env=_env(tmp_path),
            timeout=300,
            check=False,
        )

    done = quiz("list", "code")
    assert done.returncode == 0, done.stderr
    assert "self-attention-torch" in done.stdout
    assert "not offered by quiz run: needs PyTorch" in " ".join(done.stdout.split())
    done = quiz("run", "code", "--item", "self-attention-torch", "--seed", "4")
    assert done.returncode != 0
    assert "pip install 'attnquiz[torch]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_answer_file_with_the_pytorch_class(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install 'attnquiz[torch]'")
    from attnquiz.engine.code.torch_attention import SOLUTION

    right, wrong = tmp_path / "right.py", tmp_path / "wrong.py"
    right.write_text(SOLUTION)
    wrong.write_text(SOLUTION.replace(", dim=-1", ""))
    item = ("code", "self-attention-torch", "--seed", "4")
    done = _quiz(tmp_path, "answer", *item, "--file", str(right), "--json")
    assert done.returncode == 0, done.stderr
    assert '"status": "correct"' in done.stdout
    done = _quiz(tmp_path, "answer", *item, "--file", str(wrong))
    assert "mistake: softmax-over-batch" in done.stdout
