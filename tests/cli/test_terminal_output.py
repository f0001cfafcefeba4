"""What reaches the terminal: ASCII spellings where the output cannot encode Unicode, no control
sequences or markup from bank text, and valid UTF-8 JSON whatever came in on stdin."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from attnquiz import display
from attnquiz.terminal import ERRORS, strip_control, to_ascii
from tests.cli.test_run_piped import QUIZ, environment

HOSTILE = str(Path(__file__).resolve().parent.parent / "data" / "hostile_text" / "hostile.yaml")
ENCODINGS = {
    "ascii": {"PYTHONIOENCODING": "ascii"},
    "latin-1": {"PYTHONIOENCODING": "latin-1"},
    "cp1252": {"PYTHONIOENCODING": "cp1252"},
    "C locale": {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": ""},
}


def run(home: Path, *args: str, stdin: bytes = b"", **extra: str) -> subprocess.CompletedProcess[bytes]:
    env = environment(home, **extra)
    env = {k: v for k, v in env.items() if v != ""}
    return subprocess.run([*QUIZ, *args], input=stdin, capture_output=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize(
    ("text", "ascii"),
    [
        ("√dₖ", "sqrt(d_k)"),
        ("QKᵀ/√dₖ", "QK^T/sqrt(d_k)"),
        ("√(x + 1)", "sqrt(x + 1)"),
        ("50 × 512", "50 x 512"),
        ("a → b", "a -> b"),
        ("e² ≈ 7.39", "e^2 ~= 7.39"),
        ("10⁻³", "10^(-3)"),
        ("Wₐsₜ₋₁", "W_a s_(t-1)"),
        ("−0.5 ≤ x ≥ 1 ≠ 2", "-0.5 <= x >= 1 != 2"),
        ("α = 0.1, γᵏ", "alpha = 0.1, gamma^k"),
        ("⎡ 1  2 ⎤", "[ 1  2 ]"),
        ("✓ Correct · ✗ Wrong · – skipped", "+ Correct * x Wrong * - skipped"),
        ("████░░", "####.."),
        ("café", "cafe"),
        ("plain", "plain"),
    ],
)
def test_unicode_maths_has_an_ascii_spelling(text: str, ascii: str) -> None:
    assert to_ascii(text) == ascii
    # The same spelling as the streams' error handler gives, character by character.
    assert text.encode("ascii", ERRORS).decode("ascii") == ascii


def test_latin_1_keeps_what_it_can_encode() -> None:
    assert "50 × 512, √d, e²".encode("latin-1", ERRORS).decode("latin-1") == "50 × 512, sqrt(d), e²"


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("a\x1b]52;c;cm0gLXJmIH4=\x07b", "ab"),
        ("a\x1b]52;c;cm0gLXJmIH4=\x1b\\b", "ab"),
        ("\x1b[2J\x1b[Hhome", "home"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("over\rwrite", "overwrite"),
        ("bell\x07 back\x08space", "bell backspace"),
        ("\u202eevil", "evil"),
        ("\x9b2Jc1", "c1"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("√dₖ [bold]", "√dₖ [bold]"),
    ],
)
def test_control_sequences_are_stripped_whole(text: str, clean: str) -> None:
    assert strip_control(text) == clean


def test_the_console_prints_markup_literally_and_no_escape_sequences() -> None:
    import io

    out = io.StringIO()
    console = display.TerminalConsole(file=out, width=200, force_terminal=False)
    console.print("[bold]x[/] [link=https://example.com]y[/link] \x1b]52;c;QQ==\x1b\\z :smile:")
    assert out.getvalue() == "[bold]x[/] [link=https://example.com]y[/link] z :smile:\n"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_every_command_runs_under_an_output_that_cannot_encode_unicode(tmp_path: Path, encoding: str) -> None:
    extra = ENCODINGS[encoding]
    codec = "ascii" if encoding in {"ascii", "C locale"} else encoding
    commands: list[tuple[tuple[str, ...], bytes]] = [
        (("show", "week1", "attention-shapes", "--seed", "8", "--solution"), b""),
        (("show", "week1", "additive-score", "--original", "--solution"), b""),
        (("answer", "week1", "additive-score", "--original", "1.76"), b""),
        (("answer", "week1", "sdpa-two-tokens", "--seed", "3", "[[1, 2], [3, 4]]"), b""),
        (("run", "week1", "--seed", "11", "--count", "6"), b"1\n?\n[1, 2]\ns\nw\n2\n3\n"),
        (("run", "week1", "--exam", "--seed", "573201", "--count", "3"), b"a,c\nl\nb\n(b)\nsubmit\n"),
        (("stats",), b""),
        (("list", "week1"), b""),
        (("list",), b""),
        (("check", str(Path(HOSTILE).parent.parent / "practice" / "demo.yaml")), b""),
        (
            (
                "export",
                "week1",
                "--students",
                "2",
                "--seed",
                "1",
                "--format",
                "md",
                "-o",
                str(tmp_path / "md"),
            ),
            b"",
        ),
        (
            (
                "export",
                "week1",
                "--variants",
                "2",
                "--seed",
                "1",
                "--format",
                "moodle",
                "-o",
                str(tmp_path / "m.xml"),
            ),
            b"",
        ),
    ]
    if encoding != "ascii":
        # The other encodings go through the same handler: the commands with the most maths suffice.
        commands = [c for c in commands if c[0][0] in {"show", "answer", "run", "stats"}][::2]
    for args, stdin in commands:
        result = run(tmp_path, *args, stdin=stdin, COLUMNS="60", **extra)
        assert result.returncode == 0, (args, result.stderr.decode("utf-8", "replace"))
        for stream in (result.stdout, result.stderr):
            text = stream.decode(codec)  # raises if the output is not in the stream's encoding
            assert "Traceback" not in text, (args, text)
    shown = run(tmp_path, "show", "week1", "attention-shapes", "--seed", "8", stdin=b"", **extra)
    text = shown.stdout.decode(codec)
    if codec == "ascii":
        assert "d_k" in text


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_json_stays_exact_under_a_non_unicode_output(tmp_path: Path, encoding: str) -> None:
    args = ("show", "week1", "attention-shapes", "--seed", "8", "--json")
    utf8 = json.loads(run(tmp_path, *args).stdout.decode("utf-8"))
    other = run(tmp_path, *args, PYTHONIOENCODING=encoding)
    assert other.stdout.isascii()
    assert json.loads(other.stdout) == utf8


def test_invalid_utf8_on_stdin_goes_out_as_valid_utf8_json(tmp_path: Path) -> None:
    piped = b"\xff\xfe1.5\x80\n" + b"q\n"
    result = run(
        tmp_path, "run", "week1", "--seed", "3", "--count", "1", "--json", "--no-history", stdin=piped
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("utf-8").splitlines()  # strict: raises on invalid UTF-8
    grades = [json.loads(line) for line in lines if '"grade"' in line]
    assert grades[0]["status"] == "invalid"
    assert "\ufffd" in grades[0]["response"]
    answered = run(tmp_path, "answer", "week1", "additive-score", "--original", "--json", stdin=b"1.7\xff6\n")
    data = json.loads(answered.stdout.decode("utf-8"))
    assert data["status"] == "invalid"
    # The same in the C locale, where Python would otherwise pass the bytes through as surrogates.
    c_locale = run(
        tmp_path,
        "run",
        "week1",
        "--seed",
        "3",
        "--count",
        "1",
        "--json",
        "--no-history",
        stdin=piped,
        LC_ALL="C",
        PYTHONUTF8="1",
    )
    for line in c_locale.stdout.decode("utf-8").splitlines():
        json.loads(line)


def test_bank_text_reaches_the_terminal_without_escape_sequences_or_markup(tmp_path: Path) -> None:
    shown = run(tmp_path, "show", HOSTILE, "loud", "--seed", "1", "--solution")
    session = run(tmp_path, "run", HOSTILE, "--seed", "1", "--count", "1", stdin=b"?\n\x1b]52;c;QQ==\x07 3\n")
    for result in (shown, session):
        assert result.returncode == 0, result.stderr
        for stream in (result.stdout, result.stderr):
            assert b"\x1b" not in stream
            assert b"\x07" not in stream
            assert b"\r" not in stream
            assert "\u202e".encode() not in stream
    text = session.stdout.decode()
    assert "Hostile [bold]text[/]" in text
    assert "[link=https://example.com]source[/link]" in text
    assert "a hint [/]" in text


@pytest.mark.parametrize(("encoding", "columns"), [("ascii", "60"), ("utf-8", "40"), ("ascii", "40")])
def test_a_session_fits_the_width_in_what_it_prints(tmp_path: Path, encoding: str, columns: str) -> None:
    # ASCII spellings are longer than the Unicode they replace (sqrt(d_k) for √dₖ): lines are folded
    # after spelling, so none runs past the width; narrow summaries keep item names whole.
    stdin = b"?\n1\n\n[1, 2]\ns\n2\nq\n"
    result = run(
        tmp_path, "run", "week1", "--seed", "11", "--count", "5", "--exam", stdin=stdin,
        PYTHONIOENCODING=encoding, COLUMNS=columns,
    )  # fmt: skip
    exam = run(
        tmp_path, "run", "week1", "--seed", "11", "--count", "5", "--no-history", stdin=stdin,
        PYTHONIOENCODING=encoding, COLUMNS=columns,
    )  # fmt: skip
    for done in (result, exam):
        assert done.returncode == 0, done.stderr
        text = done.stdout.decode(encoding)
        long_words = [w for w in text.split() if len(w) > int(columns)]  # paths may not fit at all
        too_wide = [line for line in text.splitlines() if len(line) > int(columns) and not long_words]
        assert not too_wide, too_wide
    summary = exam.stdout.decode(encoding).split("Summary")[-1]
    for line in summary.splitlines():
        if line[:1].isdigit() and ". " in line:
            assert line.split(". ", 1)[1].strip().replace("-", "").isalnum(), line
