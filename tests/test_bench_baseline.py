"""The bench's start-up ratios divide by an honest baseline: a slowed bare interpreter stops the bench."""

from __future__ import annotations

from pathlib import Path

import pytest

import bench.run
from bench.install import sources_digest
from bench.run import BaselineError, Run, _Startup, check_baseline


def startup(cpu_seconds: list[float]) -> _Startup:
    runs = [Run(wall=cpu * 3, cpu=cpu, peak_mb=20.0, stdout="") for cpu in cpu_seconds]
    return _Startup("python -c pass", ["python", "-c", "pass"], {}, runs=runs)


@pytest.mark.parametrize(
    ("bare", "plain", "refused"),
    [
        ([0.011, 0.012, 0.011], [0.009, 0.009, 0.010], False),  # a normal install's venv: 1.2×
        ([0.018, 0.018, 0.018], [0.009, 0.009, 0.009], False),  # exactly 2×: still a bare interpreter
        ([0.023, 0.024, 0.022], [0.009, 0.009, 0.009], True),  # an editable install's finder: 2.5×
        ([0.045, 0.044, 0.046], [0.012, 0.012, 0.012], True),  # a wrapper around the baseline
    ],
)
def test_a_slowed_baseline_is_refused(bare: list[float], plain: list[float], refused: bool) -> None:
    if refused:
        with pytest.raises(BaselineError, match="would be flattered"):
            check_baseline(startup(bare), startup(plain))
    else:
        check_baseline(startup(bare), startup(plain))


def test_the_bench_stops_with_a_message_when_the_baseline_is_slowed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def slowed(repeats: int, home: Path) -> list[bench.run.Figure]:
        raise BaselineError("the start-up baseline takes 2.5× a plain python")

    monkeypatch.setattr(bench.run, "startup_figures", slowed)
    assert bench.run.main(["--only", "startup", "--quick"]) == 2
    captured = capsys.readouterr()
    assert "refusing to print start-up ratios" in captured.err
    assert "× bare python" not in captured.out


def test_the_installed_venv_is_named_by_the_sources(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "README.md"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    for folder in ("cli", "engine", "questions"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text("x = 1\n", encoding="utf-8")
    before = sources_digest(tmp_path)
    (tmp_path / "engine" / "__pycache__").mkdir()
    (tmp_path / "engine" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert sources_digest(tmp_path) == before  # bytecode is not a source
    (tmp_path / "engine" / "a.py").write_text("x = 2\n", encoding="utf-8")
    assert sources_digest(tmp_path) != before
