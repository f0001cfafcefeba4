"""Packaging: the wheel installs one import package, attnquiz, built from cli/, engine/ and questions/.

The repository keeps the folders the user fixed; pyproject.toml maps them into one package. These
tests build the wheel from the checkout, check its top-level names and that every module and bank
of the folders is in it under its installed name, and run the command from the wheel alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"cli": "attnquiz", "engine": "attnquiz/engine", "questions": "attnquiz/questions"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # The venv's own setuptools (a test extra) builds it: no download, as in an offline checkout.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("attnquiz-*.whl")
    return built


def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_installs_exactly_one_top_level_package(wheel: Path) -> None:
    top = {name.split("/", 1)[0] for name in names(wheel)}
    dist_info = {name for name in top if name.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert top - dist_info == {"attnquiz"}
    with zipfile.ZipFile(wheel) as archive:
        record = archive.read(f"{dist_info.pop()}/RECORD").decode()
    assert {line.split("/", 1)[0] for line in record.splitlines()} - {"attnquiz"} == {
        next(name for name in top if name.endswith(".dist-info"))
    }


def test_every_module_and_bank_of_the_folders_is_in_the_wheel(wheel: Path) -> None:
    expected = set()
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            # .html, .css and .js: the templates and static files of `quiz serve` (attnquiz/web).
            if path.suffix in {".py", ".yaml", ".typed", ".html", ".css", ".js"}:
                expected.add(f"{package}/{path.relative_to(ROOT / folder).as_posix()}")
    missing = expected - set(names(wheel))
    assert not missing, f"not in the wheel (add the subpackage to pyproject.toml): {sorted(missing)}"


def test_the_command_runs_from_the_wheel_alone(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    # Run from an empty folder with only the unpacked wheel ahead of the venv's dependencies, so
    # neither the checkout's folders nor the editable install can stand in for it.
    env = {**os.environ, "PYTHONPATH": str(target), "QUIZ_NO_CACHE": "1"}
    script = (
        "import attnquiz, attnquiz.engine.bank.finding as b, sys; "
        "print(attnquiz.__file__); print(len(b.load('week1').items)); "
        "sys.argv = ['quiz', 'answer', 'week1', 'additive-score', '--original', '2*tanh(2)']; "
        "from attnquiz.main import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    where, count, *verdict = result.stdout.splitlines()
    assert Path(where).is_relative_to(target)
    assert int(count) > 40
    assert "Correct" in "\n".join(verdict)


def test_version_and_python_m(tmp_path: Path) -> None:
    from importlib.metadata import version

    for command in ([sys.executable, "-m", "attnquiz", "--version"],):
        result = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"quiz {version('attnquiz')}"


def test_a_plugin_written_for_the_old_import_names_gets_the_new_one(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text(
        '"""A plugin of quiz 0.1."""\n\nfrom engine.registry import generator\n', encoding="utf-8"
    )
    (tmp_path / "bank.yaml").write_text(
        "bank: old\ntitle: Old\nplugins: [old.py]\nitems:\n"
        "  - {id: a, source: s, topic: t, generator: old_one}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        # `quiz show` builds a variant, so it imports the plugin (`quiz list` never does).
        [sys.executable, "-m", "attnquiz", "show", str(tmp_path / "bank.yaml"), "a", "--seed", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "old.py:3: no module named 'engine': since quiz 0.2 it is 'attnquiz.engine'" in result.stderr
    assert "write `from attnquiz.engine.registry import generator`" in result.stderr
    assert "Traceback" not in result.stderr
