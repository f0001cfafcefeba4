"""Tolerance edges decided exactly: the same typed text gets the same grade on every CPU, BLAS kernel
and numpy build. A corpus of values typed at, just inside and just beyond the stated edge of every
numeric item (`tests.engine.tolerance_corpus`) is graded in child processes under the default
settings, OpenBLAS's oldest x86-64 kernels and numpy with its wide SIMD code paths disabled."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine.answers.tolerance import Tolerance
from tests.engine.tolerance_corpus import build

ROOT = Path(__file__).resolve().parents[2]


def _wide_simd() -> str:
    """numpy's dispatched SIMD features that this machine runs (to disable with NPY_DISABLE_CPU_FEATURES)."""
    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):  # numpy 2, numpy 1
        try:
            umath = importlib.import_module(name)
            break
        except ImportError:
            continue
    else:
        return ""
    dispatch: list[str] = list(getattr(umath, "__cpu_dispatch__", []))
    enabled: dict[str, bool] = dict(getattr(umath, "__cpu_features__", {}))
    return " ".join(f for f in dispatch if enabled.get(f))


SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "openblas-prescott": {"OPENBLAS_CORETYPE": "Prescott"},
    "numpy-no-wide-simd": {"NPY_DISABLE_CPU_FEATURES": _wide_simd()},
}


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"}}
    return {**env, **extra}


def _graded_all(corpus: Path) -> dict[str, dict[str, Any]]:
    """The corpus graded in one child process per setting (run side by side)."""
    children = {
        name: subprocess.Popen(
            [sys.executable, "-m", "tests.engine.tolerance_corpus", "grade", str(corpus)],
            cwd=ROOT,
            env=_env(extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, extra in SETTINGS.items()
    }
    graded: dict[str, dict[str, Any]] = {}
    for name, child in children.items():
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        graded[name] = json.loads(out)
    return graded


def test_every_typed_value_grades_alike_under_every_numpy_and_blas_setting(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    responses = build()
    corpus.write_text(json.dumps(responses), encoding="utf-8")
    assert len(responses) > 10_000
    assert any(r[1] == "additive-context" and r[2] == 9 and r[4] == "1.5749" for r in responses)
    grades = _graded_all(corpus)
    digests = {name: g["digest"] for name, g in grades.items()}
    assert len(set(digests.values())) == 1, digests
    counts = grades["default"]["counts"]
    for side in "+-":
        # |x − t| ≤ 0.51 units of the last place asked for, both ends included, decided exactly.
        assert set(counts[f"edge{side}"]) == {"correct"}, counts
        assert set(counts[f"within{side}"]) == {"correct"}, counts
        assert "correct" not in counts[f"beyond{side}"], counts


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_issue_s_edge_value_is_right_under_every_setting(setting: str) -> None:
    command = ["answer", "week1", "additive-context", "--seed", "9", "1.5749", "--json"]
    result = subprocess.run(
        [sys.executable, "-c", "from attnquiz.main import main; main()", *command],
        cwd=ROOT,
        env=_env(SETTINGS[setting]),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "correct"


@pytest.mark.parametrize(
    ("tolerance", "target", "value", "right"),
    [
        # a target a float holds only approximately, typed exactly at the edge and just beyond it
        (Tolerance.decimals(2), 1.58, 1.5749, True),
        (Tolerance.decimals(2), 1.5800000000000003, 1.5749, True),
        (Tolerance.decimals(2), 1.5799999999999998, 1.5749, True),
        (Tolerance.decimals(2), 1.5799999999999998, 1.5851, True),
        (Tolerance.decimals(2), 1.58, 1.57489999, False),
        (Tolerance.decimals(2), 1.58, 1.58510001, False),
        (Tolerance.decimals(0), 0.1 + 0.2, -0.21, True),
        # sigfigs at a power of ten: the width is the same whichever side of 0.001 the float lands
        (Tolerance.sigfigs(2), 0.0009999999999999998, 0.000949, True),
        (Tolerance.sigfigs(2), 0.0010000000000000002, 0.000949, True),
        (Tolerance.sigfigs(2), 0.0010000000000000002, 0.00104, True),
        (Tolerance.sigfigs(2), 0.0010000000000000002, 0.001052, False),
        (Tolerance.sigfigs(2), 9.54e-7, 9.489e-7, True),
        (Tolerance.sigfigs(2), 9.54e-7, 9.4889e-7, False),
        # relative, at its edge, and huge and tiny magnitudes
        (Tolerance.relative(1e-3), 1000.0000000000001, 1001.0, True),
        (Tolerance.relative(1e-3), 999.9999999999999, 998.999, False),
        (Tolerance.decimals(2), 1e300, 1e300, True),
        (Tolerance.decimals(2), 1e300, 1.0000000000000002e300, False),
        (Tolerance.sigfigs(3), 5e-324, 5e-324, True),
        (Tolerance.relative(0.0, 1e-9), 0.0, 1e-9, True),  # an absolute tolerance only
        (Tolerance.relative(0.0, 1e-9), 0.0, 1.1e-9, False),
        (Tolerance.relative(0.0, 0.0), 1.0, 1.0000000000000002, False),
        (Tolerance.decimals(-3), 12345.0, 12000.0, True),  # to thousands
        (Tolerance.decimals(30), 1 / 3, 0.3333333333333333, True),
        (Tolerance.decimals(2), 1.58, float("nan"), False),
        (Tolerance.decimals(2), float("inf"), float("inf"), False),
    ],
)
def test_edges_are_decided_in_decimal(tolerance: Tolerance, target: float, value: float, right: bool) -> None:
    assert tolerance.accepts(target, value) is right
